"""Timeline, lineage summary, legacy events, cluster status, fixed answers and the ``/api``
fallback, over the collector-built fixture store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.layout import Layout
from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.cluster_status import demand_lines, format_memory
from kuberay.historyserver.server.legacy_events import MAX_EVENTS_PER_JOB, parse_lines
from kuberay.historyserver.server.lineage import summarize_by_lineage
from tests.unit.historyserver.server.stores import CLUSTER, NODE, SESSION, collector_store

Client = TestClient[Any, Any]
LAYOUT = Layout(CLUSTER)


def _event(eid: str, job: str | None, message: str = "m") -> bytes:
    fields = {"job_id": job} if job is not None else {}
    return json.dumps(
        {
            "event_id": eid,
            "source_type": "GCS",
            "severity": "INFO",
            "message": message,
            "timestamp": 1,
            "custom_fields": fields,
        }
    ).encode()


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    store = await collector_store(tmp_path)
    await store.put(
        LAYOUT.log_key(SESSION, NODE, "events/event_RAYLET.log"),
        b"\n".join(
            [
                _event("a", "03000000", "line1\\nline2"),
                _event("b", None),
                b"not json",
                _event("a", "03000000", "replaced"),
            ]
        ),
    )
    await store.put(LAYOUT.log_key(SESSION, NODE, "events/other.txt"), _event("z", "x"))
    await store.put(
        LAYOUT.endpoint_key(SESSION, "/api/data/datasets/03000000"),
        b'{"datasets": [{"dataset": "ds_1"}]}',
    )
    await store.put(LAYOUT.endpoint_key(SESSION, "/api/custom?x=1"), b'{"stored": true}')
    c: Client = TestClient(TestServer(make_app(store), host="127.0.0.1"))
    await c.start_server()
    r = await c.get(f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}")
    assert r.status == 200
    yield c
    await c.close()


async def test_timeline_is_chrome_trace(client: Client) -> None:
    r = await client.get("/api/v0/tasks/timeline")
    assert "Content-Disposition" not in r.headers
    trace = await r.json()
    complete = [e for e in trace if e["ph"] == "X"]
    meta = [e for e in trace if e["ph"] == "M"]
    assert complete and meta
    assert {"cat", "name", "pid", "tid", "ts", "dur", "cname", "args"} <= set(complete[0])
    assert all(e["dur"] >= 0 for e in complete)
    assert {e["args"]["job_id"] for e in complete} >= {"02000000", "03000000"}
    assert meta[0] == {
        "name": "process_name",
        "args": {"name": "Node 192.0.2.2"},
        "pid": 0,
        "tid": None,
        "ph": "M",
    }
    threads = {e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert all(t.startswith(("worker:", "driver:")) for t in threads)
    # The profile entry's ``extra_data.name`` names the box (Ray's rule).
    named = [e for e in complete if e["cat"].startswith("task::")]
    assert named and all(e["name"] for e in named)
    r = await client.get("/api/v0/tasks/timeline?job_id=03000000&download=1")
    assert r.headers["Content-Disposition"].startswith('attachment; filename="timeline-03000000-')
    assert {e["args"]["job_id"] for e in await r.json() if e["ph"] == "X"} == {"03000000"}


async def test_timeline_from_lifecycle_without_profile_events(client: Client) -> None:
    from kuberay.historyserver.server.timeline import chrome_trace

    task = {
        "task_id": "t1",
        "job_id": "01000000",
        "attempt_number": 0,
        "func_or_class_name": "f",
        "name": "f",
        "actor_id": None,
        "type": "NORMAL_TASK",
        "state": "FINISHED",
        "profiling_data": None,
        "start_time_ms": 1000,
        "end_time_ms": 1500,
        "node_id": "n1",
        "worker_id": "w1",
    }
    trace = chrome_trace([task, dict(task, task_id="t2", worker_id=None)], {"n1": "10.0.0.1"})
    (x,) = [e for e in trace if e["ph"] == "X"]
    assert (x["name"], x["ts"], x["dur"], x["args"]["source"]) == ("task::f", 1e6, 5e5, "lifecycle")
    assert [e["args"]["name"] for e in trace if e["ph"] == "M"] == ["Node 10.0.0.1", "worker:w1"]


async def test_profiling_data_in_ray_shape(client: Client) -> None:
    body = await (await client.get("/api/v0/tasks?detail=1&limit=100")).json()
    with_profile = [t for t in body["data"]["result"]["result"] if t["profiling_data"]]
    event = with_profile[0]["profiling_data"]["events"][0]
    assert isinstance(event["extra_data"], dict)
    assert 1.7e12 < event["start_time"] < 1.9e12  # Unix ms, as Ray's state API


async def test_summary_by_lineage(client: Client) -> None:
    r = await client.get("/api/v0/tasks/summarize?summary_by=lineage")
    cluster = (await r.json())["data"]["result"]["result"]["node_id_to_summary"]["cluster"]
    assert cluster["summary_by"] == "lineage"
    roots = cluster["summary"]
    assert {"name", "key", "type", "timestamp", "state_counts", "children", "link"} == set(roots[0])
    # Failed roots sort first; same-named siblings are merged under a GROUP.
    assert roots[0]["state_counts"].get("FAILED", 0) >= 1
    squares = next(n for n in roots if n["name"] == "square")
    assert squares["type"] == "GROUP" and len(squares["children"]) > 1
    assert squares["state_counts"]["FINISHED"] == len(squares["children"])
    assert any(n["type"] == "ACTOR" or n["type"] == "GROUP" for n in roots)
    assert cluster["total_tasks"] + cluster["total_actor_tasks"] + cluster[
        "total_actor_scheduled"
    ] == sum(sum(n["state_counts"].values()) for n in roots)
    r = await client.get("/api/v0/tasks/summarize?summary_by=task_name")
    assert r.status == 200
    r = await client.get("/api/v0/tasks/summarize?summary_by=nope")
    assert r.status == 400


def test_lineage_actor_tree_and_missing_parent() -> None:
    def task(tid: str, typ: str, parent: str = "", actor: str | None = None) -> dict[str, Any]:
        return {
            "task_id": tid,
            "type": typ,
            "parent_task_id": parent,
            "actor_id": actor,
            "name": tid.split("-")[0],
            "func_or_class_name": "C.__init__" if typ == "ACTOR_CREATION_TASK" else "x",
            "creation_time_ms": 5,
            "state": "FINISHED",
        }

    tasks = [
        task("C-create", "ACTOR_CREATION_TASK", "f" * 48, "a1"),
        task("m-1", "ACTOR_TASK", "f" * 48, "a1"),
        task("orphan", "NORMAL_TASK", "missing-parent"),
        task("child", "NORMAL_TASK", "m-1"),
    ]
    out = summarize_by_lineage(tasks, {"a1": {"reprName": "", "className": "Counter"}})
    (actor,) = out["summary"]
    assert (actor["name"], actor["key"], actor["type"]) == ("Counter", "actor:a1", "ACTOR")
    assert actor["link"] == {"type": "actor", "id": "a1"}
    assert [c["key"] for c in actor["children"]] == ["C-create", "m-1"]
    assert actor["children"][1]["children"][0]["key"] == "child"
    assert actor["state_counts"] == {"FINISHED": 3}
    assert (out["total_tasks"], out["total_actor_tasks"], out["total_actor_scheduled"]) == (2, 1, 1)


async def test_legacy_events(client: Client) -> None:
    body = await (await client.get("/events")).json()
    assert body["result"] is True and body["msg"] == "All events fetched."
    events = body["data"]["events"]
    assert set(events) == {"03000000", "global"}  # other.txt is not an event file
    (a,) = events["03000000"]
    assert a["eventId"] == "a" and a["message"] == "replaced"  # camelCased, last wins
    assert a["customFields"] == {"jobId": "03000000"}
    body = await (await client.get("/events?job_id=03000000")).json()
    assert body["data"]["jobId"] == "03000000" and len(body["data"]["events"]) == 1
    body = await (await client.get("/events?job_id=99000000")).json()
    assert body["data"] == {"jobId": "99000000", "events": []}


def test_legacy_event_parsing_limits() -> None:
    into: dict[str, Any] = {}
    data = b"\n".join(_event(str(i), "j") for i in range(MAX_EVENTS_PER_JOB + 5))
    assert parse_lines(data + b"\n[1]\n" + b"x" * (3 << 20), into) == 2
    assert len(into["j"]) == MAX_EVENTS_PER_JOB and next(iter(into["j"])) == "5"
    parse_lines(_event("n", "", "a\\nb\\rc"), into)
    assert into["global"]["n"]["message"] == "a\nb\nc"


async def test_cluster_status(client: Client) -> None:
    body = await (await client.get("/api/cluster_status?format=1")).json()
    assert body["result"] is True and body["msg"] == "Got formatted cluster status."
    text = body["data"]["clusterStatus"]
    assert text.startswith("======== Autoscaler status: 2026-12-04 ")
    for part in (
        "Node status",
        "Active:\n 1 node_" + NODE,
        "Idle:\n (no idle nodes)",
        "Recent failures:\n (no failures)",
        "Total Usage:\n",
        " 0.0/2.0 CPU",
        "GiB memory",
        "From request_resources:\n (none)",
        "Pending Demands:\n (no resource demands)",
    ):
        assert part in text, part
    body = await (await client.get("/api/cluster_status")).json()
    assert body["data"] == {
        "autoscalingStatus": None,
        "autoscalingError": None,
        "clusterStatus": None,
    }


def test_cluster_status_helpers() -> None:
    assert format_memory(2**30 + 1) == "1.00GiB" and format_memory(10) == "10B"
    lines = demand_lines(
        [{"CPU": 1}, {"CPU": 1.0}, {"CPU_group_0_" + "a" * 36: 1, "bundle_group_" + "a" * 36: 1}]
    )
    assert lines == [
        " {'CPU': 1.0}: 3+ pending tasks/actors (1+ using placement groups)",
    ]


async def test_fixed_answers(client: Client) -> None:
    body = await (await client.get("/api/v0/runtime_env_redaction")).json()
    assert body == {"result": True, "msg": "", "data": {"redactionEnabled": False}}
    body = await (await client.get("/api/v0/platform_events")).json()
    assert body["data"] == {"events": []} and body["result"] is True
    for path, msg in (
        ("/api/grafana_health", "Grafana healthcheck failed"),
        ("/api/prometheus_health", "prometheus healthcheck failed."),
    ):
        r = await client.get(path)
        assert r.status == 500
        assert (await r.json())["result"] is False and (await r.json())["msg"] == msg


async def test_api_fallback(client: Client) -> None:
    r = await client.get("/api/data/datasets/03000000")
    assert await r.json() == {"datasets": [{"dataset": "ds_1"}]}
    r = await client.get("/api/data/datasets/02000000")
    assert await r.json() == {"datasets": []}
    r = await client.get("/api/custom?x=1")
    assert await r.json() == {"stored": True}
    r = await client.get("/api/custom?x=2")
    assert r.status == 404
    r = await client.get("/api/v0/placement_groups?detail=1&limit=10000")
    assert (await r.json())["data"]["result"]["total"] == 2  # the real route still wins


async def test_new_routes_need_a_session(tmp_path: Path) -> None:
    store = await collector_store(tmp_path)
    async with TestClient(TestServer(make_app(store), host="127.0.0.1")) as c:
        for path in ("/api/v0/tasks/timeline", "/events", "/api/cluster_status", "/api/x"):
            assert (await c.get(path)).status == 400, path
