"""Checking, snake_case conversion and filing of Ray's events."""

from __future__ import annotations

import json

import pytest

from kuberay.historyserver.collector.event_check import (
    BadEvents,
    category_of,
    job_finished_in,
    parse_batch,
    valid_timestamp,
)
from tests.unit.historyserver.fixtures import camel_bodies, snake_as_camel, snake_bodies


def _event(**over: object) -> dict[str, object]:
    e: dict[str, object] = {
        "eventId": "AAEC",
        "eventType": "TASK_DEFINITION_EVENT",
        "timestamp": "2026-12-04T21:06:13.523895643Z",
        "sessionName": "session_2026-12-04_21-06-04_046894_18728",
    }
    e.update(over)
    return e


def test_recorded_camel_bodies_pass_unchanged() -> None:
    for body in camel_bodies():
        assert parse_batch(json.dumps(body).encode()) == body


def test_snake_case_becomes_what_rays_protobuf_writes_as_camel_case() -> None:
    for body, expected in zip(snake_bodies(), snake_as_camel(), strict=True):
        assert parse_batch(json.dumps(body).encode()) == expected


def test_map_keys_are_data_and_keep_their_underscores() -> None:
    (event,) = parse_batch(
        json.dumps(
            [
                {
                    "event_type": "TASK_DEFINITION_EVENT",
                    "timestamp": "2026-12-04T21:06:13Z",
                    "session_name": "s1",
                    "task_definition_event": {
                        "job_id": "AQAAAA==",
                        "required_resources": {"my_gpu_type": 1.0},
                        "label_selector": {"team_name": "a_b"},
                        "task_func": {"python_function_descriptor": {"module_name": "m"}},
                    },
                }
            ]
        ).encode()
    )
    tdef = event["taskDefinitionEvent"]
    assert tdef["requiredResources"] == {"my_gpu_type": 1.0}
    assert tdef["labelSelector"] == {"team_name": "a_b"}
    assert tdef["taskFunc"] == {"pythonFunctionDescriptor": {"moduleName": "m"}}
    assert event["sessionName"] == "s1"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"{not json", "not JSON"),
        (b'{"a": 1}', "array"),
        (b"[1]", "not an object"),
        (json.dumps([_event(timestamp=None)]).encode(), "timestamp not found"),
        (json.dumps([_event(timestamp="yesterday")]).encode(), "RFC 3339"),
        (json.dumps([_event(sessionName=None)]).encode(), "sessionName not found"),
        (json.dumps([_event(sessionName="..")]).encode(), "invalid sessionName"),
        (json.dumps([_event(sessionName=".")]).encode(), "invalid sessionName"),
        (json.dumps([_event(sessionName="a/b")]).encode(), "invalid sessionName"),
        (json.dumps([_event(), _event(sessionName="../x")]).encode(), "event 1"),
    ],
)
def test_bad_batches_are_rejected_whole(body: bytes, why: str) -> None:
    with pytest.raises(BadEvents, match=why):
        parse_batch(body)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-12-04T21:06:13.523895643Z", True),
        ("2026-12-04T21:06:13Z", True),
        ("2026-12-04T21:06:13.5+02:00", True),
        ("2026-12-04 21:06:13Z", False),
        ("2026-13-04T21:06:13Z", False),
        ("2026-02-30T21:06:13Z", False),
        ("2026-12-04T21:06:13.1234567890Z", False),
        ("2026-12-04T21:06:13", False),
        (1764882373, False),
    ],
)
def test_timestamps_follow_rfc3339nano(value: object, ok: bool) -> None:
    assert valid_timestamp(value) is ok


def test_filing_follows_kuberay() -> None:
    assert (
        category_of(
            _event(eventType="NODE_DEFINITION_EVENT", taskDefinitionEvent={"jobId": "AQAAAA=="})
        )
        == "node_events"
    )
    assert category_of(_event(taskDefinitionEvent={"jobId": "AQAAAA=="})) == "job_events/01000000"
    assert category_of(_event(actorDefinitionEvent={"jobId": "AgAAAA=="})) == "job_events/02000000"
    assert (
        category_of(_event(eventType="ACTOR_LIFECYCLE_EVENT", actorLifecycleEvent={}))
        == "node_events"
    )
    assert category_of(_event(taskDefinitionEvent={"jobId": ""})) == "node_events"
    assert category_of(_event(taskDefinitionEvent={"jobId": "../../x"})) == "node_events"


def test_recorded_events_are_filed_by_job() -> None:
    cats = {category_of(e) for body in camel_bodies() for e in body}
    assert cats == {"node_events"} | {f"job_events/0{i}000000" for i in range(1, 6)}


def test_a_finished_driver_in_the_recording_is_noticed() -> None:
    bodies = camel_bodies()
    finished = [i for i, b in enumerate(bodies) if job_finished_in(b)]
    assert finished, "the recording has DRIVER_JOB_LIFECYCLE FINISHED transitions"
    assert not job_finished_in(
        [e for e in bodies[0] if e["eventType"] != "DRIVER_JOB_LIFECYCLE_EVENT"]
    )
    submission = _event(
        eventType="SUBMISSION_JOB_LIFECYCLE_EVENT",
        submissionJobLifecycleEvent={"stateTransitions": [{"state": "FAILED"}]},
    )
    assert job_finished_in([submission])
