"""Actors from ACTOR_DEFINITION and ACTOR_LIFECYCLE events, shaped as ``/logical/actors``.

Events of one actor are folded in ``convert.event_order``: the definition sets the static
fields; lifecycle transitions are merged (duplicates by state and time dropped, sorted).
From the transitions: ``state`` is the last one's; node, worker, pid and port come from the
latest ``ALIVE``; ``startTime`` is the first ``ALIVE``, ``endTime`` the last ``DEAD``;
``numRestarts`` counts ``RESTARTING``; ``exitDetail`` and ``deathCause`` come from the
``DEAD`` transition's ``deathCause.actorDiedErrorContext``. Times are Unix ms.

The shape is the dashboard's camelCase actor dict (Ray's ``actor_table_data_to_dict``);
``address.ipAddress`` is resolved from the node the actor ran on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

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

ACTOR_EVENT_TYPES = frozenset({"ACTOR_DEFINITION_EVENT", "ACTOR_LIFECYCLE_EVENT"})


class ActorBuilder:
    """Collects actor events; ``build`` folds them into dashboard actor dicts."""

    def __init__(self) -> None:
        self._events: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def add(self, event: dict[str, Any]) -> bool:
        """Keep ``event`` if it is an actor event; returns whether it was."""
        kind = event.get("eventType")
        if kind == "ACTOR_DEFINITION_EVENT":
            payload = as_dict(event.get("actorDefinitionEvent"))
        elif kind == "ACTOR_LIFECYCLE_EVENT":
            payload = as_dict(event.get("actorLifecycleEvent"))
        else:
            return False
        actor_id = hex_id(payload.get("actorId"))
        if not actor_id:
            return False
        self._events[actor_id].append(event)
        return True

    def build(self, node_ips: Mapping[str, str]) -> dict[str, dict[str, Any]]:
        """Every actor by ID (sorted), with IPs from ``node_ips`` (node hex -> IP)."""
        return {a: _fold(a, self._events[a], node_ips) for a in sorted(self._events)}


def _new_actor(actor_id: str) -> dict[str, Any]:
    return {
        "actorId": actor_id,
        "jobId": "",
        "address": {"nodeId": "", "ipAddress": "", "port": 0, "workerId": ""},
        "name": "",
        "className": "",
        "actorClass": "",
        "state": "DEPENDENCIES_UNREADY",
        "numRestarts": "0",
        "timestamp": 0,
        "pid": 0,
        "startTime": 0,
        "endTime": 0,
        "exitDetail": "-",
        "requiredResources": {},
        "placementGroupId": None,
        "reprName": "",
        "isDetached": False,
        "rayNamespace": "",
        "callSite": "",
        "labelSelector": {},
        "deathCause": None,
        "stateTransitions": [],
    }


def _fold(
    actor_id: str, events: list[dict[str, Any]], node_ips: Mapping[str, str]
) -> dict[str, Any]:
    actor = _new_actor(actor_id)
    transitions: list[dict[str, Any]] = []
    for event in sorted(events, key=event_order):
        if event.get("eventType") == "ACTOR_DEFINITION_EVENT":
            d = as_dict(event.get("actorDefinitionEvent"))
            actor["jobId"] = hex_id(d.get("jobId"))
            actor["name"] = as_str(d.get("name"))
            actor["className"] = actor["actorClass"] = as_str(d.get("className"))
            actor["requiredResources"] = as_dict(d.get("requiredResources"))
            actor["placementGroupId"] = opt_id(d.get("placementGroupId"))
            actor["isDetached"] = d.get("isDetached") is True
            actor["rayNamespace"] = as_str(d.get("rayNamespace"))
            actor["callSite"] = as_str(d.get("callSite"))
            actor["labelSelector"] = as_dict(d.get("labelSelector"))
        else:
            d = as_dict(event.get("actorLifecycleEvent"))
            transitions = merge_transitions(transitions, as_list(d.get("stateTransitions")))
    restarts = 0
    for t in transitions:
        state = as_str(t.get("state"))
        ms = timestamp_ms(t.get("timestamp")) or 0
        if state == "ALIVE":
            node = hex_id(t.get("nodeId"))
            actor["address"] = {
                "nodeId": node,
                "ipAddress": node_ips.get(node, ""),
                "port": to_int(t.get("port")),
                "workerId": hex_id(t.get("workerId")),
            }
            actor["pid"] = to_int(t.get("pid"))
            actor["reprName"] = as_str(t.get("reprName")) or actor["reprName"]
            if not actor["startTime"]:
                actor["startTime"] = ms
        elif state == "RESTARTING":
            restarts += 1
        elif state == "DEAD":
            actor["endTime"] = ms
            cause = as_dict(t.get("deathCause"))
            context = as_dict(cause.get("actorDiedErrorContext"))
            if cause:
                actor["deathCause"] = cause
            if context:
                actor["exitDetail"] = as_str(context.get("errorMessage")) or "-"
                if not actor["address"]["ipAddress"]:
                    actor["address"]["ipAddress"] = as_str(context.get("nodeIpAddress"))
                if not actor["pid"]:
                    actor["pid"] = to_int(context.get("pid"))
        actor["timestamp"] = ms
    if transitions:
        actor["state"] = as_str(transitions[-1].get("state")) or actor["state"]
    actor["numRestarts"] = str(restarts)
    actor["stateTransitions"] = [
        {"state": as_str(t.get("state")), "timestamp": timestamp_ms(t.get("timestamp"))}
        for t in transitions
    ]
    return actor
