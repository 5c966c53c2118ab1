"""``/api/v0/tasks/summarize?summary_by=lineage``: tasks as a tree of who started whom.

Ray's ``TaskSummaries.to_summary_by_lineage`` (``ray/util/state/common.py``), rebuilt:

1. Every task is a node ``{name, key, type, timestamp, state_counts, children, link}``
   keyed by task ID (``name`` is the task's name, else its function; ``timestamp`` its
   creation time; ``link`` ``{"type": "task", "id": ...}``).
2. A normal task hangs under its parent task; with no parent, or a driver parent (ID
   starting with 40 ``f``), it is a root. An actor task or actor creation task hangs under
   an ``ACTOR`` node (key ``actor:<id>``, named by the actor's repr name or class), which
   itself hangs where the actor's creation task's parent is. A task whose parent or actor
   is unknown is dropped with its subtree, as Ray does.
3. Siblings with the same name are merged under a ``GROUP`` node (key: the name) when there
   is more than one; a group's timestamp is its earliest member's.
4. Each node's ``state_counts`` gain its children's; siblings are sorted by running, then
   pending, then failed counts (descending), then timestamp, actor creation tasks first.

Totals count normal tasks, actor tasks and actor creation tasks (``total_actor_scheduled``).
"""

from __future__ import annotations

import sys
from typing import Any

DRIVER_TASK_ID_PREFIX = "f" * 40
_RUNNING = ("RUNNING", "RUNNING_IN_RAY_GET", "RUNNING_IN_RAY_WAIT")
_PENDING = (
    "PENDING_ARGS_AVAIL",
    "PENDING_NODE_ASSIGNMENT",
    "PENDING_OBJ_STORE_MEM_AVAIL",
    "PENDING_ARGS_FETCH",
)


def _node(
    name: str, key: str, kind: str, timestamp: int | None, link: dict[str, str] | None
) -> dict[str, Any]:
    return {
        "name": name,
        "key": key,
        "type": kind,
        "timestamp": timestamp,
        "state_counts": {},
        "children": [],
        "link": link,
    }


class _Tree:
    def __init__(self, tasks: list[dict[str, Any]], actors: dict[str, dict[str, Any]]) -> None:
        self.tasks = {t["task_id"]: t for t in tasks}
        self.creation = {
            t["actor_id"]: t["task_id"] for t in tasks if t["type"] == "ACTOR_CREATION_TASK"
        }
        self.actors = actors
        self.groups: dict[str, dict[str, Any]] = {}
        self.roots: list[dict[str, Any]] = []

    def _attach(self, node: dict[str, Any], parent_task_id: str, current: dict[str, Any]) -> None:
        if not parent_task_id or parent_task_id.startswith(DRIVER_TASK_ID_PREFIX):
            self.roots.append(node)
            return
        parent = self.task_group(parent_task_id, current)
        if parent is not None:
            parent["children"].append(node)

    def task_group(self, task_id: str, current: dict[str, Any]) -> dict[str, Any] | None:
        if task_id in self.groups:
            return self.groups[task_id]
        task = self.tasks.get(task_id)
        if task is None:
            return None
        node = _node(
            task["name"] or task["func_or_class_name"],
            task_id,
            task["type"],
            task["creation_time_ms"],
            {"type": "task", "id": task_id},
        )
        self.groups[task_id] = node
        if task["type"] in ("ACTOR_TASK", "ACTOR_CREATION_TASK"):
            actor = self.actor_group(task["actor_id"], current)
            if actor is not None:
                actor["children"].append(node)
        else:
            self._attach(node, task["parent_task_id"], current)
        return node

    def actor_group(self, actor_id: str | None, current: dict[str, Any]) -> dict[str, Any] | None:
        key = f"actor:{actor_id}"
        if key in self.groups:
            return self.groups[key]
        creation = self.tasks.get(self.creation.get(actor_id or "", ""))
        if creation is None:
            return None
        actor = self.actors.get(actor_id or "")
        if actor is None:
            name = creation["func_or_class_name"].split(".")[0]
        else:
            name = actor.get("reprName") or actor.get("className") or ""
        # Ray stamps the actor node with the task being placed when it is made.
        node = _node(
            name, key, "ACTOR", current["creation_time_ms"], {"type": "actor", "id": actor_id or ""}
        )
        self.groups[key] = node
        self._attach(node, creation["parent_task_id"], current)
        return node


def _merge_siblings(siblings: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int | None]:
    if not siblings:
        return siblings, None
    groups: dict[str, dict[str, Any]] = {}
    min_ts: int | None = None
    for child in siblings:
        child["children"], child_min = _merge_siblings(child["children"])
        if child_min and child_min < (child["timestamp"] or sys.maxsize):
            child["timestamp"] = child_min
        group = groups.setdefault(
            child["name"], _node(child["name"], child["name"], "GROUP", None, None)
        )
        group["children"].append(child)
        ts = child["timestamp"]
        if ts and ts < (group["timestamp"] or sys.maxsize):
            group["timestamp"] = ts
            if ts < (min_ts or sys.maxsize):
                min_ts = ts
    return [g if len(g["children"]) > 1 else g["children"][0] for g in groups.values()], min_ts


def _count(node: dict[str, Any], states: tuple[str, ...]) -> int:
    return sum(node["state_counts"].get(s, 0) for s in states)


def _sort(nodes: list[dict[str, Any]]) -> None:
    nodes.sort(key=lambda n: 0 if n["type"] == "ACTOR_CREATION_TASK" else 1)
    nodes.sort(key=lambda n: n["timestamp"] or sys.maxsize)
    nodes.sort(key=lambda n: n["state_counts"].get("FAILED", 0), reverse=True)
    nodes.sort(key=lambda n: _count(n, _PENDING), reverse=True)
    nodes.sort(key=lambda n: _count(n, _RUNNING), reverse=True)


def _total(node: dict[str, Any]) -> dict[str, Any]:
    for child in node["children"]:
        for state, count in _total(child)["state_counts"].items():
            node["state_counts"][state] = node["state_counts"].get(state, 0) + count
    if node["children"]:
        _sort(node["children"])
    return node


def summarize_by_lineage(
    tasks: list[dict[str, Any]], actors: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Ray's lineage ``TaskSummaries`` for ``tasks`` (``TaskState`` dicts, drivers excluded
    by the caller) and ``actors`` (dashboard actor dicts by ID)."""
    tree = _Tree(tasks, actors)
    totals = {"NORMAL_TASK": 0, "ACTOR_CREATION_TASK": 0, "ACTOR_TASK": 0}
    for task in tasks:
        node = tree.task_group(task["task_id"], task)
        if node is None:
            continue
        node["state_counts"][task["state"]] = node["state_counts"].get(task["state"], 0) + 1
        if task["type"] in totals:
            totals[task["type"]] += 1
    roots, _ = _merge_siblings(tree.roots)
    roots = [_total(r) for r in roots]
    _sort(roots)
    return {
        "summary": roots,
        "total_tasks": totals["NORMAL_TASK"],
        "total_actor_tasks": totals["ACTOR_TASK"],
        "total_actor_scheduled": totals["ACTOR_CREATION_TASK"],
        "summary_by": "lineage",
    }
