"""Abandoning an incremental upgrade without overloading the active cluster (beyond KubeRay).

When ``ray.io/upgrade-timeout`` expires (``upgrade``) during a
``NewClusterWithIncrementalUpgrade`` upgrade, the active (old) cluster's Serve
``target_capacity`` may already have been lowered while the pending cluster takes part of the
traffic. Routing all traffic back at once would land it on too few replicas, so the abandon
runs in phases, each derived from the RayService status and what Serve reports (nothing lives
only in memory; an operator restarted mid-abandon resumes where it was):

1. *Deadline* (:func:`abandon_if_overdue`, :func:`keep_pending_on_abandon`): the pending
   cluster is dropped at once, as before, when the active cluster's capacity was never
   lowered (status ``targetCapacity`` unset or 100, no lower value being sent this pass,
   Serve not reporting less). Otherwise
   ``UpgradeAbandoned=True`` is set but ``pendingServiceStatus`` is kept, so the HTTPRoute
   keeps both backends; ``UpgradeInProgress`` stays True (:func:`explain_abandoning` says why).
2. *Restore* (:func:`plan_abandon`, while :func:`abandoning`): the HTTPRoute weights stay as
   recorded in the status and ``target_capacity`` 100 is sent to the active cluster, until a
   Serve status of the active cluster reports ``target_capacity`` 100 (or unset) with every
   application ``RUNNING`` and no deployment ``UPSCALING``/``UPDATING``. The reported value is
   itself the proof of freshness: an answer describing the config from before the restore
   reports the lowered capacity, however late it arrives.
   The wait is bounded: once ``UpgradeAbandoned`` has stood :data:`RESTORE_BOUND_SECONDS`
   (its ``lastTransitionTime``, so a restart does not reset it) without Serve confirming, the
   traffic moves back anyway -- a Serve that never answers must not keep a broken pending
   cluster in the route for good -- and the waiting message says so.
3. *Route back*: then the weights go to 100/0 in one write (the capacity is there).
4. *Retire*: once the status records 100/0 from an earlier pass and the gateway has observed
   the HTTPRoute's generation (or the route is not served by a ready gateway), the pending
   cluster is dropped from the status (deleted after ``rayClusterDeletionDelaySeconds``),
   which ends ``UpgradeInProgress``; ``UpgradeAbandoned`` stays, as for any abandon.

A change of ``rayClusterConfig`` during phases 2-4 takes effect after phase 4 (the condition is
removed only once no pending cluster is named).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

import structlog

from kuberay.controllers.common.objects import as_map
from kuberay.controllers.dashboard import ServeDetails
from kuberay.controllers.rayservice import status as S
from kuberay.controllers.rayservice.cluster_builder import goal_cluster_hash
from kuberay.controllers.rayservice.incremental import ClusterShare
from kuberay.controllers.rayservice.incremental_plan import IncrementalPlan
from kuberay.controllers.rayservice.incremental_status import share_of
from kuberay.controllers.rayservice.upgrade import (
    UPGRADE_TIMEOUT_REASON,
    abandon_message,
    abandoned_hash,
    upgrade_overdue,
)
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.clock import format_time as rfc3339

log = structlog.get_logger("kuberay.rayservice")

__all__ = [
    "AbandonPlan",
    "AbandonWorld",
    "ReportedCapacity",
    "abandon_if_overdue",
    "abandoning",
    "capacity_reached",
    "capacity_restored",
    "explain_abandoning",
    "keep_pending_on_abandon",
    "plan_abandon",
    "replicas_starting",
    "reported_capacity",
    "retire_pending",
    "scaling_deployments",
]

FULL: Final = 100
#: Deployment statuses of a Serve instance still moving towards its target (Ray
#: ``DeploymentStatus``): replicas are being added or replaced.
SCALING: Final = frozenset({"UPSCALING", "UPDATING"})
#: How long phase 2 waits for Serve to confirm the restored capacity before the traffic moves
#: back regardless (seconds since ``UpgradeAbandoned`` turned True).
RESTORE_BOUND_SECONDS: Final = 300.0


@dataclass(frozen=True)
class ReportedCapacity:
    """What one Serve status answer of a cluster says of its capacity: the instance's
    ``target_capacity`` (None: unset, i.e. full) and whether it has settled (at least one
    application, all ``RUNNING``, no deployment in :data:`SCALING`)."""

    target_capacity: float | None
    settled: bool


def reported_capacity(details: ServeDetails | None) -> ReportedCapacity | None:
    """``details`` as a :class:`ReportedCapacity` (None when there is no answer)."""
    if details is None:
        return None
    scaling = any(
        dep.status in SCALING
        for app in details.applications.values()
        for dep in app.deployments.values()
    )
    return ReportedCapacity(details.target_capacity, details.all_running and not scaling)


def _full(capacity: float | None) -> bool:
    return capacity is None or capacity >= FULL


def capacity_reached(reported: ReportedCapacity | None, capacity: int | None) -> bool:
    """Serve reports the cluster at ``capacity`` or more (unset: full) and settled: the
    ``target_capacity`` sent has reached Serve and its replicas are up (no answer: no).

    Beyond KubeRay, which moves traffic to the pending cluster as soon as it has sent the
    capacity: the replicas that capacity asks for take seconds to start, and a request routed
    to a cluster whose replicas are still starting waits in its proxy for them."""
    if reported is None or not reported.settled:
        return False
    return _full(reported.target_capacity) or (
        capacity is not None
        and reported.target_capacity is not None
        and reported.target_capacity >= capacity
    )


def scaling_deployments(details: ServeDetails) -> list[str]:
    """The deployments still moving towards their target, as ``app/deployment STATUS``."""
    return sorted(
        f"{app_name}/{dep_name} {dep.status}"
        for app_name, app in details.applications.items()
        for dep_name, dep in app.deployments.items()
        if dep.status in SCALING
    )


def replicas_starting(cluster: str, capacity: int | None, details: ServeDetails | None) -> str:
    """Why traffic waits for ``cluster`` (:func:`capacity_reached` is False), in words."""
    wanted = f"target_capacity {capacity if capacity is not None else FULL}"
    if details is None:
        return f"waiting for the Serve status of RayCluster {cluster} ({wanted})"
    scaling = scaling_deployments(details)
    if scaling:
        return f"waiting for the Serve replicas of RayCluster {cluster} ({wanted}): " + ", ".join(
            scaling
        )
    if not details.all_running:
        return f"waiting for the Serve applications of RayCluster {cluster} to run ({wanted})"
    return f"waiting for Serve on RayCluster {cluster} to take {wanted}"


def capacity_restored(reported: ReportedCapacity | None) -> bool:
    """Serve reports the cluster at full capacity and settled (no answer: not restored)."""
    return reported is not None and _full(reported.target_capacity) and reported.settled


def keep_pending_on_abandon(
    active: ClusterShare, sending: int | None, reported: ReportedCapacity | None
) -> bool:
    """At the deadline: whether the active cluster's capacity must be restored before traffic
    goes back to it, i.e. it is or may soon be below 100: its status ``targetCapacity``
    (``active.capacity``), a value being sent this pass (``sending``), or the value Serve
    reports. Unset values count as 100."""
    if active.capacity is not None and active.capacity < FULL:
        return True
    if sending is not None and sending < FULL:
        return True
    return reported is not None and not _full(reported.target_capacity)


def abandoning(rs: Obj) -> bool:
    """The upgrade was abandoned and its pending cluster is still named: phases 2-4."""
    return abandoned_hash(rs) is not None and bool(S.cluster_name(rs, "pendingServiceStatus"))


@dataclass(frozen=True)
class AbandonWorld:
    """What one pass of an abandon sees: both clusters' shares (from status), what the
    active cluster's Serve reported this pass (None: no answer), whether the gateway has
    observed the HTTPRoute as last written (True too when no ready gateway serves it), the
    time, the active cluster's name (for the words) and when the abandon began."""

    active: ClusterShare
    pending: ClusterShare
    reported: ReportedCapacity | None
    route_observed: bool
    now: datetime
    active_name: str = ""
    #: when ``UpgradeAbandoned`` turned True (None: unknown, no bound applies)
    abandoned_since: datetime | None = None


