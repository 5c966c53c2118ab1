"""The node event forwarder's decisions about one Node Event: filter, reason, note, when it
happened and how often (KubeRay's formats and limits)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from kuberay.controllers.config import NodeEventFilter
from kuberay.controllers.nodeevents.forward import (
    forwardable,
    forwarded_note,
    forwarded_reason,
    last_observed,
    occurrences,
)


def event(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "involvedObject": {"kind": "Node", "name": "node-1"},
        "type": "Warning",
        "reason": "XIDError",
        "source": {"component": "node-problem-detector"},
        "message": "Caught XID error, XID=79",
    }
    return base | fields


@pytest.mark.parametrize(
    ("only", "fields", "passes"),
    [
        (NodeEventFilter(), {}, True),  # empty sets allow everything
        (NodeEventFilter(), {"type": "Normal"}, True),
        (NodeEventFilter(), {"involvedObject": {"kind": "Pod", "name": "p"}}, False),
        (NodeEventFilter(types=frozenset({"Normal"})), {}, False),
        (NodeEventFilter(reasons=frozenset({"KernelDeadlock"})), {}, False),
        (NodeEventFilter(sources=frozenset({"node-problem-detector"})), {}, True),
        (
            NodeEventFilter(sources=frozenset({"gpu-plugin"})),
            {"source": {}, "reportingComponent": "gpu-plugin"},
            True,
        ),
        (NodeEventFilter(sources=frozenset({"gpu-plugin"})), {}, False),
    ],
)
def test_filter(only: NodeEventFilter, fields: dict[str, Any], passes: bool) -> None:
    assert forwardable(event(**fields), only) is passes


def test_reason_and_note_formats_and_limits() -> None:
    assert forwarded_reason(event()) == "XIDError/node-problem-detector"
    nameless = event(reason="", source={}, reportingComponent="kubelet")
    assert forwarded_reason(nameless) == "NodeEvent/kubelet"
    assert forwarded_note("node-1", nameless) == (
        'Node event observed on Node "node-1" (reason: NodeEvent, source: kubelet): '
        "Caught XID error, XID=79"
    )
    assert forwarded_reason(event(source={}, reportingComponent="")) == "XIDError"
    assert len(forwarded_reason(event(reason="R" * 200))) == 128
    long_note = forwarded_note("node-1", event(message="é" * 2000))
    assert len(long_note.encode()) <= 1024 and long_note.endswith("é...")


def test_when_and_how_often() -> None:
    legacy = event(lastTimestamp="2026-01-01T00:00:05Z", count=3)
    assert last_observed(legacy) == dt.datetime(2026, 1, 1, 0, 0, 5, tzinfo=dt.UTC)
    assert occurrences(legacy) == 3
    series = event(
        eventTime="2026-01-01T00:00:01.000000Z",
        series={"count": 7, "lastObservedTime": "2026-01-01T00:00:09.000000Z"},
    )
    assert last_observed(series) == dt.datetime(2026, 1, 1, 0, 0, 9, tzinfo=dt.UTC)
    assert occurrences(series) == 7
    bare = event(metadata={"creationTimestamp": "2026-01-01T00:00:00Z"})
    assert last_observed(bare) == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert occurrences(bare) == 1
