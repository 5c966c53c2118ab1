"""The incremental upgrade's traffic and capacity stepping as tables. Expected values follow
KubeRay's rules (``calculateTrafficRoutedPercent``, ``reconcileServeTargetCapacity``, and the
cases of its Go unit tests ``TestReconcileServeTargetCapacity`` and
``TestShouldCompleteIncrementalRollback``), plus whole upgrades and rollbacks driven step by
step with an injected clock."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from kuberay.controllers.rayservice.incremental import (
    ClusterShare,
    StepOptions,
    next_target_capacity,
    next_weights,
    rollback_complete,
    step_options,
    upgrade_complete,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OPTS = StepOptions(step_size=10, interval_seconds=30, max_surge=20)


@pytest.mark.parametrize(
    ("active", "pending", "rollback", "ready", "now", "expected"),
    [
        # first step: nothing migrated yet, capacity 30 allows one 10 % step
        (ClusterShare(None, 70), ClusterShare(None, 30), False, True, T0, (90, 10)),
        # interval not yet passed since the pending cluster's last migration: no step
        (
            ClusterShare(90, 70),
            ClusterShare(10, 30, T0),
            False,
            True,
            T0 + timedelta(seconds=29),
            (90, 10),
        ),
        # interval passed: one step
        (
            ClusterShare(90, 70),
            ClusterShare(10, 30, T0),
            False,
            True,
            T0 + timedelta(seconds=30),
            (80, 20),
        ),
        # a step never exceeds the pending cluster's target capacity
        (ClusterShare(75, 70), ClusterShare(25, 30), False, True, T0, (70, 30)),
        # traffic caught up with capacity: no step
        (ClusterShare(70, 70), ClusterShare(30, 30), False, True, T0, (70, 30)),
        # pending cluster not ready: paused
        (ClusterShare(90, 70), ClusterShare(10, 30), False, False, T0, (90, 10)),
        # rollback: traffic returns to the active cluster, bounded by its capacity, ready or not
        (ClusterShare(60, 100), ClusterShare(40, 40), True, False, T0, (70, 30)),
        (ClusterShare(95, 100), ClusterShare(5, 5), True, True, T0, (100, 0)),
        # rollback paced by the ACTIVE cluster's last migration time
        (
            ClusterShare(60, 100, T0),
            ClusterShare(40, 40, T0 - timedelta(hours=1)),
            True,
            True,
            T0 + timedelta(seconds=1),
            (60, 40),
        ),
        # rollback stops once the active cluster's traffic equals its capacity
        (ClusterShare(60, 60), ClusterShare(40, 40), True, True, T0, (60, 40)),
        # a first migration (no time recorded) steps at once; weights always sum to 100
        (ClusterShare(100, 100), ClusterShare(0, 100), False, True, T0, (90, 10)),
        # the last step is clamped to 100 %
        (ClusterShare(5, 0), ClusterShare(95, 100), False, True, T0, (0, 100)),
        # the pending cluster at 100 % with its full capacity: nothing left to move
        (ClusterShare(0, 0), ClusterShare(100, 100), False, True, T0, (0, 100)),
        # a rollback with the active cluster's capacity lowered moves only up to it
        (ClusterShare(0, 20), ClusterShare(100, 100), True, False, T0, (10, 90)),
    ],
)
def test_traffic_weights(
    active: ClusterShare,
    pending: ClusterShare,
    rollback: bool,
    ready: bool,
    now: datetime,
    expected: tuple[int, int],
) -> None:
    got = next_weights(active, pending, OPTS, rollback=rollback, pending_ready=ready, now=now)
    assert got == expected


@pytest.mark.parametrize(
    ("role", "active", "pending", "surge", "rollback", "expected"),
    [
        # KubeRay TestReconcileServeTargetCapacity: pending scales up when the sum is <= 100
        ("pending", ClusterShare(0, 70), ClusterShare(10, 10), 20, False, 30),
        # ... and active scales down when the sum is > 100
        ("active", ClusterShare(0, 80), ClusterShare(30, 30), 20, False, 60),
        # the cluster not due for a change gets nothing
        ("active", ClusterShare(0, 70), ClusterShare(10, 10), 20, False, None),
        ("pending", ClusterShare(0, 80), ClusterShare(30, 30), 20, False, None),
        # traffic has not caught up with the pending capacity: wait
        ("pending", ClusterShare(90, 70), ClusterShare(10, 30), 20, False, None),
        # bounds: never below 0 nor above 100
        ("active", ClusterShare(0, 10), ClusterShare(100, 100), 20, False, 0),
        ("pending", ClusterShare(0, 0), ClusterShare(90, 90), 20, False, 100),
        # unset capacities count as active 100 / pending 0: first move raises the pending one
        ("pending", ClusterShare(), ClusterShare(), 20, False, 20),
        # rollback: the pending cluster drains while the sum is over 100 ...
        ("pending", ClusterShare(60, 60), ClusterShare(40, 50), 20, True, 30),
        # ... then the active cluster rises
        ("active", ClusterShare(60, 60), ClusterShare(40, 40), 20, True, 80),
        # rollback waits for traffic to reach the active capacity
        ("active", ClusterShare(50, 60), ClusterShare(50, 40), 20, True, None),
        # maxSurgePercent 100 (the default): one capacity step each way
        ("pending", ClusterShare(100, 100), ClusterShare(0, 0), 100, False, 100),
        ("active", ClusterShare(0, 100), ClusterShare(100, 100), 100, False, 0),
        # rollback: the active cluster rises only once the pending one is drained to <= 100
        ("active", ClusterShare(100, 100), ClusterShare(0, 20), 20, True, None),
        ("pending", ClusterShare(100, 100), ClusterShare(0, 20), 20, True, 0),
    ],
)
def test_target_capacity(
    role: str,
    active: ClusterShare,
    pending: ClusterShare,
    surge: int,
    rollback: bool,
    expected: int | None,
) -> None:
    opts = StepOptions(step_size=10, interval_seconds=30, max_surge=surge)
    assert next_target_capacity(role, active, pending, opts, rollback=rollback) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("active", "pending", "ready", "expected"),
    [
        (ClusterShare(100, 100), ClusterShare(0, 0), True, True),
        (ClusterShare(100, 100), ClusterShare(0, 30), False, True),
        (ClusterShare(100, 100), ClusterShare(), False, True),
        (ClusterShare(100, 100), ClusterShare(0, 30), True, False),
        (ClusterShare(90, 100), ClusterShare(10, 0), True, False),
    ],
)
def test_rollback_complete(
    active: ClusterShare, pending: ClusterShare, ready: bool, expected: bool
) -> None:
    assert rollback_complete(active, pending, pending_ready=ready) is expected


def _drive(
    active: ClusterShare, pending: ClusterShare, opts: StepOptions, *, rollback: bool, done: object
) -> tuple[ClusterShare, ClusterShare, list[tuple[int, int, int, int]]]:
    """Run reconciles one interval apart until ``done``; the (A, P, A_TC, P_TC) trail."""
    now, trail = T0, []
    for _ in range(200):
        a_cap = next_target_capacity("active", active, pending, opts, rollback=rollback)
        p_cap = next_target_capacity("pending", active, pending, opts, rollback=rollback)
        if a_cap is not None:
            active = ClusterShare(active.traffic, a_cap, active.last_migrated)
        if p_cap is not None:
            pending = ClusterShare(pending.traffic, p_cap, pending.last_migrated)
        a, p = next_weights(active, pending, opts, rollback=rollback, pending_ready=True, now=now)
        if (a, p) != (active.traffic, pending.traffic):
            gaining_active = rollback
            active = ClusterShare(
                a, active.capacity, now if gaining_active else active.last_migrated
            )
            pending = ClusterShare(
                p, pending.capacity, pending.last_migrated if gaining_active else now
            )
        trail.append((a, p, active.capacity or 0, pending.capacity or 0))
        if done(active, pending):  # type: ignore[operator]
            return active, pending, trail
        now += timedelta(seconds=opts.interval_seconds)
    raise AssertionError(f"did not converge: {trail[-5:]}")


@pytest.mark.parametrize(
    "opts",
    [
        StepOptions(10, 5, 20),
        StepOptions(25, 5, 100),
        StepOptions(7, 1, 13),
        StepOptions(100, 1, 100),
    ],
)
def test_upgrade_converges_to_promotion_within_the_surge_budget(opts: StepOptions) -> None:
    active, pending, trail = _drive(
        ClusterShare(), ClusterShare(), opts, rollback=False, done=upgrade_complete
    )
    assert (pending.traffic, active.capacity) == (100, 0)
    for a, p, a_cap, p_cap in trail:
        assert a + p == 100
        assert p <= p_cap  # traffic never outruns the capacity serving it
        assert a_cap + p_cap <= 100 + opts.max_surge
    steps = [later[1] - earlier[1] for earlier, later in itertools.pairwise(trail)]
    assert max(steps) <= opts.step_size


def test_rollback_from_half_way_returns_everything_to_the_active_cluster() -> None:
    opts = StepOptions(10, 5, 20)
    active, pending, _ = _drive(
        ClusterShare(),
        ClusterShare(),
        opts,
        rollback=False,
        done=lambda a, p: p.traffic == 50,
    )
    active, pending, trail = _drive(
        active,
        pending,
        opts,
        rollback=True,
        done=lambda a, p: rollback_complete(a, p, pending_ready=True),
    )
    assert (active.traffic, active.capacity, pending.traffic, pending.capacity) == (100, 100, 0, 0)
    assert all(a + p == 100 for a, p, _, _ in trail)


def test_step_options_from_spec() -> None:
    rs = {
        "spec": {
            "upgradeStrategy": {
                "type": "NewClusterWithIncrementalUpgrade",
                "clusterUpgradeOptions": {"stepSizePercent": 10, "intervalSeconds": 30},
            }
        }
    }
    assert step_options(rs) == StepOptions(10, 30, 100)
    assert step_options({"spec": {}}) is None
