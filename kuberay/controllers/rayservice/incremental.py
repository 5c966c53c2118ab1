"""Pure stepping rules of the incremental upgrade (KubeRay ``calculateTrafficRoutedPercent``,
``reconcileServeTargetCapacity`` and the completion checks), with time passed in.

The HTTPRoute weights move ``stepSizePercent`` at a time, at most once per ``intervalSeconds``
(measured from the ``lastTrafficMigratedTime`` of the cluster gaining traffic), never beyond
that cluster's Serve ``target_capacity``; the capacities move ``maxSurgePercent`` at a time,
only once traffic has caught up with them. During a rollback both run in reverse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from kuberay.api.v1.rules import cluster_upgrade_max_surge_percent

from ..common.objects import as_map, spec

__all__ = [
    "ClusterShare",
    "StepOptions",
    "next_target_capacity",
    "next_weights",
    "rollback_complete",
    "step_options",
    "upgrade_complete",
]

Role = Literal["active", "pending"]


@dataclass(frozen=True)
class StepOptions:
    """``clusterUpgradeOptions``: percent per traffic step, seconds between steps, percent per
    capacity step (``maxSurgePercent``, default 100)."""

    step_size: int
    interval_seconds: int
    max_surge: int = 100


@dataclass(frozen=True)
class ClusterShare:
    """One cluster's incremental-upgrade status: ``trafficRoutedPercent``,
    ``targetCapacity``, ``lastTrafficMigratedTime`` (None when unset)."""

    traffic: int | None = None
    capacity: int | None = None
    last_migrated: datetime | None = None


def step_options(ray_service: Mapping[str, Any]) -> StepOptions | None:
    """The RayService's step options; None when ``clusterUpgradeOptions`` or a required field
    is missing (validation rejects such a spec before this is used)."""
    options = as_map(as_map(spec(ray_service).get("upgradeStrategy")).get("clusterUpgradeOptions"))
    step, interval = options.get("stepSizePercent"), options.get("intervalSeconds")
    if not isinstance(step, int) or not isinstance(interval, int):
        return None
    return StepOptions(step, interval, cluster_upgrade_max_surge_percent(options))


def next_weights(
    active: ClusterShare,
    pending: ClusterShare,
    options: StepOptions,
    *,
    rollback: bool,
    pending_ready: bool,
    now: datetime,
) -> tuple[int, int]:
    """The (active, pending) HTTPRoute weights for this reconcile. Unset traffic counts as
    100 (active) / 0 (pending), unset capacity as 100 / 0. No step when the cluster gaining
    traffic already has its capacity's worth, when the interval has not passed, or (forward)
    when the pending cluster is not ready; the weights always sum to 100 after a step."""
    a = 100 if active.traffic is None else active.traffic
    p = 0 if pending.traffic is None else pending.traffic
    a_cap = 100 if active.capacity is None else active.capacity
    p_cap = 0 if pending.capacity is None else pending.capacity
    if (not rollback and p == p_cap) or (rollback and a == a_cap):
        return a, p
    last = active.last_migrated if rollback else pending.last_migrated
    if last is not None and now - last < timedelta(seconds=options.interval_seconds):
        return a, p
    if rollback:
        a = min(100, a + options.step_size, a_cap)
        return a, 100 - a
    if pending_ready:
        p = min(100, p + options.step_size, p_cap)
        return 100 - p, p
    return a, p


def next_target_capacity(
    role: Role, active: ClusterShare, pending: ClusterShare, options: StepOptions, *, rollback: bool
) -> int | None:
    """The ``target_capacity`` to send to the ``role`` cluster now, or None (no change).

    Forward: wait until the pending cluster's traffic equals its capacity; then, capacities
    summing over 100 lower the active one by ``maxSurgePercent`` (not below 0), else the
    pending one rises by it (not above 100). Rollback: wait until the active cluster's traffic
    equals its capacity; then the pending one drops or the active one rises the same way.
    """
    a_cap = 100 if active.capacity is None else active.capacity
    p_cap = 0 if pending.capacity is None else pending.capacity
    surge = options.max_surge
    if rollback:
        if a_cap != (active.traffic or 0):
            return None
        if a_cap + p_cap > 100:
            return max(0, p_cap - surge) if role == "pending" else None
        return min(100, a_cap + surge) if role == "active" else None
    if p_cap != (pending.traffic or 0):
        return None
    if role == "active" and a_cap + p_cap > 100:
        return max(0, a_cap - surge)
    if role == "pending" and a_cap + p_cap <= 100:
        return min(100, p_cap + surge)
    return None


def upgrade_complete(active: ClusterShare, pending: ClusterShare) -> bool:
    """The pending cluster takes all traffic and the active one's capacity is down to 0: the
    pending cluster is promoted (KubeRay ``IsIncrementalUpgradeComplete``)."""
    return active.capacity == 0 and pending.traffic == 100


def rollback_complete(active: ClusterShare, pending: ClusterShare, *, pending_ready: bool) -> bool:
    """The active cluster is back at 100 % traffic and capacity, and the pending one is either
    not ready or drained to 0/0 (unset values never count as 100 or 0): the pending cluster
    can go."""
    if active.capacity != 100 or active.traffic != 100:
        return False
    return not pending_ready or (pending.capacity == 0 and pending.traffic == 0)
