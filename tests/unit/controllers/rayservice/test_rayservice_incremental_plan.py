"""One incremental-upgrade pass as a decision: rollback state (KubeRay
``TestReconcileRollbackState`` cases), weights and migration timestamps, capacities only once
the Gateway API objects are ready, promotion and the end of a rollback; whole upgrades driven
pass by pass with an injected clock, a rollback started half-way, and a repeated pass on an
unchanged world deciding nothing new."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from kuberay.controllers.rayservice.incremental import ClusterShare, StepOptions
from kuberay.controllers.rayservice.incremental_plan import (
    IncrementalPlan,
    IncrementalWorld,
    plan_incremental_step,
    rollback_wanted,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OPTS = StepOptions(step_size=20, interval_seconds=1, max_surge=50)


@pytest.mark.parametrize(
    ("goal", "expected"),
    [("old", True), ("new", False), ("third", True)],
)
def test_rollback_state_follows_the_goal_hash(goal: str, expected: bool) -> None:
    assert rollback_wanted(goal, "old", "new") is expected


def _world(**kw: object) -> IncrementalWorld:
    base = IncrementalWorld(
        active=ClusterShare(),
        pending=ClusterShare(),
        options=OPTS,
        rollback=False,
        pending_ready=True,
        routing_ready=True,
        now=T0,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_no_capacity_moves_before_the_gateway_api_objects_are_ready() -> None:
    plan = plan_incremental_step(_world(routing_ready=False))
    assert (plan.send_active, plan.send_pending) == (None, None)
    assert plan.weights == (100, 0)  # pending capacity 0: no traffic may move yet
    ready = plan_incremental_step(_world())
    assert (ready.send_active, ready.send_pending) == (None, 50)
    assert (ready.active.capacity, ready.pending.capacity) == (100, 0)


def test_a_weight_step_stamps_every_cluster_whose_weight_changed() -> None:
    earlier = T0 - timedelta(seconds=5)
    world = _world(active=ClusterShare(100, 100, earlier), pending=ClusterShare(0, 50, earlier))
    plan = plan_incremental_step(world)
    assert plan.weights == (80, 20)
    assert (plan.active.last_migrated, plan.pending.last_migrated) == (T0, T0)
    back = plan_incremental_step(
        _world(
            active=ClusterShare(60, 100, earlier),
            pending=ClusterShare(40, 40, earlier),
            rollback=True,
        )
    )
    assert back.weights == (80, 20)
    assert (back.active.last_migrated, back.pending.last_migrated) == (T0, T0)


def test_a_first_weight_is_stamped_and_an_unchanged_one_is_not() -> None:
    # The HTTPRoute gains the pending backend at weight 0: KubeRay stamps it (unset -> 0),
    # so the first step waits intervalSeconds.
    earlier = T0 - timedelta(seconds=5)
    plan = plan_incremental_step(
        _world(active=ClusterShare(100, 100, earlier), pending=ClusterShare(None, 0))
    )
    assert plan.weights == (100, 0)
    assert plan.pending.last_migrated == T0
    assert plan.active.last_migrated == earlier


def _apply(plan: IncrementalPlan) -> tuple[ClusterShare, ClusterShare]:
    """What the reconciler writes: shares from the plan, sent capacities once accepted."""
    active, pending = plan.active, plan.pending
    if plan.send_active is not None:
        active = replace(active, capacity=plan.send_active)
    if plan.send_pending is not None:
        pending = replace(pending, capacity=plan.send_pending)
    return active, pending


def _run(world: IncrementalWorld, until: str, passes: int = 100) -> tuple[IncrementalWorld, int]:
    for n in range(passes):
        plan = plan_incremental_step(world)
        if (until == "promote" and plan.promote) or (until == "rolled-back" and plan.rollback_done):
            return world, n
        if until == "half" and plan.pending.traffic == 50:
            active, pending = _apply(plan)
            return replace(world, active=active, pending=pending), n
        active, pending = _apply(plan)
        assert plan.weights[0] + plan.weights[1] == 100
        world = replace(world, active=active, pending=pending, now=world.now + timedelta(seconds=1))
    raise AssertionError(f"no {until} after {passes} passes: {world}")


def test_upgrade_reaches_promotion_pass_by_pass() -> None:
    world, _ = _run(_world(), "promote")
    assert world.active.capacity == 0
    assert world.pending.traffic == 100


def test_rollback_half_way_returns_to_the_active_cluster() -> None:
    half, _ = _run(_world(), "half")
    assert half.pending.traffic == 50
    world, _ = _run(replace(half, rollback=True), "rolled-back")
    assert (world.active.traffic, world.active.capacity) == (100, 100)
    assert (world.pending.traffic, world.pending.capacity) == (0, 0)


def test_rollback_completes_at_once_when_the_pending_cluster_is_unhealthy() -> None:
    world = _world(
        active=ClusterShare(100, 100),
        pending=ClusterShare(0, 50),
        rollback=True,
        pending_ready=False,
    )
    assert plan_incremental_step(world).rollback_done


def test_a_pass_within_the_interval_on_an_unchanged_world_changes_nothing() -> None:
    world = _world(active=ClusterShare(80, 100, None), pending=ClusterShare(20, 50, T0))
    plan = plan_incremental_step(replace(world, now=T0 + timedelta(milliseconds=500)))
    assert plan.weights == (80, 20)
    assert (plan.active, plan.pending) == (world.active, world.pending)
    assert (plan.send_active, plan.send_pending) == (None, None)


def test_a_capacity_is_lowered_only_once_its_weight_has_settled() -> None:
    # Beyond KubeRay: the active cluster's weight went to 50 at T0; its capacity drops from
    # 100 to 50 only settle_seconds later, never in the pass that moved the weight.
    earlier = T0 - timedelta(seconds=5)
    moving = _world(
        active=ClusterShare(100, 100, earlier),
        pending=ClusterShare(30, 50, earlier),
        settle_seconds=5,
    )
    plan = plan_incremental_step(moving)
    assert plan.weights == (50, 50)
    assert plan.send_active is None  # same pass as the weight change
    settling = replace(moving, active=plan.active, pending=plan.pending)
    for after in (1, 4):
        later = plan_incremental_step(replace(settling, now=T0 + timedelta(seconds=after)))
        assert later.send_active is None
    settled = plan_incremental_step(replace(settling, now=T0 + timedelta(seconds=5)))
    assert settled.send_active == 50
    # Raising a capacity does not wait: the pending cluster gains replicas at once.
    rising = _world(active=ClusterShare(100, 100, T0), pending=ClusterShare(0, 0, T0))
    assert plan_incremental_step(replace(rising, settle_seconds=5)).send_pending == 50


def test_a_rollback_lowers_the_pending_capacity_after_its_weight_settles() -> None:
    earlier = T0 - timedelta(seconds=5)
    world = _world(
        active=ClusterShare(50, 100, earlier),
        pending=ClusterShare(50, 50, earlier),
        rollback=True,
        settle_seconds=5,
    )
    plan = plan_incremental_step(world)
    assert plan.weights == (70, 30)
    assert plan.send_pending is None
    at_full = replace(
        world,
        active=ClusterShare(100, 100, T0),
        pending=ClusterShare(0, 50, T0),
        now=T0 + timedelta(seconds=2),
    )
    assert plan_incremental_step(at_full).send_pending is None
    assert plan_incremental_step(replace(at_full, now=T0 + timedelta(seconds=5))).send_pending == 0
