"""The aiohttp app over a store built by the collector's own code, route by route."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.context import STATE
from tests.unit.historyserver.server.stores import (
    NODE,
    SESSION,
    WORKER_OUT,
    all_events,
    collector_store,
    kuberay_layout_store,
)

Client = TestClient[Any, Any]


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    store = await collector_store(tmp_path, root="hs-root")
    c: Client = TestClient(TestServer(make_app(store, root="hs-root"), host="127.0.0.1"))
    await c.start_server()
    yield c
    await c.close()


async def enter(c: Client) -> None:
    r = await c.get(f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}")
    assert r.status == 200, await r.text()
    assert await r.json() == {
        "result": "success",
        "name": "raycluster-hs",
        "namespace": "default",
        "session": SESSION,
    }
    assert r.cookies["session_name"]["max-age"] == "600"


async def test_health_and_fixed_answers(client: Client) -> None:
    for path in ("/readz", "/livez"):
        assert await (await client.get(path)).text() == "ok"
    r = await client.get("/api/authentication_mode")
    assert await r.json() == {"authentication_mode": "disabled"}
    r = await client.get("/api/profiling_enabled")
    assert (await r.json())["data"]["profilingEnabled"] is False


async def test_clusters_newest_first_and_cached(client: Client) -> None:
    r = await client.get("/clusters")
    (entry,) = await r.json()
    assert entry == {
        "name": "raycluster-hs",
        "namespace": "default",
        "sessionName": SESSION,
        "createTime": "2026-12-04T21:06:04Z",
        "createTimeStamp": 1796418364,
        "ownerKind": "",
        "ownerName": "",
    }
    state = client.app[STATE]
    store = state.store
    later = "session_2026-12-05_08-00-00_000001_1"
    await store.put(f"hs-root/cluster-metadata/raycluster/default_raycluster-hs/{later}", b"")
    await client.get("/clusters")
    assert state.clusters.listings == 1  # cached: not listed again
    fresh = await state.clusters.sessions(refresh=True)
    assert [s.session for s in fresh] == [later, SESSION]
    r = await client.get("/clusters?limit=1&offset=1")
    assert [e["sessionName"] for e in await r.json()] == [SESSION]
    assert r.headers["X-Total-Count"] == "2"


async def test_cookie_routes_need_a_cluster(client: Client) -> None:
    r = await client.get("/api/jobs/")
    assert r.status == 400
    assert "enter_cluster" in (await r.json())["msg"]


async def test_enter_latest_and_unknown(client: Client) -> None:
    r = await client.get("/enter_cluster/default/raycluster/raycluster-hs")
    assert (await r.json())["session"] == SESSION
    for path in (
        "/enter_cluster/default/raycluster/nope",
        "/enter_cluster/default/raycluster/raycluster-hs/session_2020-01-01_00-00-00_000000_1",
        "/enter_cluster/other/raycluster/raycluster-hs",
    ):
        r = await client.get(path)
        assert r.status == 404, path
        assert "not found" in (await r.json())["msg"]
    assert (await client.get("/enter_cluster/default/pod/x")).status == 400


async def test_jobs(client: Client) -> None:
    await enter(client)
    r = await client.get("/api/jobs/")
    jobs = {j["submission_id"]: j for j in await r.json()}
    assert {k: j["status"] for k, j in jobs.items()} == {
        "capture-job-1": "FAILED",
        "capture-job-2": "FAILED",
        "capture-job-3": "SUCCEEDED",
    }
    assert jobs["capture-job-3"]["driver_info"]["pid"] == "21175"
    for ident in ("03000000", "capture-job-3"):
        r = await client.get(f"/api/jobs/{ident}")
        assert (await r.json())["submission_id"] == "capture-job-3"
    r = await client.get("/api/jobs/09000000")
    assert r.status == 404
    assert (await r.json())["msg"] == "Job 09000000 does not exist"


async def test_tasks_filters_detail_limit(client: Client) -> None:
    await enter(client)
    r = await client.get("/api/v0/tasks")
    body = await r.json()
    result = body["data"]["result"]
    assert body["result"] is True and result["num_filtered"] == 26 and result["total"] == 31
    assert "events" not in result["result"][0]
    assert [t["task_id"] for t in result["result"]] == sorted(
        t["task_id"] for t in result["result"]
    )
    q = (
        "filter_keys=job_id&filter_predicates=%3D&filter_values=03000000"
        "&filter_keys=state&filter_values=FAILED&filter_predicates=%3D&detail=1"
    )
    (boom,) = (await (await client.get(f"/api/v0/tasks?{q}")).json())["data"]["result"]["result"]
    assert boom["name"] == "boom" and boom["error_type"] == "TASK_EXECUTION_EXCEPTION"
    assert "this task fails on purpose" in boom["error_message"]
    r = await client.get(
        "/api/v0/tasks?filter_keys=task_name&filter_predicates=!%3D&filter_values=square&limit=3"
    )
    res = (await r.json())["data"]["result"]
    assert len(res["result"]) == 3 and res["num_filtered"] == 11
    assert all(t["name"] != "square" for t in res["result"])
    r = await client.get(
        "/api/v0/tasks?exclude_driver=false&filter_keys=task_type&filter_values=DRIVER_TASK"
    )
    assert (await r.json())["data"]["result"]["num_filtered"] == 5
    assert (await client.get("/api/v0/tasks?filter_keys=bogus&filter_values=1")).status == 400
    assert (await client.get("/api/v0/tasks?limit=10001")).status == 400
    # a filter on a detail-only column selects as Ray does; asked again, the same bytes
    every = (await (await client.get("/api/v0/tasks?detail=1&limit=10000")).json())["data"]
    q = "/api/v0/tasks?detail=1&limit=10000&filter_keys=language&filter_values=python"
    first = await (await client.get(q)).read()
    picked = json.loads(first)["data"]["result"]
    expected = [t for t in every["result"]["result"] if t["language"] == "PYTHON"]
    assert picked["result"] == expected and picked["num_filtered"] == len(expected) > 0
    assert await (await client.get(q)).read() == first


async def test_tasks_summarize(client: Client) -> None:
    await enter(client)
    r = await client.get(
        "/api/v0/tasks/summarize?filter_keys=job_id&filter_predicates=%3D&filter_values=03000000"
    )
    summary = (await r.json())["data"]["result"]["result"]["node_id_to_summary"]["cluster"]
    assert summary["summary"]["square"]["state_counts"] == {"FINISHED": 8}
    assert summary["summary"]["boom"]["state_counts"] == {"FAILED": 1}
    assert summary["summary"]["Counter.incr"]["type"] == "ACTOR_TASK"
    assert summary["total_actor_tasks"] == 3 and summary["total_actor_scheduled"] == 1


async def test_actors_nodes_placement_groups_metadata(client: Client) -> None:
    await enter(client)
    actors = (await (await client.get("/logical/actors")).json())["data"]["actors"]
    assert actors["ece2ae465902c623e479db6103000000"]["name"] == "counter"
    r = await client.get("/logical/actors/ece2ae465902c623e479db6103000000")
    assert (await r.json())["data"]["detail"]["state"] == "DEAD"
    assert (await client.get("/logical/actors/00")).status == 404
    data = (await (await client.get("/nodes?view=summary")).json())["data"]
    assert data["summary"][0]["raylet"]["nodeId"] == NODE
    assert data["summary"][0]["raylet"]["isHeadNode"] is True
    assert "0.0/2.0 CPU" in data["nodeLogicalResources"][NODE]
    nodes = (await (await client.get("/api/v0/nodes")).json())["data"]["result"]["result"]
    assert nodes[0]["node_ip"] == "192.0.2.2" and "start_time_ms" not in nodes[0]
    pgs = (await (await client.get("/api/v0/placement_groups?detail=1")).json())["data"]["result"]
    assert {p["creator_job_id"] for p in pgs["result"]} == {"02000000", "03000000"}
    meta = await (await client.get("/api/v0/cluster_metadata")).json()
    assert meta["data"]["rayVersion"] == "2.60.0"
    assert await (await client.get("/timezone")).json() == {
        "offset": "+00:00",
        "value": "Europe/London",
    }
    serve = await (await client.get("/api/serve/applications/")).json()
    assert serve["applications"] == {}


async def test_logs_listing_and_reads(client: Client) -> None:
    await enter(client)
    r = await client.get(f"/api/v0/logs?node_id={NODE}")
    groups = (await r.json())["data"]["result"]
    assert groups["worker_out"] == [WORKER_OUT] and groups["raylet"] == ["raylet.out"]
    assert all("events/event_GCS.log" not in names for names in groups.values())
    r = await client.get("/api/v0/logs?node_ip=192.0.2.2&glob=**")
    assert "events/event_GCS.log" in (await r.json())["data"]["result"]["internal"]
    r = await client.get(f"/api/v0/logs/file?node_id={NODE}&filename=raylet.out&lines=2")
    assert await r.read() == b"1c\nd\n"
    # what Ray's dashboard UI asks for a driver's log (its MAX_LINES_FOR_LOGS is 50,000)
    ui = "lines=50000&filter_ansi_code=true"
    r = await client.get(f"/api/v0/logs/file?node_id={NODE}&filename=raylet.out&{ui}")
    assert await r.read() == b"1a\nb\nc\nd\n"
    # The task's slice of its worker file, from the recorded taskLogInfo offsets.
    tasks = (await (await client.get("/api/v0/tasks?detail=1&limit=100")).json())["data"]["result"][
        "result"
    ]
    first = next(
        t
        for t in tasks
        if t["task_log_info"]
        and t["task_log_info"]["stdout_start"] == 35
        and t["worker_pid"] == 21236
    )
    r = await client.get(f"/api/v0/logs/file?task_id={first['task_id']}")
    assert await r.read() == b"1sq first\n"
    r = await client.get(f"/api/v0/logs/file?task_id={first['task_id']}&download_filename=t.out")
    assert await r.read() == b"sq first\n" and "attachment" in r.headers["Content-Disposition"]
    r = await client.get(f"/api/v0/logs/file?node_id={NODE}&pid=21236")
    assert (await r.read()).startswith(b"1:job_id:03000000")
    r = await client.get(f"/api/v0/logs/file?node_id={NODE}&filename=nope.log")
    assert r.status == 404
    r = await client.get("/api/v0/logs?node_id=" + "a" * 56)
    assert r.status == 404


@pytest.mark.parametrize(
    "path",
    [
        f"/api/v0/logs/file?node_id={NODE}&filename=../../../secret",
        f"/api/v0/logs/file?node_id={NODE}&filename=/etc/passwd",
        f"/api/v0/logs/file?node_id={NODE}&filename=a/./b",
        "/api/v0/logs?node_id=..",
        "/api/v0/logs?node_id=a%2Fb",
        f"/api/v0/logs/file?node_id={NODE}&filename=raylet.out&download_filename=..%2Fx",
    ],
)
async def test_path_escapes_are_rejected(client: Client, path: str) -> None:
    await enter(client)
    r = await client.get(path)
    assert r.status == 400, (path, await r.text())


@pytest.mark.parametrize(
    ("cookie", "value"),
    [
        ("session_name", ".."),
        ("session_name", "a/b"),
        ("cluster_namespace", "../x"),
        ("cluster_name", "a_b"),
        ("owner_kind", "pod"),
    ],
)
async def test_bad_cookies_are_rejected(client: Client, cookie: str, value: str) -> None:
    cookies = {
        "cluster_name": "raycluster-hs",
        "cluster_namespace": "default",
        "session_name": SESSION,
        cookie: value,
    }
    if cookie == "owner_kind":
        cookies["owner_name"] = "x"
    header = "; ".join(f"{k}={v}" for k, v in cookies.items())
    r = await client.get("/api/jobs/", headers={"Cookie": header})
    assert r.status == 400


async def test_enter_path_escape_is_rejected(client: Client) -> None:
    r = await client.get("/enter_cluster/default/raycluster/raycluster-hs/..%2E")
    assert r.status in (400, 404)
    r = await client.get("/enter_cluster/de..fault%00/raycluster/x")
    assert r.status == 400


async def test_unknown_session_cookie_is_404(client: Client) -> None:
    header = "cluster_name=raycluster-hs; cluster_namespace=default; session_name=session_x"
    r = await client.get("/api/v0/tasks", headers={"Cookie": header})
    assert r.status == 404 and "not found" in (await r.json())["msg"]


@pytest.mark.parametrize(
    ("owner", "cluster"),
    [(("rayjob", "my-job"), "my-job-raycluster-x"), (("rayservice", "my-svc"), "my-svc-rc-y")],
)
async def test_enter_an_owned_cluster_by_its_own_name(owner: tuple[str, str], cluster: str) -> None:
    """KubeRay's ``resolveSession``: ``raycluster`` matches the cluster's own name whatever
    owns it (a RayJob's cluster, gone with its RayJob, is still found); the cookies carry the
    owner so every later read goes to the owner's tree."""
    store, _layout = kuberay_layout_store(all_events(), owner=owner, cluster=cluster)
    async with TestClient(TestServer(make_app(store), host="127.0.0.1")) as c:
        for path in (
            f"/enter_cluster/team-a/raycluster/{cluster}/{SESSION}",
            f"/enter_cluster/team-a/raycluster/{cluster}",
        ):
            r = await c.get(path)
            assert r.status == 200, await r.text()
            assert await r.json() == {
                "result": "success",
                "name": cluster,
                "namespace": "team-a",
                "session": SESSION,
            }
            assert r.cookies["owner_kind"].value == owner[0]
            assert r.cookies["owner_name"].value == owner[1]
            jobs = await (await c.get("/api/jobs/")).json()
            assert {j["job_id"] for j in jobs} == {"02000000", "03000000"}
        # the owner's kind and name still work; the cluster's name is not an owner's name
        assert (await c.get(f"/enter_cluster/team-a/{owner[0]}/{owner[1]}")).status == 200
        assert (await c.get(f"/enter_cluster/team-a/{owner[0]}/{cluster}")).status == 404
        assert (await c.get(f"/enter_cluster/default/raycluster/{cluster}")).status == 404


async def test_clusters_reload_lists_again(client: Client) -> None:
    state = client.app[STATE]
    assert len(await (await client.get("/clusters")).json()) == 1
    later = "session_2026-12-05_08-00-00_000001_1"
    await state.store.put(f"hs-root/cluster-metadata/raycluster/default_raycluster-hs/{later}", b"")
    assert len(await (await client.get("/clusters")).json()) == 1  # cached listing
    r = await client.get("/clusters?reload=true")
    assert [e["sessionName"] for e in await r.json()] == [later, SESSION]
    assert state.clusters.listings == 2


async def test_kuberay_layout_rayjob_store() -> None:
    store, _layout = kuberay_layout_store(all_events())
    async with TestClient(TestServer(make_app(store), host="127.0.0.1")) as c:
        (entry,) = await (await c.get("/clusters")).json()
        assert entry["ownerKind"] == "rayjob" and entry["ownerName"] == "my-job"
        r = await c.get("/enter_cluster/team-a/rayjob/my-job")
        assert (await r.json())["name"] == "my-job-raycluster-x"
        jobs = await (await c.get("/api/jobs/")).json()
        assert {j["job_id"] for j in jobs} == {"02000000", "03000000"}
        pgs = (await (await c.get("/api/v0/placement_groups")).json())["data"]["result"]
        assert pgs["result"] == []
