"""The session model: entities from the recorded Ray 2.60 events, order-independent."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kuberay.historyserver.layout import Layout
from kuberay.historyserver.server.actors import ActorBuilder
from kuberay.historyserver.server.event_files import parse_events
from kuberay.historyserver.server.jobs import INFERRED_MESSAGE, JobBuilder
from kuberay.historyserver.server.nodes import NodeBuilder
from kuberay.historyserver.server.placement_groups import PlacementGroupBuilder
from kuberay.historyserver.server.session import SessionKey, load_session
from kuberay.historyserver.server.tasks import TaskBuilder
from tests.unit.historyserver.fixtures import dashboard, snake_bodies
from tests.unit.historyserver.server.stores import (
    CLUSTER,
    NODE,
    SESSION,
    all_events,
    collector_store,
    kuberay_layout_store,
)

EVENTS = all_events()


def build_all(events: list[dict[str, Any]]) -> dict[str, Any]:
    tasks, actors, jobs, nodes = TaskBuilder(), ActorBuilder(), JobBuilder(), NodeBuilder()
    for e in events:
        for b in (tasks, actors, jobs, nodes):
            if b.add(e):
                break
    node_list = nodes.build()
    ips = {n["node_id"]: n["node_ip"] for n in node_list}
    return {
        "tasks": tasks.build(),
        "actors": actors.build(ips),
        "jobs": jobs.build(None, ips),
        "nodes": node_list,
    }


BASELINE = build_all(EVENTS)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_merge_does_not_depend_on_event_order(rnd: random.Random) -> None:
    shuffled = list(EVENTS)
    rnd.shuffle(shuffled)
    # Duplicated deliveries (Ray retries) must not change anything either.
    shuffled += rnd.sample(EVENTS, 10)
    assert build_all(shuffled) == BASELINE


def test_tasks_are_finished_with_names_and_the_failure_is_kept() -> None:
    tasks = [t for t in BASELINE["tasks"] if t["type"] != "DRIVER_TASK"]
    assert len(tasks) == 26
    by_state: dict[str, list[str]] = {}
    for t in tasks:
        by_state.setdefault(t["state"], []).append(t["func_or_class_name"])
    assert by_state["FAILED"] == ["boom"]
    assert set(by_state["FINISHED"]) == {"square", "parent", "Counter.incr", "Counter.__init__"}
    boom = next(t for t in tasks if t["name"] == "boom")
    assert boom["error_type"] == "TASK_EXECUTION_EXCEPTION"
    assert "this task fails on purpose" in boom["error_message"]
    assert boom["node_id"] == NODE
    assert boom["end_time_ms"] and boom["creation_time_ms"] <= boom["end_time_ms"]
    assert [e["state"] for e in boom["events"]][-1] == "FAILED"


def test_nested_tasks_point_at_their_parent() -> None:
    tasks = BASELINE["tasks"]
    parents = {t["task_id"]: t for t in tasks if t["name"] == "parent"}
    assert len(parents) == 2
    for parent_id, parent in parents.items():
        children = [t for t in tasks if t["parent_task_id"] == parent_id]
        assert len(children) == 4
        assert all(c["func_or_class_name"] == "square" for c in children)
        assert all(c["job_id"] == parent["job_id"] for c in children)


def test_log_start_and_end_sent_apart_are_merged() -> None:
    parent = next(
        t for t in BASELINE["tasks"] if t["name"] == "parent" and t["job_id"] == "03000000"
    )
    info = parent["task_log_info"]
    assert info["stdout_start"] == 116 and info["stdout_end"] == 116
    assert info["stdout_file"].endswith("-03000000-21236.out")


def test_actor_tasks_and_actors() -> None:
    incr = [t for t in BASELINE["tasks"] if t["type"] == "ACTOR_TASK"]
    assert {t["actor_id"] for t in incr} == {
        "199e421fd46fa12a4379df4502000000",
        "ece2ae465902c623e479db6103000000",
    }
    actor = BASELINE["actors"]["ece2ae465902c623e479db6103000000"]
    assert actor["name"] == "counter" and actor["actorClass"] == "Counter"
    assert actor["state"] == "DEAD" and actor["jobId"] == "03000000"
    assert actor["address"]["ipAddress"] == "192.0.2.2" and actor["pid"] == 21264
    assert "ray.kill" in actor["exitDetail"]
    assert actor["startTime"] < actor["endTime"]


def test_node_matches_the_recorded_dashboard_answer() -> None:
    recorded = json.loads(dashboard()["/api/v0/nodes?limit=10000"]["body"])
    want = recorded["data"]["result"]["result"][0]
    (node,) = BASELINE["nodes"]
    assert {k: node[k] for k in want} == want


def test_jobs_from_events_alone_infer_the_driver_status() -> None:
    jobs = {j["job_id"]: j for j in BASELINE["jobs"]}
    assert set(jobs) == {"02000000", "03000000"}
    job3 = jobs["03000000"]
    assert job3["type"] == "SUBMISSION" and job3["submission_id"] == "capture-job-3"
    assert job3["driver_info"] == {"id": "03000000", "node_ip_address": "192.0.2.2", "pid": "21175"}
    assert job3["status"] == "SUCCEEDED" and job3["message"] == INFERRED_MESSAGE
    assert job3["start_time"] < job3["end_time"]


def test_submission_job_events_give_the_real_status() -> None:
    builder = JobBuilder()
    for e in EVENTS:
        builder.add(e)
    builder.add(
        {
            "eventType": "SUBMISSION_JOB_LIFECYCLE_EVENT",
            "eventId": "x",
            "timestamp": "2026-12-04T21:06:46Z",
            "submissionJobLifecycleEvent": {
                "submissionId": "capture-job-2",
                "stateTransitions": [
                    {
                        "state": "FAILED",
                        "timestamp": "2026-12-04T21:06:45.5Z",
                        "message": "boom",
                        "errorType": "JOB_ENTRYPOINT_COMMAND_ERROR",
                        "driverExitCode": 1,
                    }
                ],
            },
        }
    )
    jobs = {j["submission_id"]: j for j in builder.build(None, {})}
    assert jobs["capture-job-2"]["status"] == "FAILED"
    assert jobs["capture-job-2"]["driver_exit_code"] == 1
    assert jobs["capture-job-2"]["message"] == "boom"


def test_placement_groups_from_events() -> None:
    b = PlacementGroupBuilder()
    pg = "5RYAIYNCehiZIEXNVw0DAAAA"
    b.add(
        {
            "eventType": "PLACEMENT_GROUP_DEFINITION_EVENT",
            "timestamp": "2026-12-04T21:07:04Z",
            "placementGroupDefinitionEvent": {
                "placementGroupId": pg,
                "name": "pg-demo",
                "creatorJobId": "AwAAAA==",
                "bundles": [{"bundleIndex": 0, "unitResources": {"CPU": 1.0}}],
                "creationRequestReceivedNs": "1796418424081957942",
            },
        }
    )
    b.add(
        {
            "eventType": "PLACEMENT_GROUP_LIFECYCLE_EVENT",
            "timestamp": "2026-12-04T21:07:05Z",
            "placementGroupLifecycleEvent": {
                "placementGroupId": pg,
                "stateTransitions": [
                    {
                        "state": "CREATED",
                        "timestamp": "2026-12-04T21:07:04.1Z",
                        "bundlePlacements": [{"bundleIndex": 0, "nodeId": NODE}],
                    },
                    {"state": "REMOVED", "timestamp": "2026-12-04T21:07:06Z"},
                ],
            },
        }
    )
    (group,) = b.build()
    assert group["placement_group_id"] == "e516002183427a18992045cd570d03000000"
    assert group["state"] == "REMOVED" and group["creator_job_id"] == "03000000"
    assert group["bundles"][0]["node_id"] == NODE
    assert group["bundles"][0]["unit_resources"] == {"CPU": 1.0}


def test_parse_events_reads_jsonl_arrays_gzip_and_snake_case() -> None:
    events = EVENTS[:5]
    jsonl = b"".join(orjson.dumps(e) + b"\n" for e in events)
    assert parse_events(jsonl) == events
    assert parse_events(gzip.compress(jsonl)) == events
    assert parse_events(orjson.dumps(events)) == events
    assert parse_events(gzip.compress(orjson.dumps(events))) == events
    assert parse_events(jsonl + b"not json\n") == events
    snake = snake_bodies()[0]
    parsed = parse_events(orjson.dumps(snake))
    assert parsed and all("sessionName" in e for e in parsed)


async def test_load_from_collector_store_with_snapshot_statuses(tmp_path: Path) -> None:
    store = await collector_store(tmp_path, gz=True)
    snap = await load_session(store, SessionKey(Layout(CLUSTER), SESSION))
    status = {j["submission_id"]: j["status"] for j in snap.jobs}
    assert status == {
        "capture-job-1": "FAILED",
        "capture-job-2": "FAILED",
        "capture-job-3": "SUCCEEDED",
    }
    assert len(snap.placement_groups) == 2
    assert snap.storage_nodes == (NODE,)
    assert snap.stats.events == len(EVENTS) and snap.approx_bytes > 0


async def test_load_kuberay_layout_json_arrays() -> None:
    store, layout = kuberay_layout_store(EVENTS)
    snap = await load_session(store, SessionKey(layout, SESSION))
    assert build_all(EVENTS)["tasks"] == snap.tasks
    assert snap.placement_groups == []
