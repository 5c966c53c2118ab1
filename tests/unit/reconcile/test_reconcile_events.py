"""EventRecorder: repeats patch one Event, bounded like client-go's EventCorrelator."""

from __future__ import annotations

import asyncio
from typing import Any

from kuberay.kube import Client
from kuberay.reconcile import CORE_V1, EVENTS_V1, NORMAL, WARNING, EventRecorder
from tests.helpers import eventually


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class FakeEventsClient:
    """Records Event creates and patches; every write succeeds."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.patched: list[tuple[str, dict[str, Any]]] = []

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.created.append(body)
        return body

    async def patch(
        self, api_version: str, kind: str, name: str, body: dict[str, Any], namespace: str
    ) -> dict[str, Any]:
        self.patched.append((name, body))
        return body


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"}}


def recorder(client: FakeEventsClient, **kw: Any) -> EventRecorder:
    fake: Client = client  # type: ignore[assignment]
    kw.setdefault("api", CORE_V1)
    return EventRecorder(fake, "test", host="h", queue_size=100_000, **kw)


async def test_aggregation_map_stays_bounded_and_recent_keys_still_aggregate() -> None:
    client = FakeEventsClient()
    # the default bound: client-go's 4096 LRU entries; one writer, so the correlator sees
    # the events in the order recorded across objects too
    rec = recorder(client, writers=1)
    bound = 4096
    total = bound + 1000
    for i in range(total):
        rec.event(pod(f"p{i}"), NORMAL, "Created", "created")
        if i == 4000:
            # Touch p0 again just before it would be evicted: it becomes the most
            # recently used key and survives the next 1095 new keys.
            rec.event(pod("p0"), NORMAL, "Created", "created")
    await rec.flush()
    # Every Event was written once and aggregation memory stopped at the bound
    # (all within the aggregation window: age-based pruning alone keeps all 5096).
    assert len(rec.correlator.seen) == bound
    assert len(client.created) == total
    assert len(client.patched) == 1

    # A recent key still aggregates into its existing Event.
    last = f"p{total - 1}"
    rec.event(pod(last), NORMAL, "Created", "created")
    # p0 was used recently enough (LRU, not FIFO) to still aggregate.
    rec.event(pod("p0"), NORMAL, "Created", "created")
    # p1 was among the least recently used: evicted, so a new Event is created.
    rec.event(pod("p1"), NORMAL, "Created", "created")
    await rec.flush()
    assert [n.split(".")[0] for n, _ in client.patched[1:]] == [last, "p0"]
    assert client.patched[-1][1]["count"] == 3
    assert client.created[-1]["involvedObject"]["name"] == "p1"
    assert len(client.created) == total + 1
    assert len(rec.correlator.seen) == bound
    await rec.close()


async def test_a_small_bound_evicts_the_least_recently_used_key() -> None:
    client = FakeEventsClient()
    rec = recorder(client, max_aggregated=2)
    for name in ("a", "b", "a", "c", "a", "b"):
        rec.event(pod(name), NORMAL, "R", "m")
        await rec.flush()
    # a, b created; a bumped; c created (evicts b); a bumped; b created again.
    assert [b["involvedObject"]["name"] for b in client.created] == ["a", "b", "c", "b"]
    assert [n.split(".")[0] for n, _ in client.patched] == ["a", "a"]
    assert len(rec.correlator.seen) == 2
    await rec.close()


async def test_events_k8s_io_v1_body_and_series() -> None:
    client = FakeEventsClient()
    rec = recorder(client, api=EVENTS_V1)
    target = pod("p1")
    target["metadata"]["uid"] = "u1"
    rec.event(target, WARNING, "Broken", "spec.x is wrong", action="Validate")
    rec.event(target, WARNING, "Broken", "spec.x is wrong", action="Validate")
    rec.event(target, NORMAL, "Noted", "no action given")
    await rec.flush()
    first, second = client.created
    assert first["apiVersion"] == "events.k8s.io/v1"
    assert first["regarding"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "p1",
        "namespace": "ns",
        "uid": "u1",
    }
    assert (first["note"], first["type"], first["action"]) == (
        "spec.x is wrong",
        "Warning",
        "Validate",
    )
    assert (first["reportingController"], first["reportingInstance"]) == ("test", "h")
    assert first["eventTime"].endswith("Z") and "." in first["eventTime"]
    assert not {"count", "involvedObject", "message", "firstTimestamp"} & set(first)
    # The repeat is a series on the first Event.
    assert client.patched[0][0] == first["metadata"]["name"]
    assert client.patched[0][1]["series"]["count"] == 2
    # events.k8s.io requires an action: the reason stands in for a missing one.
    assert second["action"] == "Noted"


def test_unknown_events_api_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match=r"events\.k8s\.io/v1"):
        EventRecorder(FakeEventsClient(), "x", api="v1beta1")  # type: ignore[arg-type]


async def test_an_object_gets_25_events_then_the_spam_filter_drops_the_rest() -> None:
    client = FakeEventsClient()
    rec = recorder(client)
    for i in range(40):
        rec.event(pod("noisy"), WARNING, f"R{i}", f"message {i}")
    rec.event(pod("quiet"), NORMAL, "R", "m")
    await rec.flush()
    noisy = [b for b in client.created if b["involvedObject"]["name"] == "noisy"]
    assert len(noisy) == 25
    assert [b["reason"] for b in noisy] == [f"R{i}" for i in range(25)]
    assert rec.filtered == 15
    assert [b["involvedObject"]["name"] for b in client.created].count("quiet") == 1
    await rec.close()


async def test_similar_messages_are_combined_into_one_event() -> None:
    client = FakeEventsClient()
    rec = recorder(client)
    for i in range(14):
        rec.event(pod("p"), WARNING, "FailedCreate", f"pod w-{i} failed")
    await rec.flush()
    messages = [b["message"] for b in client.created]
    assert messages[:9] == [f"pod w-{i} failed" for i in range(9)]
    assert messages[9:] == ["(combined from similar events): pod w-9 failed"]
    combined_name = client.created[9]["metadata"]["name"]
    assert [n for n, _ in client.patched] == [combined_name] * 4
    assert client.patched[-1][1]["count"] == 5
    assert client.patched[-1][1]["message"] == "(combined from similar events): pod w-13 failed"
    await rec.close()


async def test_events_k8s_io_neither_drops_nor_combines_distinct_events() -> None:
    """client-go's events.k8s.io broadcaster (what KubeRay v1.7 uses) only makes
    series of repeats: 30 workers created are 30 Events, as ``kubectl describe``
    shows them for KubeRay."""
    client = FakeEventsClient()
    rec = recorder(client, api=EVENTS_V1)
    for i in range(30):
        rec.event(pod("rc"), NORMAL, "CreatedWorkerPod", f"Created worker Pod ns/w-{i}")
    rec.event(pod("rc"), NORMAL, "CreatedWorkerPod", "Created worker Pod ns/w-0")
    await rec.flush()
    assert [b["note"] for b in client.created] == [
        f"Created worker Pod ns/w-{i}" for i in range(30)
    ]
    assert client.patched == [(client.created[0]["metadata"]["name"], client.patched[0][1])]
    assert client.patched[0][1]["series"]["count"] == 2
    assert rec.filtered == 0
    await rec.close()


class SlowEventsClient(FakeEventsClient):
    """Each create takes a moment; records how many were in flight at once."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.most_in_flight = 0

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0.002)
        self.in_flight -= 1
        return await super().create(body)


