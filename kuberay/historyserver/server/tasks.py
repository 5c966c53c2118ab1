"""Tasks from TASK_DEFINITION / ACTOR_TASK_DEFINITION / TASK_LIFECYCLE / TASK_PROFILE events.

A task is keyed by ``(task id hex, attempt)``. The events of one key are folded in
``convert.event_order`` (event time, then event id), never in arrival order, so the same set
of events gives the same task however the files were split, named or read:

* a definition sets the task's static fields (name, type, function, job, parent, resources,
  ...); ACTOR_TASK_DEFINITION makes it an ``ACTOR_TASK`` with its actor;
* a lifecycle event adds its state transitions (duplicates by state and time dropped, sorted),
  and sets node, worker, pid, error and each ``taskLogInfo`` field only when it carries a
  non-empty value (Ray sends a log's start and end in separate events);
* a profile event adds its profile entries (deduplicated), as Ray's state API shows them:
  ``start_time``/``end_time`` in Unix ms (floats), ``extra_data`` the parsed JSON object.

The result is Ray's ``TaskState`` as ``/api/v0/tasks?detail=1`` answers it (snake_case,
hex IDs, Unix ms times): ``state`` is the last transition's, ``creation_time_ms`` the first
``PENDING_ARGS_AVAIL``, ``start_time_ms`` the first ``RUNNING``, ``end_time_ms`` the last
``FINISHED`` or ``FAILED``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import orjson

from kuberay.historyserver.server.convert import (
    as_dict,
    as_list,
    as_str,
    event_order,
    hex_id,
    merge_transitions,
    opt_id,
    timestamp_ms,
    to_int,
)
from kuberay.historyserver.server.task_table import INDEX_COLUMNS, TaskTable

TASK_EVENT_TYPES = frozenset(
    {
        "TASK_DEFINITION_EVENT",
        "ACTOR_TASK_DEFINITION_EVENT",
        "TASK_LIFECYCLE_EVENT",
        "TASK_EXECUTION_EVENT",
        "TASK_PROFILE_EVENT",
    }
)
#: Columns ``/api/v0/tasks`` returns without ``detail`` (Ray's non-detail ``TaskState``).
BRIEF_COLUMNS = INDEX_COLUMNS
_LOG_FIELDS = (
    ("stdoutFile", "stdout_file"),
    ("stderrFile", "stderr_file"),
    ("stdoutStart", "stdout_start"),
    ("stdoutEnd", "stdout_end"),
    ("stderrStart", "stderr_start"),
    ("stderrEnd", "stderr_end"),
)
_DONE = ("FINISHED", "FAILED")
_NIL_ACTOR = "f" * 32


#: One object for equal values that many tasks repeat (resources, runtime env, label
#: selectors): a decoded session is read-only, so its tasks may share them. Bounded.
_SHARED: dict[bytes, Any] = {}


def _shared(value: dict[str, Any]) -> dict[str, Any]:
    key = orjson.dumps(value)
    kept = _SHARED.get(key)
    if kept is None:
        if len(_SHARED) >= 1 << 16:
            _SHARED.clear()
        kept = _SHARED[key] = value
    return kept


def _str(value: object) -> str:
    """``as_str``, interned: state names, function names, log paths repeat across tasks."""
    return sys.intern(as_str(value))


_PAYLOADS = {
    "TASK_DEFINITION_EVENT": "taskDefinitionEvent",
    "ACTOR_TASK_DEFINITION_EVENT": "actorTaskDefinitionEvent",
    "TASK_LIFECYCLE_EVENT": "taskLifecycleEvent",
    "TASK_EXECUTION_EVENT": "taskExecutionEvent",
    "TASK_PROFILE_EVENT": "taskProfileEvents",
}


def _payload(event: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = as_str(event.get("eventType"))
    name = _PAYLOADS.get(kind, "")
    return kind, as_dict(event.get(name)) if name else {}


def task_key(event: dict[str, Any]) -> tuple[str, int] | None:
    """``(task id hex, attempt)`` of a task event, ``None`` for other events."""
    kind, payload = _payload(event)
    if kind not in TASK_EVENT_TYPES:
        return None
    task_id = hex_id(payload.get("taskId"))
    if not task_id:
        return None
    attempt_field = "attemptNumber" if kind == "TASK_PROFILE_EVENT" else "taskAttempt"
    return task_id, to_int(payload.get(attempt_field))


def func_name(descriptor: object) -> str:
    """Ray's ``func_or_class_name`` from a ``FunctionDescriptor``: ``Class.function`` or
    ``function`` (Python), the class and method for Java and C++ alike."""
    for value in as_dict(descriptor).values():
        d = as_dict(value)
        cls = as_str(d.get("className"))
        fn = as_str(d.get("functionName"))
        if fn:
            return f"{cls}.{fn}" if cls else fn
    return ""


def _actor_of_creation(task_id: str) -> str | None:
    # An actor creation task's ID is 8 0xff bytes followed by the actor's 16-byte ID.
    return task_id[16:] if len(task_id) == 48 else None


class TaskBuilder:
    """Collects task events; ``build`` folds them into ``TaskState`` dicts."""

    def __init__(self) -> None:
        self._events: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)

    def add(self, event: dict[str, Any]) -> bool:
        """Keep ``event`` if it is a task event; returns whether it was."""
        key = task_key(event)
        if key is None:
            return False
        self._events[key].append(event)
        return True

    def build(self) -> TaskTable:
        """Every task, sorted by task ID then attempt (the dashboard's order); each key's
        events are dropped once folded."""
        events = self._events
        self._events = defaultdict(list)
        return TaskTable(_fold(key, events.pop(key)) for key in sorted(events))


def _new_task(task_id: str, attempt: int) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "attempt_number": attempt,
        "name": "",
        "state": "NIL",
        "job_id": "",
        "actor_id": None,
        "type": "NORMAL_TASK",
        "func_or_class_name": "",
        "parent_task_id": "",
        "node_id": None,
        "worker_id": None,
        "worker_pid": None,
        "error_type": None,
        "language": None,
        "required_resources": {},
        "runtime_env_info": None,
        "placement_group_id": None,
        "events": [],
        "profiling_data": None,
        "creation_time_ms": None,
        "start_time_ms": None,
        "end_time_ms": None,
        "task_log_info": None,
        "error_message": None,
        "is_debugger_paused": None,
        "call_site": None,
        "label_selector": {},
    }


def _define(task: dict[str, Any], kind: str, d: dict[str, Any]) -> None:
    actor_task = kind == "ACTOR_TASK_DEFINITION_EVENT"
    task["type"] = "ACTOR_TASK" if actor_task else _str(d.get("taskType")) or "NORMAL_TASK"
    task["name"] = _str(d.get("actorTaskName" if actor_task else "taskName"))
    task["func_or_class_name"] = _str(func_name(d.get("actorFunc" if actor_task else "taskFunc")))
    task["job_id"] = hex_id(d.get("jobId")) or task["job_id"]
    task["parent_task_id"] = hex_id(d.get("parentTaskId"))
    task["language"] = _str(d.get("language")) or None
    task["required_resources"] = _shared(as_dict(d.get("requiredResources")))
    task["placement_group_id"] = opt_id(d.get("placementGroupId"))
    env = as_str(d.get("serializedRuntimeEnv"))
    task["runtime_env_info"] = _shared({"serialized_runtime_env": env}) if env else None
    task["call_site"] = as_str(d.get("callSite")) or None
    task["label_selector"] = _shared(as_dict(d.get("labelSelector")))
    if actor_task:
        task["actor_id"] = opt_id(d.get("actorId"))
    elif task["type"] == "ACTOR_CREATION_TASK":
        task["actor_id"] = _actor_of_creation(task["task_id"])
    if not task["name"]:
        task["name"] = task["func_or_class_name"]


def _lifecycle(task: dict[str, Any], d: dict[str, Any], transitions: list[Any]) -> None:
    transitions.extend(as_list(d.get("stateTransitions")))  # merged once, in ``_fold``
    if not task["job_id"]:
        task["job_id"] = hex_id(d.get("jobId"))
    node = hex_id(d.get("nodeId"))
    if node:
        task["node_id"] = node
    worker = hex_id(d.get("workerId"))
    if worker:
        task["worker_id"] = worker
    pid = to_int(d.get("workerPid"))
    if pid:
        task["worker_pid"] = pid
    error = as_dict(d.get("rayErrorInfo"))
    if error:
        task["error_type"] = as_str(error.get("errorType")) or task["error_type"]
        task["error_message"] = as_str(error.get("errorMessage")) or task["error_message"]
    if d.get("isDebuggerPaused") is True:
        task["is_debugger_paused"] = True
    logs = as_dict(d.get("taskLogInfo"))
    if logs:
        info = task["task_log_info"] or {}
        for src, dst in _LOG_FIELDS:
            value = logs.get(src)
            if value in (None, ""):
                continue
            info[dst] = to_int(value) if dst.endswith(("_start", "_end")) else _str(value)
        task["task_log_info"] = info or None


def _profile(task: dict[str, Any], d: dict[str, Any], seen: set[tuple[str, str, str]]) -> None:
    pe = as_dict(d.get("profileEvents"))
    data = task["profiling_data"]
    if data is None:
        data = task["profiling_data"] = {
            "component_type": _str(pe.get("componentType")),
            "component_id": hex_id(pe.get("componentId")),
            "node_ip_address": _str(pe.get("nodeIpAddress")),
            "events": [],
        }
    for e in as_list(pe.get("events")):
        e = as_dict(e)
        key = (as_str(e.get("eventName")), str(e.get("startTime")), str(e.get("endTime")))
        if key in seen:
            continue
        seen.add(key)
        data["events"].append(
            {
                "event_name": _str(key[0]),
                "start_time": to_int(e.get("startTime")) / 1e6,
                "end_time": to_int(e.get("endTime")) / 1e6,
                "extra_data": _extra_data(e.get("extraData")),
            }
        )
        if not task["func_or_class_name"] and key[0].startswith("task::"):
            task["func_or_class_name"] = key[0].removeprefix("task::")
    data["events"].sort(key=lambda x: (x["start_time"], x["end_time"], x["event_name"]))


def _extra_data(raw: object) -> dict[str, Any]:
    # Ray's state API parses the JSON string; anything unparsable becomes ``{}``.
    if isinstance(raw, dict):
        return dict(raw)
    try:
        parsed = orjson.loads(as_str(raw) or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _fold(key: tuple[str, int], events: list[dict[str, Any]]) -> dict[str, Any]:
    task = _new_task(*key)
    transitions: list[dict[str, Any]] = []
    seen_profile: set[tuple[str, str, str]] = set()
    for event in sorted(events, key=event_order):
        kind, d = _payload(event)
        if kind in ("TASK_DEFINITION_EVENT", "ACTOR_TASK_DEFINITION_EVENT"):
            _define(task, kind, d)
        elif kind in ("TASK_LIFECYCLE_EVENT", "TASK_EXECUTION_EVENT"):
            _lifecycle(task, d, transitions)
        elif kind == "TASK_PROFILE_EVENT":
            _profile(task, d, seen_profile)
    transitions = merge_transitions([], transitions)
    task["events"] = [
        {"state": _str(t.get("state")), "created_ms": timestamp_ms(t.get("timestamp"))}
        for t in transitions
    ]
    if transitions:
        task["state"] = as_str(transitions[-1].get("state")) or "NIL"
    for t in task["events"]:
        if t["state"] == "PENDING_ARGS_AVAIL" and task["creation_time_ms"] is None:
            task["creation_time_ms"] = t["created_ms"]
        if t["state"] == "RUNNING" and task["start_time_ms"] is None:
            task["start_time_ms"] = t["created_ms"]
        if t["state"] in _DONE:
            task["end_time_ms"] = t["created_ms"]
    if task["actor_id"] == _NIL_ACTOR:
        task["actor_id"] = None
    return task


# ----- queries ------------------------------------------------------------------------------
#: ``filter_keys`` KubeRay accepts, mapped to Ray's column names (Ray's own names work too).
FILTER_ALIASES = {"task_type": "type", "task_name": "name"}
_CASELESS = frozenset({"state", "type", "language", "error_type"})


class FilterError(ValueError):
    """A filter the tasks API does not support (answered 400)."""


def parse_filters(
    keys: list[str],
    predicates: list[str],
    values: list[str],
    *,
    columns: frozenset[str] | None = None,
) -> list[tuple[str, str, str]]:
    """``(column, predicate, value)`` triples from Ray's parallel ``filter_keys``,
    ``filter_predicates`` and ``filter_values`` lists; predicates are ``=`` and ``!=``;
    ``columns`` the keys allowed (default: a task's)."""
    if not (len(keys) == len(values) and len(predicates) in (0, len(keys))):
        raise FilterError("filter_keys, filter_predicates and filter_values must pair up")
    out = []
    for i, key in enumerate(keys):
        column = FILTER_ALIASES.get(key, key) if columns is None else key
        if column not in (_new_task("", 0) if columns is None else columns):
            raise FilterError(f"unsupported filter key {key!r}")
        pred = predicates[i] if predicates else "="
        if pred not in ("=", "!="):
            raise FilterError(f"unsupported filter predicate {pred!r}: use = or !=")
        out.append((column, pred, values[i]))
    return out


def _matches(actual: object, column: str, pred: str, value: str) -> bool:
    text = "" if actual is None else str(actual)
    equal = text.lower() == value.lower() if column in _CASELESS else text == value
    return equal if pred == "=" else not equal


def select(
    table: TaskTable,
    filters: list[tuple[str, str, str]],
    *,
    exclude_driver: bool = True,
) -> list[int]:
    """Positions in ``table`` of the tasks passing every filter (and, by default, not
    ``DRIVER_TASK``), in table order. Filters on indexed columns decode nothing."""
    out = []
    indexed = all(c in INDEX_COLUMNS for c, _, _ in filters)
    for i in range(len(table)):
        if exclude_driver and table.is_driver(i):
            continue
        if indexed:
            if all(_matches(table.column(i, c), c, p, v) for c, p, v in filters):
                out.append(i)
            continue
        task = table[i]
        if all(_matches(task.get(c), c, p, v) for c, p, v in filters):
            out.append(i)
    return out


def select_tasks(
    table: TaskTable,
    filters: list[tuple[str, str, str]],
    *,
    exclude_driver: bool = True,
) -> list[dict[str, Any]]:
    """The tasks passing every filter (and, by default, not ``DRIVER_TASK``), decoded."""
    return [table[i] for i in select(table, filters, exclude_driver=exclude_driver)]


def brief(task: dict[str, Any]) -> dict[str, Any]:
    """A task as ``/api/v0/tasks`` shows it without ``detail``."""
    return {c: task[c] for c in BRIEF_COLUMNS}


def summarize_by_func_name(tasks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Ray's ``TaskSummaries`` keyed by ``func_or_class_name``: per name its type and a
    count per state, plus the totals."""
    summary: dict[str, dict[str, Any]] = {}
    total_actor_tasks = total_actor_scheduled = 0
    for t in tasks:
        name = t["func_or_class_name"] or t["name"]
        entry = summary.setdefault(
            name, {"func_or_class_name": name, "type": t["type"], "state_counts": {}}
        )
        counts = entry["state_counts"]
        counts[t["state"]] = counts.get(t["state"], 0) + 1
        if t["type"] == "ACTOR_TASK":
            total_actor_tasks += 1
        elif t["type"] == "ACTOR_CREATION_TASK":
            total_actor_scheduled += 1
    return {
        "summary": summary,
        "total_tasks": len(tasks) - total_actor_tasks - total_actor_scheduled,
        "total_actor_tasks": total_actor_tasks,
        "total_actor_scheduled": total_actor_scheduled,
        "summary_by": "func_name",
    }
