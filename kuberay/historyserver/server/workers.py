"""Workers (``/api/v0/workers``) from Ray's WORKER_* events, where Ray sends them.

Ray 2.60 defines ``WORKER_DEFINITION_EVENT`` (``workerId``, ``nodeId``, ``workerType``,
``pid``; once, when the worker registers) and ``WORKER_LIFECYCLE_EVENT`` (``workerId``,
``jobId`` and ``stateTransitions``: ``ALIVE``/``DEAD`` with the launch, launched, start and
end times in ms and, when dead, ``deathInfo{exitType, exitDetail}``); 2.56 sends neither, and
neither is in the operator's default export list (add them to
``RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES``). Events are folded per worker in
``convert.event_order`` and transitions are merged and sorted, so arrival order does not
matter. The result is Ray's ``WorkerState`` (detail) per worker, by worker ID; the node's IP
comes from the node events. A session without worker events has none (``build`` gives
``None``) and the route serves the collector's stored ``/api/v0/workers`` snapshot instead.
"""

from __future__ import annotations

from typing import Any

from kuberay.historyserver.server.convert import (
    EventsById,
    as_dict,
    as_list,
    as_str,
    event_order,
    hex_id,
    merge_transitions,
    to_int,
)

_PAYLOAD = {
    "WORKER_DEFINITION_EVENT": "workerDefinitionEvent",
    "WORKER_LIFECYCLE_EVENT": "workerLifecycleEvent",
}
#: ``WorkerState``'s columns without ``detail=1``.
BRIEF_COLUMNS = ("worker_id", "is_alive", "worker_type", "exit_type", "node_id", "ip", "pid")
FILTER_COLUMNS = frozenset(BRIEF_COLUMNS)


class WorkerBuilder:
    """Collects worker events; ``build`` folds them into ``WorkerState`` dicts."""

    def __init__(self) -> None:
        self._events = EventsById(_PAYLOAD, "workerId")

    def add(self, event: dict[str, Any]) -> bool:
        """Keep ``event`` if it is a worker event; returns whether it was."""
        return self._events.add(event)

    def build(self, node_ips: dict[str, str]) -> list[dict[str, Any]] | None:
        """Every worker seen, by ID; ``None`` when no worker event was seen."""
        if not self._events:
            return None
        return [_fold(w, events, node_ips) for w, events in self._events.by_id()]


def _fold(worker: str, events: list[dict[str, Any]], node_ips: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "worker_id": worker,
        "is_alive": False,
        "worker_type": "WORKER",
        "exit_type": None,
        "node_id": "",
        "ip": "",
        "pid": 0,
        "exit_detail": None,
        "worker_launch_time_ms": -1,
        "worker_launched_time_ms": -1,
        "start_time_ms": 0,
        "end_time_ms": 0,
        "debugger_port": None,
        "num_paused_threads": None,
        "job_id": "",
    }
    transitions: list[dict[str, Any]] = []
    for event in sorted(events, key=event_order):
        kind = as_str(event.get("eventType"))
        d = as_dict(event.get(_PAYLOAD[kind]))
        if kind == "WORKER_DEFINITION_EVENT":
            out["node_id"] = hex_id(d.get("nodeId")) or out["node_id"]
            out["worker_type"] = as_str(d.get("workerType")) or out["worker_type"]
            out["pid"] = to_int(d.get("pid")) or out["pid"]
        else:
            out["job_id"] = hex_id(d.get("jobId")) or out["job_id"]
            transitions = merge_transitions(transitions, as_list(d.get("stateTransitions")))
        if not out["node_id"] and event.get("nodeId"):
            out["node_id"] = hex_id(event.get("nodeId"))
    for t in transitions:
        out["is_alive"] = as_str(t.get("state")) != "DEAD"
        for field, key in (
            ("worker_launch_time_ms", "workerLaunchTimeMs"),
            ("worker_launched_time_ms", "workerLaunchedTimeMs"),
            ("start_time_ms", "startTimeMs"),
            ("end_time_ms", "endTimeMs"),
        ):
            value = to_int(t.get(key))
            if value:
                out[field] = value
        death = as_dict(t.get("deathInfo"))
        if death:
            out["exit_type"] = as_str(death.get("exitType")) or out["exit_type"]
            out["exit_detail"] = as_str(death.get("exitDetail")) or out["exit_detail"]
    out["ip"] = node_ips.get(out["node_id"], "")
    return out


def matches(worker: dict[str, Any], column: str, pred: str, value: str) -> bool:
    """Whether ``worker`` passes one filter (``is_alive`` compares as ``true``/``false``)."""
    actual = worker.get(column)
    if isinstance(actual, bool):
        equal = value.strip().lower() in (("true", "1") if actual else ("false", "0"))
    else:
        equal = ("" if actual is None else str(actual)) == value
    return equal if pred == "=" else not equal
