"""Jobs (``/api/jobs/``): driver jobs from events, their real status from submission-job
events or, failing those, from the collector's snapshot of ``/api/jobs/``.

Sources, each folded in ``convert.event_order``:

* DRIVER_JOB_DEFINITION/LIFECYCLE: job ID, driver (node, IP, pid), entrypoint, metadata,
  runtime env; ``CREATED`` gives ``start_time``, ``FINISHED`` ``end_time``. A driver whose
  metadata carries ``job_submission_id`` belongs to that submission (type ``SUBMISSION``).
* SUBMISSION_JOB_DEFINITION/LIFECYCLE (Ray 2.56+, sent only when enabled): the submission's
  own state (PENDING, RUNNING, STOPPED, SUCCEEDED, FAILED), message, error type, exit code.
* The snapshot ``fetched_endpoints/restful__api__jobs`` (Ray's answer at the last poll).

A job's ``status`` is taken, first found: its latest submission-job transition; the
snapshot's; Ray's own rule for a plain driver (``FINISHED`` -> ``SUCCEEDED``, else
``RUNNING``), used also for a submission with no other record (its ``message`` then says the
status was inferred). The shape is Ray's ``JobDetails``; jobs are keyed by submission ID when
they have one, else by job ID.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import orjson

from kuberay.historyserver.server.convert import (
    as_dict,
    as_list,
    as_str,
    event_order,
    hex_id,
    merge_transitions,
    timestamp_ms,
    to_int,
)

DRIVER_TYPES = frozenset({"DRIVER_JOB_DEFINITION_EVENT", "DRIVER_JOB_LIFECYCLE_EVENT"})
SUBMISSION_TYPES = frozenset({"SUBMISSION_JOB_DEFINITION_EVENT", "SUBMISSION_JOB_LIFECYCLE_EVENT"})
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})
INFERRED_MESSAGE = (
    "status inferred from the driver's lifecycle events: no submission-job record was stored"
)
_PAYLOAD = {
    "DRIVER_JOB_DEFINITION_EVENT": "driverJobDefinitionEvent",
    "DRIVER_JOB_LIFECYCLE_EVENT": "driverJobLifecycleEvent",
    "SUBMISSION_JOB_DEFINITION_EVENT": "submissionJobDefinitionEvent",
    "SUBMISSION_JOB_LIFECYCLE_EVENT": "submissionJobLifecycleEvent",
}


def _runtime_env(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text) if text else {}
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class JobBuilder:
    """Collects driver- and submission-job events; ``build`` merges them with a snapshot."""

    def __init__(self) -> None:
        self._drivers: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._submissions: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def add(self, event: dict[str, Any]) -> bool:
        """Keep ``event`` if it is a job event; returns whether it was."""
        kind = as_str(event.get("eventType"))
        if kind not in _PAYLOAD:
            return False
        payload = as_dict(event.get(_PAYLOAD[kind]))
        if kind in DRIVER_TYPES:
            job = hex_id(payload.get("jobId"))
            if job:
                self._drivers[job].append(event)
        else:
            sub = as_str(payload.get("submissionId"))
            if sub:
                self._submissions[sub].append(event)
        return True

    def build(
        self, snapshot: list[dict[str, Any]] | None, node_ips: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        """Every job as ``JobDetails``: the snapshot's order first, then the others by key."""
        drivers = {j: _driver(j, evs, node_ips) for j, evs in self._drivers.items()}
        submissions = {s: _submission(s, evs) for s, evs in self._submissions.items()}
        jobs: dict[str, dict[str, Any]] = {}
        for entry in snapshot or []:
            key = as_str(entry.get("submission_id")) or as_str(entry.get("job_id"))
            if key:
                jobs[key] = dict(entry)
        from_snapshot = set(jobs)
        for driver in drivers.values():
            key = driver["submission_id"] or driver["job_id"]
            job = jobs.setdefault(key, _empty_job(driver["type"]))
            for field, value in driver.items():
                if field.startswith("_"):
                    continue
                if job.get(field) in (None, "", {}):
                    job[field] = value
        for sub, record in submissions.items():
            job = jobs.setdefault(sub, _empty_job("SUBMISSION"))
            job["submission_id"] = sub
            for field, value in record.items():
                if value is not None and not (field != "status" and job.get(field)):
                    job[field] = value
        for key, job in jobs.items():
            if job.get("status"):
                continue
            own = drivers.get(as_str(job.get("job_id")))
            finished = bool(own and own["_finished"])
            job["status"] = "SUCCEEDED" if finished else "RUNNING"
            if job.get("type") == "SUBMISSION" and key not in submissions:
                job["message"] = job.get("message") or INFERRED_MESSAGE
        ordered = [jobs[k] for k in jobs if k in from_snapshot]
        ordered += [jobs[k] for k in sorted(jobs) if k not in from_snapshot]
        return ordered


