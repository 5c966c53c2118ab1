"""One pass of an incremental upgrade as a pure decision (World in, Plan out), so the reconciler
only does I/O. Composes the stepping rules of ``incremental``:

1. Rollback state (KubeRay ``reconcileRollbackState``): the goal hash equal to the active
   cluster's → rolling back; equal to the pending cluster's → not (a rollback is cancelled);
   neither (a third spec mid-upgrade) → rolling back first, a fresh upgrade comes after.
2. Weights (``next_weights``); each cluster whose weight differs from its status value
   (unset included) gets ``lastTrafficMigratedTime`` = now (KubeRay ``calculateStatus``).
3. Only when the Gateway and HTTPRoute are ready: the ``target_capacity`` each cluster is to be
   sent (``next_target_capacity``; unset capacities start at active 100 / pending 0; a value
   the cluster already has is not sent). Beyond KubeRay: a cluster's capacity is lowered only
   ``settle_seconds`` after its own weight last changed, never in the pass that changes it,
   so the gateway has stopped sending it the traffic its replicas are about to drop.
4. Completion: promotion (``upgrade_complete``, not during a rollback) or the end of a
   rollback (``rollback_complete``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from .incremental import (
    ClusterShare,
    StepOptions,
    next_target_capacity,
    next_weights,
    rollback_complete,
    upgrade_complete,
)

__all__ = ["IncrementalPlan", "IncrementalWorld", "plan_incremental_step", "rollback_wanted"]


def rollback_wanted(goal_hash: str, active_hash: str, pending_hash: str) -> bool:
    """Whether ``RollbackInProgress`` should be True after this pass: the goal is the active
    cluster's spec, or a third spec that the pending cluster does not match either."""
    return goal_hash == active_hash or goal_hash != pending_hash


@dataclass(frozen=True)
class IncrementalWorld:
    """What one pass sees: both clusters' shares (from status), the options, whether a rollback
    is wanted, whether the pending cluster serves (head, apps RUNNING, proxies), whether the
    Gateway and HTTPRoute are ready (Accepted/Programmed; Accepted/ResolvedRefs), the time,
    and how long a cluster's weight must have stood before its capacity is lowered."""

    active: ClusterShare
    pending: ClusterShare
    options: StepOptions
    rollback: bool
    pending_ready: bool
    routing_ready: bool
    now: datetime
    settle_seconds: float = 0.0


@dataclass(frozen=True)
class IncrementalPlan:
    """The pass's outcome: HTTPRoute weights, the shares to write into status, the
    ``target_capacity`` to send (None: nothing) to each cluster, and whether the pending
    cluster is promoted or the rollback is finished."""

    weights: tuple[int, int]
    active: ClusterShare
    pending: ClusterShare
    send_active: int | None
    send_pending: int | None
    promote: bool
    rollback_done: bool


def plan_incremental_step(world: IncrementalWorld) -> IncrementalPlan:
    """The decision for one pass (see the module docstring)."""
    active, pending = world.active, world.pending
    a, p = next_weights(
        active,
        pending,
        world.options,
        rollback=world.rollback,
        pending_ready=world.pending_ready,
        now=world.now,
    )
    active = replace(
        active,
        traffic=a,
        last_migrated=world.now if active.traffic != a else active.last_migrated,
    )
    pending = replace(
        pending,
        traffic=p,
        last_migrated=world.now if pending.traffic != p else pending.last_migrated,
    )
    send_active = send_pending = None
    if world.routing_ready:
        active = replace(active, capacity=100 if active.capacity is None else active.capacity)
        pending = replace(pending, capacity=0 if pending.capacity is None else pending.capacity)
        opts, rb = world.options, world.rollback
        send_active = next_target_capacity("active", active, pending, opts, rollback=rb)
        send_pending = next_target_capacity("pending", active, pending, opts, rollback=rb)
        # a value the cluster already has is not sent again (KubeRay's completion checks)
        send_active = None if send_active == active.capacity else send_active
        send_pending = None if send_pending == pending.capacity else send_pending
        send_active = _after_settle(send_active, active, world)
        send_pending = _after_settle(send_pending, pending, world)
    promote = not world.rollback and upgrade_complete(active, pending)
    done = world.rollback and rollback_complete(active, pending, pending_ready=world.pending_ready)
    return IncrementalPlan((a, p), active, pending, send_active, send_pending, promote, done)


def _after_settle(value: int | None, share: ClusterShare, world: IncrementalWorld) -> int | None:
    """``value`` unless it lowers the cluster's capacity while its weight changed less than
    ``settle_seconds`` ago (this pass included)."""
    if value is None or share.capacity is None or value >= share.capacity:
        return value
    last = share.last_migrated
    if last is not None and world.now - last < timedelta(seconds=world.settle_seconds):
        return None
    if last == world.now:
        return None
    return value
