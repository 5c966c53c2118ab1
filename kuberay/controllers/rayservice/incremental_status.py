"""The incremental upgrade's status fields and readiness words, as pure functions.

* :func:`share_of` / :func:`write_share`: ``trafficRoutedPercent``, ``targetCapacity`` and
  ``lastTrafficMigratedTime`` of an active/pending service status as a ``ClusterShare`` and
  back (KubeRay writes them only with the incremental strategy).
* :func:`record_routing`: the pass's HTTPRoute weights, migration times and the capacities
  Serve accepted, into the active/pending service status (KubeRay ``calculateStatus`` and
  ``applyServeTargetCapacity``).
* :func:`initial_pending_capacity`: the ``targetCapacity`` a newly named pending cluster starts
  with (KubeRay ``calculateStatus``: 100 for the first cluster, 0 during an upgrade).
* :func:`routing_problem`: why traffic cannot move, from the Gateway's and HTTPRoute's status
  conditions (beyond KubeRay, which only logs "not ready").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from kuberay.reconcile.clock import format_time as rfc3339
from kuberay.reconcile.clock import parse_time

from ..common.objects import as_list, as_map, as_str
from .incremental import ClusterShare
from .incremental_plan import IncrementalPlan

__all__ = [
    "initial_pending_capacity",
    "record_routing",
    "routing_problem",
    "share_of",
    "write_share",
]

TRAFFIC = "trafficRoutedPercent"
CAPACITY = "targetCapacity"
MIGRATED = "lastTrafficMigratedTime"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def share_of(block: Mapping[str, Any]) -> ClusterShare:
    """The share recorded in one service status (unset fields are None)."""
    return ClusterShare(
        _int(block.get(TRAFFIC)), _int(block.get(CAPACITY)), parse_time(block.get(MIGRATED))
    )


def write_share(block: dict[str, Any], share: ClusterShare) -> None:
    """Record ``share`` in ``block`` (a None field is left as it is)."""
    if share.traffic is not None:
        block[TRAFFIC] = share.traffic
    if share.capacity is not None:
        block[CAPACITY] = share.capacity
    if share.last_migrated is not None:
        block[MIGRATED] = rfc3339(share.last_migrated)


def record_routing(
    active_block: dict[str, Any],
    pending_block: dict[str, Any] | None,
    weights: tuple[int, int] | None,
    plan: IncrementalPlan | None,
    confirmed: Mapping[str, int],
    now: datetime,
) -> None:
    """Write the weights of the HTTPRoute (``weights``; None: no route was written) into
    ``trafficRoutedPercent`` (stamping ``lastTrafficMigratedTime`` where it changed), the
    plan's capacities, and over them the ``confirmed`` ones (role -> value Serve accepted).
    Without a plan only the active cluster is routed (``weights[0]``)."""
    if weights is None:
        return
    if plan is not None:
        active, pending = plan.active, plan.pending
    else:
        old = share_of(active_block)
        changed = old.traffic != weights[0]
        active = ClusterShare(weights[0], old.capacity, now if changed else old.last_migrated)
        pending = None
    if "active" in confirmed:
        active = replace(active, capacity=confirmed["active"])
    write_share(active_block, active)
    if pending_block is not None and pending is not None:
        if "pending" in confirmed:
            pending = replace(pending, capacity=confirmed["pending"])
        write_share(pending_block, pending)


def initial_pending_capacity(active_block: Mapping[str, Any]) -> int:
    """``targetCapacity`` of a pending cluster named now: 100 when there is no active
    cluster (and it has none), else 0 (traffic and capacity then move step by step)."""
    if not as_str(active_block.get("rayClusterName")) and _int(active_block.get(CAPACITY)) is None:
        return 100
    return 0


def _describe(kind: str, name: str, conditions: Any, wanted: tuple[str, ...]) -> str | None:
    found = {as_str(as_map(c).get("type")): as_map(c) for c in as_list(conditions)}
    for ctype in wanted:
        cond = found.get(ctype)
        if cond is None:
            return f"{kind} {name} has no {ctype} condition yet"
        if cond.get("status") != "True":
            detail = as_str(cond.get("reason"))
            message = as_str(cond.get("message"))
            if message:
                detail = f"{detail}: {message}" if detail else message
            return f"{kind} {name} is not {ctype}" + (f" ({detail})" if detail else "")
    return None


def routing_problem(
    gateway: Mapping[str, Any] | None,
    route: Mapping[str, Any] | None,
    gateway_name: str,
    route_name: str,
) -> str | None:
    """Why the Gateway or HTTPRoute is not ready (Gateway Accepted+Programmed; HTTPRoute a
    parent with Accepted+ResolvedRefs), in words; None when both are ready."""
    if gateway is None:
        return f"Gateway {gateway_name} does not exist yet"
    status = as_map(gateway.get("status"))
    problem = _describe(
        "Gateway", gateway_name, status.get("conditions"), ("Accepted", "Programmed")
    )
    if problem is not None:
        return problem + " (is a controller for its GatewayClass running?)"
    if route is None:
        return f"HTTPRoute {route_name} does not exist yet"
    parents = as_list(as_map(route.get("status")).get("parents"))
    if not parents:
        return f"HTTPRoute {route_name} has no status from the Gateway's controller yet"
    problems = []
    for parent in parents:
        found = _describe(
            "HTTPRoute",
            route_name,
            as_map(parent).get("conditions"),
            ("Accepted", "ResolvedRefs"),
        )
        if found is None:
            return None
        problems.append(found)
    return problems[0]