@dataclass(frozen=True)
class AbandonPlan:
    """The pass's outcome: the HTTPRoute weights (active, pending), the shares to record,
    the ``target_capacity`` to send to the active cluster (None: nothing), whether the
    pending cluster is dropped now, and what the abandon waits for (None when retiring)."""

    weights: tuple[int, int]
    active: ClusterShare
    pending: ClusterShare
    send_active: int | None
    retire: bool
    waiting: str | None

    def as_incremental(self) -> IncrementalPlan:
        """The plan in the shape the status recording takes (no promotion, no rollback)."""
        return IncrementalPlan(
            self.weights, self.active, self.pending, self.send_active, None, False, False
        )


def plan_abandon(world: AbandonWorld) -> AbandonPlan:
    """The decision for one pass of phases 2-4 (see the module docstring). Unset traffic
    counts as 100 (active) / 0 (pending). Weights never move towards the active cluster
    before :func:`capacity_restored`; ``lastTrafficMigratedTime`` is stamped where a weight
    changes. Past :data:`RESTORE_BOUND_SECONDS` the weights move back even unconfirmed
    (``target_capacity`` 100 is still sent while Serve reports less)."""
    a = FULL if world.active.traffic is None else world.active.traffic
    p = 0 if world.pending.traffic is None else world.pending.traffic
    name = f"RayCluster {world.active_name}" if world.active_name else "the active RayCluster"
    reported = world.reported
    overdue = (
        world.abandoned_since is not None
        and (world.now - world.abandoned_since).total_seconds() >= RESTORE_BOUND_SECONDS
    )
    if not capacity_restored(reported) and not overdue:
        held_active = ClusterShare(a, world.active.capacity, world.active.last_migrated)
        held_pending = ClusterShare(p, world.pending.capacity, world.pending.last_migrated)
        if reported is None:
            send, waiting = FULL, f"waiting for the Serve status of {name}"
        elif not _full(reported.target_capacity):
            send = FULL
            waiting = (
                f"restoring the target_capacity of {name} to 100 (Serve reports "
                f"{reported.target_capacity:g}) before traffic moves back"
            )
        else:
            send = None
            waiting = f"waiting for Serve on {name} to scale up to target_capacity 100"
        return AbandonPlan((a, p), held_active, held_pending, send, False, waiting)
    moved = (a, p) != (FULL, 0)
    unconfirmed = not capacity_restored(reported)
    send_full = (
        FULL if unconfirmed and (reported is None or not _full(reported.target_capacity)) else None
    )
    active = ClusterShare(FULL, FULL, world.now if a != FULL else world.active.last_migrated)
    pending = ClusterShare(
        0, world.pending.capacity, world.now if p != 0 else world.pending.last_migrated
    )
    retire = not moved and world.route_observed
    routed = None if retire else f"waiting for the gateway to route all traffic to {name}"
    if unconfirmed and routed is not None:
        routed += (
            f" (Serve did not confirm target_capacity 100 within {RESTORE_BOUND_SECONDS:g}s "
            "of the abandon; traffic moved back anyway)"
        )
    return AbandonPlan((FULL, 0), active, pending, send_full, retire, routed)


