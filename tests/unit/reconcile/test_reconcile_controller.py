"""Predicates, handlers, expectations and the controller's outcome handling."""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from typing import Any

import pytest
import structlog

from kuberay.informers import DeletedFinalStateUnknown
from kuberay.kube import ApiError, TransportError
from kuberay.logging import configure_logging
from kuberay.reconcile import (
    Controller,
    Expectations,
    GenerationChangedPredicate,
    LabelChangedPredicate,
    Request,
    RequeueError,
    Result,
    TerminalError,
    and_,
    enqueue_for_object,
    enqueue_for_owner,
    not_,
    or_,
    predicate_funcs,
)
from kuberay.workqueue import ItemExponentialFailureRateLimiter


def obj(
    name: str,
    ns: str = "ns",
    gen: int = 1,
    labels: dict[str, str] | None = None,
    owners: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "generation": gen,
        "labels": labels or {},
    }
    if owners is not None:
        meta["ownerReferences"] = owners
    return {"metadata": meta}


class ListQueue:
    def __init__(self) -> None:
        self.items: list[Request] = []

    def add(self, item: Request) -> None:
        self.items.append(item)


def test_generation_and_label_predicates() -> None:
    assert not GenerationChangedPredicate.update(obj("a", gen=1), obj("a", gen=1))
    assert GenerationChangedPredicate.update(obj("a", gen=1), obj("a", gen=2))
    either = or_(GenerationChangedPredicate, LabelChangedPredicate)
    assert either.update(obj("a"), obj("a", labels={"x": "y"}))
    both = and_(GenerationChangedPredicate, LabelChangedPredicate)
    assert not both.update(obj("a"), obj("a", labels={"x": "y"}))
    assert not_(GenerationChangedPredicate).update(obj("a"), obj("a"))
    only_b = predicate_funcs(lambda o: o["metadata"]["name"] == "b")
    assert only_b.create(obj("b")) and not only_b.create(obj("a"))


def test_enqueue_for_object_filters_and_handles_tombstones() -> None:
    q = ListQueue()
    h = enqueue_for_object(q, [GenerationChangedPredicate])
    h.on_add(obj("a"), True)
    h.on_update(obj("a"), obj("a"))  # resync / status-only: filtered
    h.on_update(obj("a"), obj("a", gen=2))
    h.on_delete(DeletedFinalStateUnknown("ns/a", obj("a")))
    assert q.items == [Request("ns", "a")] * 3


