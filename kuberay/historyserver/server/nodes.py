"""Nodes from NODE_DEFINITION and NODE_LIFECYCLE events.

Folded in ``convert.event_order``: the definition gives IP, hostname, node name, labels and
start time; lifecycle transitions (merged, sorted) give the state (the last one), the total
resources (the latest transition carrying them) and, for ``DEAD``, the end time and the
death reason. A node is the head when its labels say ``ray.io/node-group: headgroup``
(KubeRay's rule) or its resources hold ``node:__internal_head__`` (Ray's own marker).

Two shapes come out: Ray's ``NodeState`` (``/api/v0/nodes``, snake_case) and the
``/nodes?view=summary`` entry (host metrics unknown after the fact: zeros).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kuberay.historyserver.layout import HEAD_NODE_GROUP, RAY_NODE_GROUP_NODE_LABEL_KEY
from kuberay.historyserver.server.convert import (
    as_dict,
    as_list,
    as_str,
    event_order,
    hex_id,
    merge_transitions,
    timestamp_ms,
)

HEAD_GROUP_LABEL = RAY_NODE_GROUP_NODE_LABEL_KEY
HEAD_RESOURCE = "node:__internal_head__"


class NodeBuilder:
    """Collects node events; ``build`` folds them into ``NodeState`` dicts."""

    def __init__(self) -> None:
        self._events: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def add(self, event: dict[str, Any]) -> bool:
        """Keep ``event`` if it is a node event; returns whether it was."""
        kind = event.get("eventType")
        if kind == "NODE_DEFINITION_EVENT":
            payload = as_dict(event.get("nodeDefinitionEvent"))
        elif kind == "NODE_LIFECYCLE_EVENT":
            payload = as_dict(event.get("nodeLifecycleEvent"))
        else:
            return False
        node_id = hex_id(payload.get("nodeId"))
        if not node_id:
            return False
        self._events[node_id].append(event)
        return True

    def build(self) -> list[dict[str, Any]]:
        """Every node (``NodeState`` with detail columns and ``hostname``), by node ID."""
        return [_fold(n, self._events[n]) for n in sorted(self._events)]


def _fold(node_id: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    node: dict[str, Any] = {
        "node_id": node_id,
        "node_ip": "",
        "is_head_node": False,
        "state": "ALIVE",
        "state_message": None,
        "node_name": "",
        "resources_total": {},
        "labels": {},
        "start_time_ms": None,
        "end_time_ms": None,
        "hostname": "",
        "instance_id": "",
        "instance_type_name": "",
    }
    transitions: list[dict[str, Any]] = []
    for event in sorted(events, key=event_order):
        if event.get("eventType") == "NODE_DEFINITION_EVENT":
            d = as_dict(event.get("nodeDefinitionEvent"))
            node["node_ip"] = as_str(d.get("nodeIpAddress"))
            node["labels"] = as_dict(d.get("labels"))
            node["start_time_ms"] = timestamp_ms(d.get("startTimestamp"))
            node["hostname"] = as_str(d.get("hostname"))
            node["node_name"] = as_str(d.get("nodeName")) or node["node_ip"]
            node["instance_id"] = as_str(d.get("instanceId"))
            node["instance_type_name"] = as_str(d.get("instanceTypeName"))
        else:
            d = as_dict(event.get("nodeLifecycleEvent"))
            transitions = merge_transitions(transitions, as_list(d.get("stateTransitions")))
    for t in transitions:
        resources = as_dict(t.get("resources"))
        if resources:
            node["resources_total"] = resources
        if t.get("state") == "DEAD":
            node["end_time_ms"] = timestamp_ms(t.get("timestamp"))
            info = as_dict(t.get("deathInfo"))
            node["state_message"] = (
                as_str(info.get("reasonMessage")) or as_str(info.get("reason")) or None
            )
    if transitions:
        node["state"] = as_str(transitions[-1].get("state")) or "ALIVE"
    node["is_head_node"] = (
        node["labels"].get(HEAD_GROUP_LABEL) == HEAD_NODE_GROUP
        or HEAD_RESOURCE in node["resources_total"]
    )
    return node


STATE_COLUMNS = (
    "node_id",
    "node_ip",
    "is_head_node",
    "state",
    "state_message",
    "node_name",
    "resources_total",
    "labels",
)


def node_state(node: dict[str, Any], *, detail: bool) -> dict[str, Any]:
    """A node as ``/api/v0/nodes`` shows it (with ``start_time_ms``/``end_time_ms`` when
    ``detail``)."""
    columns = STATE_COLUMNS + (("start_time_ms", "end_time_ms") if detail else ())
    return {c: node[c] for c in columns}


def node_summary(node: dict[str, Any]) -> dict[str, Any]:
    """A node as one entry of ``/nodes?view=summary``: the raylet's record (camelCase) and
    host metrics, which a stored session does not have (zeros)."""
    return {
        "now": 0,
        "hostname": node["hostname"] or node["node_name"],
        "ip": node["node_ip"],
        "cpu": 0.0,
        "cpus": [0, 0],
        "mem": [0, 0, 0.0, 0],
        "shm": 0,
        "bootTime": (node["start_time_ms"] or 0) // 1000,
        "loadAvg": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
        "disk": {},
        "networkSpeed": [0, 0],
        "gpus": [],
        "tpus": [],
        "raylet": {
            "nodeId": node["node_id"],
            "nodeManagerAddress": node["node_ip"],
            "nodeManagerHostname": node["hostname"],
            "nodeName": node["node_name"],
            "state": node["state"],
            "stateMessage": node["state_message"],
            "isHeadNode": node["is_head_node"],
            "resourcesTotal": node["resources_total"],
            "labels": node["labels"],
            "startTimeMs": node["start_time_ms"] or 0,
            "endTimeMs": node["end_time_ms"] or 0,
            "instanceId": node["instance_id"],
            "instanceTypeName": node["instance_type_name"],
        },
    }


def logical_resources(node: dict[str, Any]) -> str:
    """The ``nodeLogicalResources`` text of one node: ``0.0/<total> <name>`` per resource
    (usage is unknown after the fact), one per line, as the dashboard renders it."""
    lines = []
    for name, total in sorted(node["resources_total"].items()):
        if name.startswith("node:"):
            continue
        lines.append(f"0.0/{total} {name}")
    return "\n".join(lines)