def explain_abandoning(rs: Obj, waiting: str | None, now: str) -> None:
    """During phases 2-4: ``UpgradeInProgress`` (True, ``BothActivePendingClustersExist``)
    says that the upgrade is being abandoned and what that waits for."""
    text = "Both active and pending Ray clusters exist; the upgrade is abandoned (see "
    text += "UpgradeAbandoned)" + (f": {waiting}" if waiting else "")
    S.set_cond(rs, S.UPGRADE_IN_PROGRESS, True, S.BOTH_CLUSTERS, text, now)


def retire_pending(rs: Obj) -> dict[str, object]:
    """Phase 4: the empty ``pendingServiceStatus`` to record; a rollback that was running
    when the upgrade was abandoned ends with it."""
    meta = rs["metadata"]
    log.info(
        "abandoned upgrade: the active cluster serves all traffic again; dropping the pending "
        "cluster",
        namespace=meta.get("namespace"),
        name=meta.get("name"),
        cluster=S.cluster_name(rs, "pendingServiceStatus"),
    )
    S.conditions_of(rs)[:] = [
        c for c in S.conditions_of(rs) if c.get("type") != S.ROLLBACK_IN_PROGRESS
    ]
    return {}


def abandon_if_overdue(
    rs: Obj,
    now_dt: datetime,
    *,
    problem: str | None,
    sending: int | None,
    reported: ReportedCapacity | None,
    pending_exists: bool,
) -> str | None:
    """Phase 1: when ``ray.io/upgrade-timeout`` has passed (``upgrade_overdue``) with both
    an active and a pending cluster named and no abandon under way, ``UpgradeAbandoned=True``
    naming the goal hash and ``problem``; then the pending cluster is dropped from the status
    with ``UpgradeInProgress`` False, or, when it exists with an incremental route
    (``pending_exists``) and :func:`keep_pending_on_abandon` (``sending``: the capacity sent
    to the active cluster this pass), kept for phases 2-4. Returns the message of the Warning
    Event to record (None: nothing happened)."""
    spent = upgrade_overdue(rs, now_dt)
    pending = S.cluster_name(rs, "pendingServiceStatus")
    if spent is None or not pending or not S.cluster_name(rs, "activeServiceStatus"):
        return None
    if abandoned_hash(rs) is not None:
        return None  # already abandoned, restoring the active cluster's capacity
    now = rfc3339(now_dt)
    active = share_of(as_map(rs["status"].get("activeServiceStatus")))
    keep = pending_exists and keep_pending_on_abandon(active, sending, reported)
    message = abandon_message(pending, spent, goal_cluster_hash(rs), problem)
    S.set_cond(rs, S.UPGRADE_ABANDONED, True, UPGRADE_TIMEOUT_REASON, message, now)
    meta = rs["metadata"]
    log.info(
        "upgrade abandoned at its deadline",
        namespace=meta.get("namespace"),
        name=meta.get("name"),
        cluster=pending,
        restore_first=keep,
    )
    if keep:
        explain_abandoning(rs, "restoring the capacity of the active RayCluster first", now)
        return message
    rs["status"]["pendingServiceStatus"] = {}
    S.set_cond(
        rs,
        S.UPGRADE_IN_PROGRESS,
        False,
        S.NO_PENDING_CLUSTER,
        "Active Ray cluster exists and no pending Ray cluster",
        now,
    )
    return message
