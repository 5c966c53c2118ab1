"""Placement groups (``/api/v0/placement_groups``) from PLACEMENT_GROUP_* events, else from
the collector's snapshot.

Events (Ray 2.60 defines them; not every Ray sends them) are folded per group in
``convert.event_order``: the definition gives name, creator job, detached flag, bundles'
resources and label selectors, and the creation request time; lifecycle transitions
(merged, sorted) give ``state`` (the last), the bundles' nodes (the latest
``bundlePlacements``) and the scheduling stats. The shape is Ray's ``PlacementGroupState``
with detail, as recorded from a real dashboard.

Without any event the snapshot ``restful__api__v0__placement_groups?detail=1&limit=10000``
is used as it is, with an empty ``bundles`` filled in (Ray 2.56's UI needs the list).
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
    opt_id,
    timestamp_ns,
    to_int,
)

_PAYLOAD = {
    "PLACEMENT_GROUP_DEFINITION_EVENT": "placementGroupDefinitionEvent",
    "PLACEMENT_GROUP_LIFECYCLE_EVENT": "placementGroupLifecycleEvent",
}
BRIEF_COLUMNS = ("placement_group_id", "name", "creator_job_id", "state")


class PlacementGroupBuilder:
    """Collects placement-group events; ``build`` folds them into ``PlacementGroupState``."""

    def __init__(self) -> None:
        self._events = EventsById(_PAYLOAD, "placementGroupId")

    def add(self, event: dict[str, Any]) -> bool:
        """Keep ``event`` if it is a placement-group event; returns whether it was."""
        return self._events.add(event)

    def __bool__(self) -> bool:
        return bool(self._events)

    def build(self) -> list[dict[str, Any]]:
        """Every placement group seen in events, by ID."""
        return [_fold(pg, events) for pg, events in self._events.by_id()]


def _fold(pg: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "placement_group_id": pg,
        "name": "",
        "creator_job_id": "",
        "state": "PENDING",
        "bundles": [],
        "is_detached": False,
        "stats": {
            "creation_request_received_ns": "0",
            "scheduling_started_time_ns": "0",
            "scheduling_latency_us": "0",
            "end_to_end_creation_latency_us": "0",
            "scheduling_attempt": 0,
            "scheduling_state": "QUEUED",
            "highest_retry_delay_ms": 0.0,
        },
        "topology_strategy": {},
        "topology_assignments": {},
    }
    transitions: list[dict[str, Any]] = []
    specs: list[dict[str, Any]] = []
    for event in sorted(events, key=event_order):
        kind = as_str(event.get("eventType"))
        d = as_dict(event.get(_PAYLOAD[kind]))
        if kind == "PLACEMENT_GROUP_DEFINITION_EVENT":
            out["name"] = as_str(d.get("name"))
            out["creator_job_id"] = hex_id(d.get("creatorJobId"))
            out["is_detached"] = d.get("isDetached") is True
            out["stats"]["creation_request_received_ns"] = str(
                to_int(d.get("creationRequestReceivedNs"))
            )
            specs = [as_dict(b) for b in as_list(d.get("bundles"))]
        else:
            transitions = merge_transitions(transitions, as_list(d.get("stateTransitions")))
    placements: dict[int, str | None] = {}
    stats = out["stats"]
    created = to_int(stats["creation_request_received_ns"])
    for t in transitions:
        out["state"] = as_str(t.get("state")) or out["state"]
        if t.get("schedulingState"):
            stats["scheduling_state"] = as_str(t.get("schedulingState"))
        stats["scheduling_attempt"] = max(
            stats["scheduling_attempt"], to_int(t.get("schedulingAttempt"))
        )
        delay = t.get("highestRetryDelayMs")
        if isinstance(delay, int | float):
            stats["highest_retry_delay_ms"] = max(stats["highest_retry_delay_ms"], float(delay))
        ns = timestamp_ns(t.get("timestamp")) or 0
        if (
            t.get("schedulingState") == "SCHEDULING_STARTED"
            and stats["scheduling_started_time_ns"] == "0"
        ):
            stats["scheduling_started_time_ns"] = str(ns)
        if (
            t.get("state") == "CREATED"
            and created
            and stats["end_to_end_creation_latency_us"] == "0"
        ):
            stats["end_to_end_creation_latency_us"] = str(max(0, ns - created) // 1000)
        bp = as_list(t.get("bundlePlacements"))
        if bp:
            placements = {
                to_int(as_dict(p).get("bundleIndex")): opt_id(as_dict(p).get("nodeId")) for p in bp
            }
    out["bundles"] = [
        {
            "bundle_id": {"placement_group_id": pg, "bundle_index": to_int(b.get("bundleIndex"))},
            "unit_resources": as_dict(b.get("unitResources")),
            "node_id": placements.get(to_int(b.get("bundleIndex"))),
            "label_selector": as_dict(b.get("labelSelector")),
        }
        for b in sorted(specs, key=lambda b: to_int(b.get("bundleIndex")))
    ]
    return out


def from_snapshot(body: object) -> list[dict[str, Any]] | None:
    """The groups in a stored ``/api/v0/placement_groups`` answer (Ray's envelope), each with
    ``bundles`` present; ``None`` when the body is not that answer."""
    result = as_dict(as_dict(as_dict(body).get("data")).get("result")).get("result")
    if not isinstance(result, list):
        return None
    groups = []
    for pg in result:
        if isinstance(pg, dict):
            pg = dict(pg)
            if not isinstance(pg.get("bundles"), list):
                pg["bundles"] = []
            groups.append(pg)
    return groups
