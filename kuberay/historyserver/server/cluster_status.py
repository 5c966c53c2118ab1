"""``/api/cluster_status?format=1``: the autoscaler status text, rebuilt from the session's
last recorded state (Ray's ``ClusterStatusFormatter`` layout, autoscaler v2)::

    ======== Autoscaler status: 2026-12-04 21:06:40.123000 ========
    Node status
    ---------------------------------------------------------------
    Active:
     1 headgroup
    Idle:
     (no idle nodes)
    Pending:
     (no pending nodes)
    Recent failures:
     (no failures)

    Resources
    ---------------------------------------------------------------
    Total Usage:
     1.0/8.0 CPU
     0B/12.00GiB memory
    ...
    From request_resources:
     (none)
    Pending Demands:
     (no resource demands)

* The time is the last one the session recorded (UTC), not "now".
* Active: nodes whose last transition is ALIVE, counted by node type (the
  ``ray.io/node-group`` label, else ``node_<id>`` as Ray names untyped nodes). Nothing is
  known about idleness after the fact, so Idle is always empty, as is Pending.
* Recent failures: DEAD nodes, ``<type>: NodeTerminated (instance_id: <id or ip>)``.
* Usage: totals of the ALIVE nodes; "used" sums what was still held at the end: the
  required resources of tasks last seen running and of actors last seen alive.
* Pending demands: tasks and actors last seen waiting for a node, grouped by resource
  bundle (``{'CPU': 1.0}: 2+ pending tasks/actors``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from kuberay.historyserver.layout import RAY_NODE_GROUP_NODE_LABEL_KEY

NODE_GROUP_LABEL = RAY_NODE_GROUP_NODE_LABEL_KEY
_RUNNING = frozenset({"RUNNING", "RUNNING_IN_RAY_GET", "RUNNING_IN_RAY_WAIT"})
_WAITING = frozenset({"PENDING_NODE_ASSIGNMENT"})
_PG_RESOURCE = re.compile(r"^(.+)_group_(?:\d+_)?[0-9a-f]+$")
_MEMORY_UNITS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
_MEMORY = ("memory", "object_store_memory")


def format_memory(n: float) -> str:
    """Bytes as Ray prints them: ``12.00GiB``, ``512.00MiB``, ``10B``."""
    for suffix, size in _MEMORY_UNITS:
        if n >= size:
            return f"{n / size:.2f}{suffix}"
    return f"{int(n)}B"


def node_type(node: dict[str, Any]) -> str:
    """The node's type as the autoscaler names it."""
    labels = node.get("labels") or {}
    return str(labels.get(NODE_GROUP_LABEL) or f"node_{node['node_id']}")


def _as_float(v: object) -> float:
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def _add(into: dict[str, float], resources: dict[str, Any] | None) -> None:
    for name, amount in (resources or {}).items():
        into[name] = into.get(name, 0.0) + _as_float(amount)


def usage_lines(total: dict[str, float], used: dict[str, float]) -> list[str]:
    """Ray's ``parse_usage`` lines (without placement-group accounting)."""
    lines = []
    for name in sorted(total):
        if "node:" in name or _PG_RESOURCE.match(name) or name.startswith("accelerator_type:"):
            continue
        u, t = used.get(name, 0.0), total[name]
        if name in _MEMORY:
            lines.append(f"{format_memory(u)}/{format_memory(t)} {name}")
        else:
            lines.append(f"{u}/{t} {name}")
    return lines


def demand_lines(bundles: list[dict[str, Any]]) -> list[str]:
    """Pending bundles grouped as Ray's ``format_resource_demand_summary`` groups them."""
    counts: Counter[tuple[tuple[str, float], ...]] = Counter()
    in_pg: Counter[tuple[tuple[str, float], ...]] = Counter()
    for bundle in bundles:
        clean: dict[str, float] = {}
        uses_pg = False
        for name, amount in bundle.items():
            m = _PG_RESOURCE.match(name)
            if m:
                uses_pg = True
                name = m[1]
            clean[name] = _as_float(amount)
        clean.pop("bundle", None)
        if not clean:
            continue
        key = tuple(sorted(clean.items()))
        counts[key] += 1
        if uses_pg:
            in_pg[key] += 1
    out = []
    for key, n in counts.items():
        line = f" {dict(key)}: {n}+ pending tasks/actors"
        if key in in_pg:
            line += f" ({in_pg[key]}+ using placement groups)"
        out.append(line)
    return out


def _last_time_ms(nodes: list[dict[str, Any]], tasks: Sequence[dict[str, Any]]) -> int:
    times = [0]
    for n in nodes:
        times += [n.get("start_time_ms") or 0, n.get("end_time_ms") or 0]
    for t in tasks:
        times += [e.get("created_ms") or 0 for e in t.get("events", [])]
    return max(times)


def format_status(
    nodes: list[dict[str, Any]],
    tasks: Sequence[dict[str, Any]],
    actors: dict[str, dict[str, Any]],
) -> str:
    """The status text for a session's ``nodes`` (``NodeState``), ``tasks`` (``TaskState``)
    and ``actors`` (dashboard actor dicts)."""
    when = datetime.fromtimestamp(_last_time_ms(nodes, tasks) / 1000, UTC).replace(tzinfo=None)
    header = "=" * 8 + f" Autoscaler status: {when} " + "=" * 8
    sep = "-" * len(header)
    alive = [n for n in nodes if n.get("state") == "ALIVE"]
    dead = [n for n in nodes if n.get("state") == "DEAD"]
    active = Counter(node_type(n) for n in alive)
    failures = [
        f" {node_type(n)}: NodeTerminated (instance_id: {n.get('instance_id') or n.get('node_ip')})"
        for n in dead
    ]
    total: dict[str, float] = {}
    for n in alive:
        _add(total, n.get("resources_total"))
    used: dict[str, float] = {}
    pending: list[dict[str, Any]] = []
    for t in tasks:
        if t["type"] == "ACTOR_CREATION_TASK":
            continue
        if t["state"] in _RUNNING:
            _add(used, t.get("required_resources"))
        elif t["state"] in _WAITING:
            pending.append(t.get("required_resources") or {})
    for a in actors.values():
        if a.get("state") == "ALIVE":
            _add(used, a.get("requiredResources"))
        elif a.get("state") == "PENDING_CREATION":
            pending.append(a.get("requiredResources") or {})
    demands = demand_lines(pending)
    lines = [
        header,
        "Node status",
        sep,
        "Active:",
        "\n".join(f" {c} {t}" for t, c in active.items()) or " (no active nodes)",
        "Idle:",
        " (no idle nodes)",
        "Pending:",
        " (no pending nodes)",
        "Recent failures:\n" + ("\n".join(failures) or " (no failures)"),
        "",
        "Resources",
        sep,
        "Total Usage:",
        "\n".join([f" {line}" for line in usage_lines(total, used)] + [""]),
        "From request_resources:",
        " (none)",
        "Pending Demands:",
        "\n".join(demands) or " (no resource demands)",
    ]
    return "\n".join(lines).strip()