async def test_writers_work_in_parallel_and_keep_each_objects_order() -> None:
    client = SlowEventsClient()
    rec = recorder(client, api=EVENTS_V1, writers=4)
    for step in range(5):
        for i in range(40):
            rec.event(pod(f"p{i}"), NORMAL, f"Step{step}", f"step {step}")
    await rec.flush()
    assert len(client.created) == 200
    # Several objects' events are written at once, never more than the writers.
    assert client.most_in_flight == 4
    for i in range(40):
        mine = [e["reason"] for e in client.created if e["regarding"]["name"] == f"p{i}"]
        assert mine == [f"Step{step}" for step in range(5)]
    await rec.close()


async def test_the_queue_bound_counts_every_writer() -> None:
    client = SlowEventsClient()
    rec = EventRecorder(client, "test", host="h", queue_size=10, writers=4)  # type: ignore[arg-type]
    for i in range(30):
        rec.event(pod(f"p{i}"), NORMAL, "Created", "created")
    assert rec.pending() == 10  # the other 20 were dropped, as client-go drops
    await rec.flush()
    assert len(client.created) == 10
    await rec.close()


class MissingEventsClient(FakeEventsClient):
    """Every patch finds its Event gone (expired)."""

    async def patch(
        self, api_version: str, kind: str, name: str, body: dict[str, Any], namespace: str
    ) -> dict[str, Any]:
        from kuberay.kube import NotFound

        raise NotFound(404, "NotFound", f"events {name!r} not found")