def test_enqueue_for_owner_matches_group_kind_and_controller_only() -> None:
    q = ListQueue()
    h = enqueue_for_owner(q, "ray.io/v1", "RayCluster")
    owners = [
        {"apiVersion": "ray.io/v1alpha1", "kind": "RayCluster", "name": "rc", "controller": True},
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "not-controller"},
        {"apiVersion": "apps/v1", "kind": "RayCluster", "name": "other-group", "controller": True},
    ]
    h.on_add(obj("pod", owners=owners), False)
    assert q.items == [Request("ns", "rc")]  # version ignored, group+kind+controller match
    q.items.clear()
    old = obj(
        "pod",
        owners=[{"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "x", "controller": True}],
    )
    new = obj(
        "pod",
        owners=[{"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "y", "controller": True}],
    )
    h.on_update(old, new)
    assert q.items == [Request("ns", "x"), Request("ns", "y")]


def test_expectations_lifecycle_and_expiry() -> None:
    now = [0.0]
    e = Expectations(ttl=300, now=lambda: now[0])
    assert e.satisfied("ns/rc")
    e.expect_creations("ns/rc", ["p1", "p2"])
    e.expect_deletions("ns/rc", ["p0"])
    assert not e.satisfied("ns/rc")
    e.creation_observed("ns/rc", "p1")
    e.creation_observed("ns/rc", "p2")
    assert not e.satisfied("ns/rc")
    assert e.pending("ns/rc") == (frozenset(), frozenset({"p0"}))
    e.deletion_observed("ns/rc", "p0")
    assert e.satisfied("ns/rc")
    e.expect_creations("ns/rc", ["p3"])
    now[0] = 301.0
    assert e.satisfied("ns/rc")  # expired: a lost event cannot wedge the owner
    e.expect_creations("ns/rc", ["p4"])
    e.lower("ns/rc", "p4")  # the create failed
    assert e.satisfied("ns/rc")


class Scripted:
    def __init__(self, outcomes: list[Any]) -> None:
        self.outcomes = outcomes
        self.log = structlog.get_logger("test")

    async def reconcile(self, request: Request) -> Result:
        self.log.info("reconciling")
        out = self.outcomes.pop(0)
        if isinstance(out, Exception):
            raise out
        return out


async def _controller(outcomes: list[Any]) -> Controller:
    ctrl = Controller(
        "unit", Scripted(outcomes), rate_limiter=ItemExponentialFailureRateLimiter(1, 100)
    )
    ctrl.queue = ctrl._make_queue()
    return ctrl


@pytest.mark.parametrize(
    ("outcome", "requeues", "waiting"),
    [
        (Result(), 0, 0),  # success: backoff forgotten, nothing scheduled
        (Result(requeue_after=5), 0, 1),  # forgotten, then scheduled after 5 s
        (Result(requeue=True), 2, 1),  # rate-limited requeue
        (RuntimeError("boom"), 2, 1),  # error: rate-limited requeue
        (TerminalError("bad spec"), 1, 0),  # terminal: neither forgotten nor requeued
    ],
)
async def test_outcomes(outcome: Any, requeues: int, waiting: int) -> None:
    ctrl = await _controller([outcome])
    assert ctrl.queue is not None
    req = Request("ns", "a")
    ctrl.queue.rate_limiter.when(req)  # one earlier failure on record
    await ctrl.process(req)
    assert ctrl.queue.num_requeues(req) == requeues
    assert ctrl.queue.num_waiting() == waiting
    ctrl.queue.shutdown()
    await asyncio.sleep(0)


async def test_reconcile_logs_carry_identity() -> None:
    buf = io.StringIO()
    configure_logging("json", stream=buf, keys="structlog")
    try:
        ctrl = await _controller([RuntimeError("boom")])
        await ctrl.process(Request("ns1", "obj1"))
        assert ctrl.queue is not None
        ctrl.queue.shutdown()
    finally:
        configure_logging("console")
    lines = [json.loads(line) for line in buf.getvalue().splitlines() if line.startswith("{")]
    assert len(lines) >= 2
    for line in lines:
        assert line["controller"] == "unit"
        assert line["namespace"] == "ns1"
        assert line["name"] == "obj1"
        assert uuid.UUID(line["reconcile_id"])
    assert lines[0]["reconcile_id"] == lines[-1]["reconcile_id"]
    assert any(line["event"].startswith("reconcile failed") for line in lines)


def test_expectations_observe_against_cache() -> None:
    e = Expectations(ttl=30)
    e.expect_creations("k", ["a", "b"])
    e.expect_deletions("k", ["old"])
    cache = {"a", "old"}
    e.observe("k", lambda n: n in cache)
    assert e.pending("k") == (frozenset({"b"}), frozenset({"old"}))
    cache = {"a", "b"}
    e.observe("k", lambda n: n in cache)
    assert e.satisfied("k")


def test_expires_in_counts_down_to_the_earliest_pending_creation() -> None:
    now = [100.0]
    e = Expectations(ttl=30, now=lambda: now[0])
    assert e.expires_in("o") is None
    e.expect_deletions("o", ["gone"])
    assert e.expires_in("o") is None  # deletions never expire: nothing to wake for
    e.expect_creations("o", ["a"])
    now[0] = 110.0
    e.expect_creations("o", ["b"])
    assert e.expires_in("o") == 20.0  # "a" expires first
    now[0] = 135.0
    assert e.expires_in("o") == 0.0


def _sample(name: str, controller: str) -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value(name, {"controller": controller}) or 0.0


@pytest.mark.parametrize(
    ("raised", "panics"),
    [
        (KeyError("spec"), 1),  # a bug in the reconciler: Go's panic
        (TypeError("NoneType is not subscriptable"), 1),
        (ApiError(500, "InternalError", "etcd timeout"), 0),  # expected failures ...
        (TransportError("connection reset"), 0),
        (RequeueError("dependency missing"), 0),
        (TerminalError("bad spec"), 0),
    ],
)
async def test_unexpected_exceptions_count_as_panics(raised: Exception, panics: int) -> None:
    name = f"panics-{type(raised).__name__}"
    ctrl = Controller(name, Scripted([raised]))
    ctrl.queue = ctrl._make_queue()
    before = {
        m: _sample(m, name)
        for m in (
            "controller_runtime_reconcile_panics_total",
            "controller_runtime_reconcile_errors_total",
        )
    }
    await ctrl.process(Request("ns", "a"))
    assert _sample("controller_runtime_reconcile_panics_total", name) == (
        before["controller_runtime_reconcile_panics_total"] + panics
    )
    # Every one of them is a reconcile error as well (a recovered panic is one).
    assert _sample("controller_runtime_reconcile_errors_total", name) == (
        before["controller_runtime_reconcile_errors_total"] + 1
    )
    if not isinstance(raised, TerminalError):
        assert ctrl.queue.num_requeues(Request("ns", "a")) == 1  # retried with backoff
    ctrl.queue.shutdown()


async def test_enqueue_from_outside_the_watch_sources() -> None:
    ctrl = Controller("unit-enqueue", Scripted([]))
    req = Request("ns", "a")
    assert not ctrl.enqueue(req)  # no queue yet: dropped, not an error
    ctrl.queue = ctrl._make_queue()
    assert ctrl.enqueue(req)
    assert ctrl.enqueue(req)  # deduplicated with the one already queued
    assert len(ctrl.queue) == 1
    assert ctrl.enqueue(Request("ns", "b"), after=30)
    assert ctrl.queue.num_waiting() == 1 and len(ctrl.queue) == 1
    item, _ = await ctrl.queue.get()
    assert item == req
    ctrl.queue.shutdown()
    assert not ctrl.enqueue(Request("ns", "c"))
    await asyncio.sleep(0)
