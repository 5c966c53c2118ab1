"""``/api/v0/tasks/timeline``: a Chrome trace (Perfetto / ``chrome://tracing``) of the tasks.

Same shape as Ray's ``chrome_tracing_dump`` (``ray/_private/profiling.py``):

* one complete event (``ph: "X"``) per profile entry of a ``worker`` or ``driver``
  component: ``cat`` is the entry's name, ``name`` the entry's name (or its
  ``extra_data.name``), ``pid`` an index per node IP, ``tid`` an index per
  (node, ``<component_type>:<component_id>``), ``ts``/``dur`` in microseconds, ``cname``
  Ray's colour for the entry, ``args`` the entry's ``extra_data`` plus ``task_id``,
  ``job_id``, ``attempt_number``, ``func_or_class_name`` and ``actor_id``;
* then one ``process_name`` metadata event (``ph: "M"``) per node (``Node <ip>``) and one
  ``thread_name`` per worker (``<component_type>:<component_id>``).

Beyond Ray: Ray's default event export leaves TASK_PROFILE_EVENT out, so a session often
has no profile entries. A task without any that ran (a RUNNING and an end time, a node and
a worker) still gets one complete event spanning RUNNING to its end, named ``task::<func>``
with ``args.source == "lifecycle"``, so the timeline is never empty when tasks ran.
"""

from __future__ import annotations

from typing import Any

_COLOURS = {
    "worker_idle": "cq_build_abandoned",
    "task": "rail_response",
    "task:deserialize_arguments": "rail_load",
    "task:execute": "rail_animation",
    "task:store_outputs": "rail_idle",
    "wait_for_function": "detailed_memory_dump",
    "ray.get": "good",
    "ray.put": "terrible",
    "ray.wait": "vsync_highlight_color",
    "submit_task": "background_memory_dump",
    "fetch_and_run_function": "detailed_memory_dump",
    "register_remote_function": "detailed_memory_dump",
}
_DEFAULT_COLOUR = "generic_work"


def colour(event_name: str) -> str:
    """Ray's trace colour name for a profile entry name."""
    return _COLOURS.get(event_name, _DEFAULT_COLOUR)


class _Indexes:
    """Node IP -> pid and (pid, component) -> tid, numbered in order of first use."""

    def __init__(self) -> None:
        self.nodes: dict[str, int] = {}
        self.workers: dict[tuple[int, str], int] = {}

    def pid_tid(self, node_ip: str, component: str) -> tuple[int, int]:
        pid = self.nodes.setdefault(node_ip, len(self.nodes))
        tid = self.workers.setdefault((pid, component), len(self.workers))
        return pid, tid


def _task_args(task: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    args = dict(extra)
    args["task_id"] = task["task_id"]
    args["job_id"] = task["job_id"]
    args["attempt_number"] = task["attempt_number"]
    args["func_or_class_name"] = task["func_or_class_name"]
    args["actor_id"] = task["actor_id"]
    return args


def _profile_events(task: dict[str, Any], idx: _Indexes) -> list[dict[str, Any]]:
    data = task.get("profiling_data") or {}
    kind = data.get("component_type", "")
    if kind not in ("worker", "driver"):
        return []
    component = f"{kind}:{data.get('component_id', '')}"
    out = []
    for e in data.get("events", []):
        extra = e.get("extra_data") if isinstance(e.get("extra_data"), dict) else {}
        name = e["event_name"]
        pid, tid = idx.pid_tid(data.get("node_ip_address", ""), component)
        start_us = e["start_time"] * 1e3
        out.append(
            {
                "cat": name,
                "name": extra.get("name", name),
                "pid": pid,
                "tid": tid,
                "ts": start_us,
                "dur": e["end_time"] * 1e3 - start_us,
                "cname": colour(extra["cname"]) if "cname" in extra else colour(name),
                "args": _task_args(task, extra),
                "ph": "X",
            }
        )
    return out


def _lifecycle_event(
    task: dict[str, Any], node_ips: dict[str, str], idx: _Indexes
) -> dict[str, Any] | None:
    start, end = task.get("start_time_ms"), task.get("end_time_ms")
    node, worker = task.get("node_id"), task.get("worker_id")
    if start is None or end is None or not node or not worker:
        return None
    kind = "driver" if task.get("type") == "DRIVER_TASK" else "worker"
    pid, tid = idx.pid_tid(node_ips.get(node, node), f"{kind}:{worker}")
    name = f"task::{task['func_or_class_name'] or task['name']}"
    args = _task_args(task, {"source": "lifecycle", "state": task.get("state")})
    return {
        "cat": "task",
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": start * 1e3,
        "dur": (end - start) * 1e3,
        "cname": colour("task"),
        "args": args,
        "ph": "X",
    }


def chrome_trace(tasks: list[dict[str, Any]], node_ips: dict[str, str]) -> list[dict[str, Any]]:
    """The trace events for ``tasks`` (``TaskState`` dicts with detail); ``node_ips`` maps
    node ID to IP for tasks known only from lifecycle events."""
    idx = _Indexes()
    events: list[dict[str, Any]] = []
    for task in tasks:
        if task.get("profiling_data"):
            events.extend(_profile_events(task, idx))
        else:
            one = _lifecycle_event(task, node_ips, idx)
            if one is not None:
                events.append(one)
    for ip, pid in idx.nodes.items():
        events.append(
            {
                "name": "process_name",
                "args": {"name": f"Node {ip}"},
                "pid": pid,
                "tid": None,
                "ph": "M",
            }
        )
    for (pid, component), tid in idx.workers.items():
        events.append(
            {"name": "thread_name", "args": {"name": component}, "pid": pid, "tid": tid, "ph": "M"}
        )
    return events