async def test_a_repeated_event_is_created_made_a_series_then_only_counted() -> None:
    """client-go's events.k8s.io broadcaster: the first occurrence is created, the
    second writes ``series.count`` 2, the rest count locally until the refresh."""
    client = FakeEventsClient()
    rec = recorder(client, api=EVENTS_V1)
    for _ in range(100):
        rec.event(pod("p"), WARNING, "Unhealthy", "head is not ready", action="Check")
    await rec.flush()
    (created,) = client.created
    assert "series" not in created
    assert [(n, b["series"]["count"]) for n, b in client.patched] == [
        (created["metadata"]["name"], 2)
    ]
    assert rec.written == 2
    # Shutting down writes the count the apiserver has not seen.
    await rec.close()
    assert [b["series"]["count"] for _, b in client.patched] == [2, 100]
    assert rec.written == 3


async def test_the_refresh_writes_grown_series_only() -> None:
    client = FakeEventsClient()
    rec = recorder(client, api=EVENTS_V1, series_refresh=0.05)
    for _ in range(5):
        rec.event(pod("p"), NORMAL, "MTLSPKIReady", "ready", action="Reconcile")
    rec.event(pod("q"), NORMAL, "MTLSPKIReady", "ready", action="Reconcile")  # a singleton
    rec.event(pod("r"), NORMAL, "MTLSPKIReady", "ready", action="Reconcile")
    rec.event(pod("r"), NORMAL, "MTLSPKIReady", "ready", action="Reconcile")  # series of 2

    def counts() -> list[int]:
        return [b["series"]["count"] for _, b in client.patched]

    await eventually(lambda: counts() == [2, 2, 5], timeout=10)
    rec.event(pod("p"), NORMAL, "MTLSPKIReady", "ready", action="Reconcile")
    await eventually(lambda: counts() == [2, 2, 5, 6], timeout=10)
    await rec.close()  # nothing grew since: nothing more is written
    assert counts() == [2, 2, 5, 6]
    assert len(client.created) == 3


async def test_an_idle_series_is_finished_and_its_next_occurrence_is_a_new_event() -> None:
    clock = Clock()
    client = FakeEventsClient()
    rec = recorder(client, api=EVENTS_V1, now=clock, series_finish=0.05)
    for _ in range(3):
        rec.event(pod("p"), WARNING, "RayClusterNotFound", "not found", action="Validate")
    await rec.flush()
    clock.t += 1000  # idle for longer than series_finish
    await eventually(lambda: len(rec.series) == 0, timeout=10)
    await rec.flush()
    assert [b["series"]["count"] for _, b in client.patched] == [2, 3]
    rec.event(pod("p"), WARNING, "RayClusterNotFound", "not found", action="Validate")
    await rec.flush()
    assert len(client.created) == 2
    await rec.close()


async def test_a_series_whose_event_expired_is_created_again() -> None:
    client = MissingEventsClient()
    rec = recorder(client, api=EVENTS_V1)
    rec.event(pod("p"), WARNING, "Unhealthy", "down", action="Check")
    rec.event(pod("p"), WARNING, "Unhealthy", "down", action="Check")
    await rec.flush()
    first, again = client.created
    assert again["metadata"]["name"] == first["metadata"]["name"]
    assert again["series"]["count"] == 2 and again["note"] == "down"
    await rec.close()
