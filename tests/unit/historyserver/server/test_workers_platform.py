"""``/api/v0/workers`` from the recorded Ray 2.60 WORKER_* events (else the collector's
snapshot) and ``/api/v0/platform_events`` from PLATFORM_EVENT events (shaped as Ray 2.60's
``platformEvent`` proto; the recorded run had no Kubernetes to watch)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.convert import hex_id
from kuberay.historyserver.server.platform_events import PlatformEventBuilder
from kuberay.historyserver.server.workers import WorkerBuilder
from tests.unit.historyserver.server.stores import (
    SESSION,
    all_events,
    collector_store,
    kuberay_layout_store,
)

Client = TestClient[Any, Any]
NODE_IP = "192.0.2.2"  # the recorded head, as the fixture rewrites its address


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    store = await collector_store(tmp_path)
    c: Client = TestClient(TestServer(make_app(store), host="127.0.0.1"))
    await c.start_server()
    assert (await c.get(f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}")).status == 200
    yield c
    await c.close()


def _worker_events() -> list[dict[str, Any]]:
    return [e for e in all_events() if e["eventType"].startswith("WORKER_")]


async def test_workers_come_from_worker_events(client: Client) -> None:
    body = await (await client.get("/api/v0/workers?detail=1&limit=1000")).json()
    result = body["data"]["result"]
    workers = result["result"]
    ids = {
        w
        for e in _worker_events()
        for k in ("workerDefinitionEvent", "workerLifecycleEvent")
        if (w := e.get(k, {}).get("workerId"))
    }
    assert result["total"] == len(workers) == len(ids) > 0
    assert all(len(w["worker_id"]) == 56 for w in workers)
    by_id = {w["worker_id"]: w for w in workers}
    w = by_id[hex_id("uHmF/rbsd157r6FhiFtEZ6kZxmhNvhEQd/XUgw==")]  # the killed actor's worker
    assert "exit_actor() is called" in w["exit_detail"]
    assert (w["is_alive"], w["exit_type"], w["job_id"]) == (False, "INTENDED_USER_EXIT", "01000000")
    assert w["end_time_ms"] == 1796418389044
    defined = [w for w in workers if w["pid"]]
    assert defined and all(w["worker_type"] in ("WORKER", "DRIVER") for w in defined)
    assert all(w["ip"] == NODE_IP for w in defined)
    started = next(w for w in workers if w["pid"] == 19496)
    assert started["worker_launch_time_ms"] == 1796418386668
    assert started["start_time_ms"] == 1796418387615


async def test_workers_brief_filters_and_limit(client: Client) -> None:
    brief = (await (await client.get("/api/v0/workers")).json())["data"]["result"]["result"]
    assert set(brief[0]) == {
        "worker_id",
        "is_alive",
        "worker_type",
        "exit_type",
        "node_id",
        "ip",
        "pid",
    }
    dead = await client.get(
        "/api/v0/workers?filter_keys=is_alive&filter_predicates=%3D&filter_values=false&limit=1"
    )
    result = (await dead.json())["data"]["result"]
    assert len(result["result"]) == 1 and result["result"][0]["is_alive"] is False
    assert result["num_filtered"] == result["total"] > 1  # `ray stop` ended every worker
    alive = await client.get("/api/v0/workers?filter_keys=is_alive&filter_values=true")
    assert (await alive.json())["data"]["result"]["result"] == []
    bad = await client.get("/api/v0/workers?filter_keys=func_name&filter_values=x")
    assert bad.status == 400


def test_worker_fold_does_not_depend_on_event_order() -> None:
    events = _worker_events()
    ips = {"72671b9b9704e37837a0c1dbe67f5b48f92ed718c77faf03ce819bf3": NODE_IP}

    def fold(evs: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        b = WorkerBuilder()
        for e in evs:
            assert b.add(e)
        return b.build(ips)

    expected = fold(events)
    for seed in range(5):
        shuffled = list(events)
        random.Random(seed).shuffle(shuffled)
        assert fold(shuffled) == expected
    assert WorkerBuilder().build(ips) is None


async def test_without_worker_events_the_stored_snapshot_is_served() -> None:
    events = [e for e in all_events() if not e["eventType"].startswith("WORKER_")]
    store, layout = kuberay_layout_store(events)
    url = "/api/v0/workers?detail=1&limit=10000"
    snapshot = b'{"result": true, "msg": "", "data": {"result": {"result": [{"pid": 7}]}}}'
    async with TestClient(TestServer(make_app(store), host="127.0.0.1")) as c:
        await c.get(f"/enter_cluster/team-a/rayjob/my-job/{SESSION}")
        assert (await c.get(url)).status == 404  # nothing stored, no events
        store.objects[layout.endpoint_key(SESSION, url)] = snapshot
        r = await c.get(url)
        assert r.status == 200 and await r.read() == snapshot


def _platform(eid: str, ts: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "eventId": eid,
        "sourceType": "CLUSTER_LIFECYCLE",
        "eventType": "PLATFORM_EVENT",
        "timestamp": ts,
        "severity": "WARNING",
        "message": message,
        "sessionName": SESSION,
        "nodeId": "cmcbm5cE43g3oMHb5n9bSPku1xjHf68DzoGb8w==",
        "platformEvent": {
            "eventId": eid,
            "source": {"platform": "kubernetes", "component": "kubelet", "metadata": {}},
            "objectKind": "Pod",
            "objectName": "raycluster-hs-head-abcde",
            "message": message,
            "reason": reason,
            "timestampNs": "0",
            "customFields": {},
        },
    }


async def test_platform_events_newest_first_redelivery_replaces() -> None:
    first = _platform("ZXYx", "2026-12-04T21:06:10Z", "Pulling", "Pulling image")
    oom = _platform("ZXYy", "2026-12-04T21:06:30Z", "OOMKilled", "container ray-worker OOM")
    again = _platform("ZXYx", "2026-12-04T21:06:40Z", "Pulled", "Pulled image")
    store, _ = kuberay_layout_store([*all_events(), oom, first, again])
    async with TestClient(TestServer(make_app(store), host="127.0.0.1")) as c:
        await c.get(f"/enter_cluster/team-a/rayjob/my-job/{SESSION}")
        body = await (await c.get("/api/v0/platform_events")).json()
    assert body["result"] is True and body["msg"] == "Retrieved platform events"
    events = body["data"]["events"]
    assert [e["platformEvent"]["reason"] for e in events] == ["Pulled", "OOMKilled"]
    assert events[1] == oom


async def test_no_platform_events_is_an_empty_list(client: Client) -> None:
    body = await (await client.get("/api/v0/platform_events")).json()
    assert body["data"]["events"] == []
    assert PlatformEventBuilder().build() is None
