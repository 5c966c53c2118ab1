"""The bound on our own wait for a settled Serve before traffic moves (beyond KubeRay), as pure
functions.

During a ``NewClusterWithIncrementalUpgrade`` upgrade, traffic moves to the pending cluster only
when Serve there reports the capacity it was sent with every application ``RUNNING`` and no
deployment ``UPSCALING``/``UPDATING`` (:func:`~.abandon.capacity_reached`; KubeRay moves it as
soon as the pending cluster is ready). Replicas that never come up -- e.g. on a Kubernetes cluster
with room for about 1.5 Ray clusters, the new replicas wait for nodes the old cluster holds --
would keep the traffic where it is for good. So the wait is bounded: once a traffic step is held
back by it alone for :func:`hold_bound` seconds (:data:`HOLD_INTERVALS` times the upgrade's
``intervalSeconds``, at least ``floor``), the step is taken as KubeRay takes it (the pending
cluster ready is enough) and the reconciler records a Warning Event naming what had not settled.

The wait's start is the first pass that held a due step back; the reconciler keeps it in memory
(per RayService and pending cluster) rather than in a new status field, and forgets it as soon as
no step is held back. No existing timestamp marks it: ``lastTrafficMigratedTime`` of the pending
cluster is stamped when the cluster is first routed (weight 0), before it has even started, so a
bound counted from it would lapse during the cluster's start and undo the wait at the first step,
where it matters most. An operator restarted during a hold starts the wait again (a held step
waits at most one more bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from kuberay.controllers.dashboard import ServeDetails

from .abandon import FULL, ReportedCapacity, capacity_reached, scaling_deployments
from .incremental import ClusterShare, StepOptions, next_weights

__all__ = [
    "HOLD_FLOOR_SECONDS",
    "HOLD_INTERVALS",
    "SettleGate",
    "SettleWorld",
    "hold_bound",
    "settle_gate",
    "unsettled",
]

#: How many ``intervalSeconds`` a traffic step may be held back waiting for Serve to settle.
HOLD_INTERVALS: Final = 3
#: The least such hold, whatever the interval: Serve replicas take seconds to start, more
#: than a 1 s interval times three.
HOLD_FLOOR_SECONDS: Final = 30.0


def hold_bound(options: StepOptions, floor: float = HOLD_FLOOR_SECONDS) -> float:
    """Seconds a due traffic step may wait for Serve to settle."""
    return max(HOLD_INTERVALS * float(options.interval_seconds), floor)


@dataclass(frozen=True)
class SettleWorld:
    """One forward pass: both clusters' shares (status), the step options, whether the
    pending cluster serves (head, applications RUNNING, proxy), what its Serve reports of
    its capacity, when the current hold began (None: no hold), the time and the bound."""

    active: ClusterShare
    pending: ClusterShare
    options: StepOptions
    pending_ready: bool
    reported: ReportedCapacity | None
    held_since: datetime | None
    now: datetime
    bound: float


@dataclass(frozen=True)
class SettleGate:
    """``serving``: what the stepping plan may take as "the pending cluster can have more
    traffic"; ``holding``: the settled wait alone keeps a due step back now (its clock runs);
    ``overdue``: it has done so for the bound, so the step goes as KubeRay's would."""

    serving: bool
    holding: bool
    overdue: bool


def settle_gate(world: SettleWorld) -> SettleGate:
    """Whether traffic may move to the pending cluster this pass (see the module docstring).
    A step is due when a ready pending cluster would get more traffic now (interval passed,
    capacity above its traffic); only such a step is held, and only for ``world.bound``."""
    if not world.pending_ready:
        return SettleGate(serving=False, holding=False, overdue=False)
    if capacity_reached(world.reported, world.pending.capacity):
        return SettleGate(serving=True, holding=False, overdue=False)
    would = next_weights(
        world.active,
        world.pending,
        world.options,
        rollback=False,
        pending_ready=True,
        now=world.now,
    )
    held = next_weights(
        world.active,
        world.pending,
        world.options,
        rollback=False,
        pending_ready=False,
        now=world.now,
    )
    if would == held:
        return SettleGate(serving=False, holding=False, overdue=False)
    since = world.held_since
    overdue = since is not None and world.now - since >= timedelta(seconds=world.bound)
    return SettleGate(serving=overdue, holding=True, overdue=overdue)


def unsettled(details: ServeDetails | None, capacity: int | None) -> str:
    """What had not settled in the pending cluster's Serve, in words: the deployments still
    scaling (``app/deployment STATUS``), else the applications not RUNNING, else the capacity
    Serve reports instead of the one sent."""
    if details is None:
        return "no Serve status was read"
    scaling = scaling_deployments(details)
    if scaling:
        return ", ".join(scaling)
    if not details.all_running:
        apps = sorted(
            f"{name} {app.status}"
            for name, app in details.applications.items()
            if app.status != "RUNNING"
        )
        return "applications not RUNNING: " + (", ".join(apps) or "none deployed")
    wanted = capacity if capacity is not None else FULL
    reported = FULL if details.target_capacity is None else details.target_capacity
    return f"Serve reports target_capacity {reported:g}, not {wanted}"