def _empty_job(kind: str) -> dict[str, Any]:
    return {
        "type": kind,
        "job_id": None,
        "submission_id": None,
        "driver_info": None,
        "status": None,
        "entrypoint": "",
        "message": None,
        "error_type": None,
        "start_time": None,
        "end_time": None,
        "metadata": {},
        "runtime_env": {},
        "driver_agent_http_address": None,
        "driver_node_id": None,
        "driver_exit_code": None,
    }


def _driver(
    job_id: str, events: list[dict[str, Any]], node_ips: Mapping[str, str]
) -> dict[str, Any]:
    out: dict[str, Any] = {"job_id": job_id, "_finished": False}
    transitions: list[dict[str, Any]] = []
    for event in sorted(events, key=event_order):
        kind = as_str(event.get("eventType"))
        d = as_dict(event.get(_PAYLOAD[kind]))
        if kind == "DRIVER_JOB_DEFINITION_EVENT":
            node = hex_id(d.get("driverNodeId"))
            config = as_dict(d.get("config"))
            metadata = {str(k): str(v) for k, v in as_dict(config.get("metadata")).items()}
            out.update(
                entrypoint=as_str(d.get("entrypoint")),
                driver_node_id=node or None,
                driver_info={
                    "id": job_id,
                    "node_ip_address": node_ips.get(node, ""),
                    "pid": str(to_int(d.get("driverPid"))),
                },
                metadata=metadata,
                runtime_env=_runtime_env(as_str(config.get("serializedRuntimeEnv"))),
                submission_id=metadata.get("job_submission_id") or None,
            )
        else:
            transitions = merge_transitions(transitions, as_list(d.get("stateTransitions")))
    for t in transitions:
        if t.get("state") == "CREATED" and out.get("start_time") is None:
            out["start_time"] = timestamp_ms(t.get("timestamp"))
        elif t.get("state") == "FINISHED":
            out["end_time"] = timestamp_ms(t.get("timestamp"))
            out["_finished"] = True
    out.setdefault("submission_id", None)
    out["type"] = "SUBMISSION" if out["submission_id"] else "DRIVER"
    return out


def _submission(sub: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"status": None}
    transitions: list[dict[str, Any]] = []
    for event in sorted(events, key=event_order):
        kind = as_str(event.get("eventType"))
        d = as_dict(event.get(_PAYLOAD[kind]))
        if kind == "SUBMISSION_JOB_DEFINITION_EVENT":
            if as_str(d.get("entrypoint")):
                out["entrypoint"] = as_str(d.get("entrypoint"))
            metadata = as_dict(d.get("metadata")) or as_dict(
                as_dict(d.get("config")).get("metadata")
            )
            if metadata:
                out["metadata"] = metadata
        else:
            transitions = merge_transitions(transitions, as_list(d.get("stateTransitions")))
    for t in transitions:
        state = as_str(t.get("state"))
        if not state or state == "UNSPECIFIED":
            continue
        ms = timestamp_ms(t.get("timestamp"))
        out["status"] = state
        if state == "PENDING" and out.get("start_time") is None:
            out["start_time"] = ms
        if state in TERMINAL:
            out["end_time"] = ms
        for src, dst in (
            ("message", "message"),
            ("errorType", "error_type"),
            ("driverAgentHttpAddress", "driver_agent_http_address"),
        ):
            if as_str(t.get(src)):
                out[dst] = as_str(t.get(src))
        if hex_id(t.get("driverNodeId")):
            out["driver_node_id"] = hex_id(t.get("driverNodeId"))
        if state in TERMINAL and "driverExitCode" in t:
            out["driver_exit_code"] = to_int(t.get("driverExitCode"))
    return out


def find_job(jobs: list[dict[str, Any]], job_or_submission_id: str) -> dict[str, Any] | None:
    """The job whose ``job_id`` or ``submission_id`` is the given ID, ``None`` if none."""
    for job in jobs:
        if job_or_submission_id in (job.get("job_id"), job.get("submission_id")):
            return job
    return None
