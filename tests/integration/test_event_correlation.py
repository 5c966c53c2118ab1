"""Event correlation on a real apiserver: repeats become one Event with a count (written
as rarely as client-go writes it), and many similar messages about one object are
combined (client-go's core/v1 correlator)."""

from __future__ import annotations

from typing import Any

from kuberay.kube import Client
from kuberay.reconcile import CORE_V1, EVENTS_V1, EventRecorder
from tests.helpers import eventually
from tests.integration.event_writes import watch_event_writes


def cm(name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}


async def test_repeats_are_one_event_with_a_count_on_both_apis(
    kclient: Client, namespace: str
) -> None:
    target = await kclient.create(cm("evt", namespace))
    for api in (EVENTS_V1, CORE_V1):
        recorder = EventRecorder(kclient, f"ctl-{api.replace('/', '-')}", api=api)
        for _ in range(5):
            recorder.event(target, "Warning", "Unhealthy", "head is not ready")
        await recorder.flush()
        await recorder.close()
    events, _ = await kclient.list_all("v1", "Event", namespace)
    assert len(events) == 2
    by_component = {e["reportingComponent"]: e for e in events}
    core = by_component["ctl-v1"]
    assert (core["count"], core["message"]) == (5, "head is not ready")
    new, _ = await kclient.list_all("events.k8s.io/v1", "Event", namespace)
    series = {e["reportingController"]: e.get("series") for e in new}
    assert series["ctl-events.k8s.io-v1"]["count"] == 5


async def test_many_similar_messages_are_combined(kclient: Client, namespace: str) -> None:
    target = await kclient.create(cm("evt", namespace))
    recorder = EventRecorder(kclient, "ctl", api=CORE_V1)
    for i in range(15):
        recorder.event(target, "Warning", "FailedCreate", f"could not create pod w-{i}")
    await recorder.flush()
    await recorder.close()
    events, _ = await kclient.list_all("v1", "Event", namespace)
    combined = [e for e in events if e["message"].startswith("(combined from similar events)")]
    assert len(events) == 10  # nine distinct ones and the combined one
    assert len(combined) == 1
    assert combined[0]["count"] == 6
    assert combined[0]["message"].endswith("could not create pod w-14")


async def test_a_repeated_event_is_written_twice_then_once_per_refresh(
    kclient: Client, namespace: str
) -> None:
    """client-go's events.k8s.io series: 100 occurrences are one create and one PATCH
    (``series.count`` 2); the rest is counted in the recorder and written on shutdown
    (and by the refresh loop, every 30 minutes) -- not per occurrence."""
    target = await kclient.create(cm("evt", namespace))
    async with watch_event_writes(kclient, namespace) as writes:
        recorder = EventRecorder(kclient, "ctl")
        for _ in range(100):
            recorder.event(target, "Warning", "Unhealthy", "head is not ready", action="Check")
        await recorder.flush()
        await eventually(lambda: len(writes.seen) >= 2, message="create and series")
        await recorder.close()
        await eventually(lambda: writes.seen[-1].count == 100, message="the count on close")
        assert [(w.type, w.count) for w in writes.seen] == [
            ("ADDED", 1),
            ("MODIFIED", 2),
            ("MODIFIED", 100),
        ]


async def test_the_series_refresh_writes_what_grew(kclient: Client, namespace: str) -> None:
    """The refresh interval (client-go's 30 minutes) is injectable: each refresh writes
    the series' new count, once."""
    target = await kclient.create(cm("evt", namespace))
    async with watch_event_writes(kclient, namespace) as writes:
        recorder = EventRecorder(kclient, "ctl2", series_refresh=0.5)
        for _ in range(10):
            recorder.event(target, "Normal", "MTLSPKIReady", "ready", action="Reconcile")
        await eventually(lambda: writes.seen and writes.seen[-1].count == 10, message="refresh")
        for _ in range(5):
            recorder.event(target, "Normal", "MTLSPKIReady", "ready", action="Reconcile")
        await eventually(lambda: writes.seen[-1].count == 15, message="second refresh")
        await recorder.close()
        assert [w.count for w in writes.seen] == [1, 2, 10, 15]
        (name,) = {w.name for w in writes.seen}
        event = await kclient.get("events.k8s.io/v1", "Event", name, namespace)
        assert event["series"]["count"] == 15 and event["note"] == "ready"
