"""Checking, normalising and filing Ray's exported events (KubeRay ``PersistEvents``).

A body is a JSON array of ``RayEvent`` objects. Each needs a ``timestamp`` string in RFC 3339
(nanosecond precision allowed) and a ``sessionName`` that is one safe key segment; one bad
event rejects the whole batch before anything is written.

Ray sends camelCase by default and snake_case with
``RAY_DASHBOARD_AGGREGATOR_AGENT_PRESERVE_PROTO_FIELD_NAME=true``; a snake_case event is
renamed to protobuf's JSON names (``task_id`` -> ``taskId``) before it is written, so every
stored event is camelCase as KubeRay's server reads it. Map fields (``labels``,
``requiredResources``, ...) keep their keys: those are user data, not field names.
"""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

from kuberay.gocompat.gotime import rfc3339_nanos
from kuberay.historyserver.ids import InvalidID, to_hex
from kuberay.historyserver.layout import (
    JOB_EVENTS_DIR,
    NODE_EVENTS_DIR,
    is_safe_segment,
    to_camel,
)

NODE_EVENT_TYPES = frozenset({"NODE_DEFINITION_EVENT", "NODE_LIFECYCLE_EVENT"})
#: Payloads whose ``jobId`` files the event under ``job_events/<job>`` (KubeRay's list).
JOB_PAYLOADS = (
    "driverJobDefinitionEvent",
    "driverJobLifecycleEvent",
    "taskDefinitionEvent",
    "taskLifecycleEvent",
    "taskProfileEvents",
    "actorTaskDefinitionEvent",
    "actorDefinitionEvent",
)


class BadEvents(ValueError):
    """The batch is not acceptable (answered 400); the message says why."""


def valid_timestamp(value: object) -> bool:
    """Whether ``value`` parses as Go's ``time.RFC3339Nano``."""
    return isinstance(value, str) and rfc3339_nanos(value) is not None


def parse_batch(body: bytes) -> list[dict[str, Any]]:
    """The events of one POST, checked and in camelCase; raises ``BadEvents``."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadEvents(f"body is not JSON: {exc}") from None
    if not isinstance(data, list):
        raise BadEvents("body must be a JSON array of events")
    events: list[dict[str, Any]] = []
    for index, raw in enumerate(data):
        if not isinstance(raw, dict):
            raise BadEvents(f"event {index} is not an object")
        event = to_camel(raw)
        timestamp = event.get("timestamp")
        if not isinstance(timestamp, str):
            raise BadEvents(f"event {index}: timestamp not found")
        session = event.get("sessionName")
        if not isinstance(session, str):
            raise BadEvents(f"event {index}: sessionName not found")
        if not is_safe_segment(session):
            raise BadEvents(f"event {index}: invalid sessionName {session!r}")
        if not valid_timestamp(timestamp):
            raise BadEvents(f"event {index}: timestamp {timestamp!r} is not RFC 3339")
        events.append(event)
    return events


def job_id_of(event: dict[str, Any]) -> str:
    """The hex job ID from the first job-bearing payload, ``""`` when none (or unsafe)."""
    for payload in JOB_PAYLOADS:
        nested = event.get(payload)
        if not isinstance(nested, dict):
            continue
        job = nested.get("jobId")
        if job is None or job == "":
            continue
        text = job if isinstance(job, str) else str(job)
        with contextlib.suppress(InvalidID):
            text = to_hex(text)
        return text if is_safe_segment(text) else ""
    return ""


def category_of(event: dict[str, Any]) -> str:
    """``node_events`` or ``job_events/<jobHex>`` (KubeRay ``categorize``)."""
    if event.get("eventType") in NODE_EVENT_TYPES:
        return NODE_EVENTS_DIR
    job = job_id_of(event)
    return f"{JOB_EVENTS_DIR}/{job}" if job else NODE_EVENTS_DIR


def job_finished_in(events: list[dict[str, Any]]) -> bool:
    """Whether a batch says a job ended: a driver job's ``FINISHED`` transition or a
    submission job's ``SUCCEEDED``/``FAILED``/``STOPPED``."""
    for event in events:
        kind = event.get("eventType")
        if kind == "DRIVER_JOB_LIFECYCLE_EVENT":
            payload, done = event.get("driverJobLifecycleEvent"), _DRIVER_DONE
        elif kind == "SUBMISSION_JOB_LIFECYCLE_EVENT":
            payload, done = event.get("submissionJobLifecycleEvent"), _SUBMISSION_DONE
        else:
            continue
        transitions = payload.get("stateTransitions") if isinstance(payload, dict) else None
        for t in transitions if isinstance(transitions, list) else []:
            if isinstance(t, dict) and t.get("state") in done:
                return True
    return False


_DRIVER_DONE = frozenset({"FINISHED"})
_SUBMISSION_DONE = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})
