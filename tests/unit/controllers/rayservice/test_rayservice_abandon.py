"""Abandoning an incremental upgrade (``ray.io/upgrade-timeout``) as decisions: what Serve's
answer says of a cluster's capacity, whether the pending cluster is kept at the deadline, and
the pass-by-pass plan that restores the active cluster's capacity before any traffic moves
back to it, then routes back and retires the pending cluster (also after a restart: the plan
reads only the status and Serve's answer)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

import pytest

from kuberay.controllers.dashboard import ServeDetails
from kuberay.controllers.rayservice import status as S
from kuberay.controllers.rayservice.abandon import (
    RESTORE_BOUND_SECONDS,
    AbandonWorld,
    ReportedCapacity,
    abandon_if_overdue,
    abandoning,
    capacity_restored,
    keep_pending_on_abandon,
    plan_abandon,
    reported_capacity,
    retire_pending,
)
from kuberay.controllers.rayservice.cluster_builder import goal_cluster_hash
from kuberay.controllers.rayservice.incremental import ClusterShare
from kuberay.controllers.rayservice.upgrade import abandoned_hash

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
EARLIER = T0 - dt.timedelta(minutes=5)


def _details(capacity: Any, app: str = "RUNNING", dep: str = "HEALTHY") -> ServeDetails:
    return ServeDetails.from_json(
        {
            "target_capacity": capacity,
            "applications": {
                "app": {
                    "name": "app",
                    "status": app,
                    "deployments": {"d": {"name": "d", "status": dep}},
                }
            },
        }
    )


# ----- what Serve reports ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "parsed"), [(50, 50.0), (100.0, 100.0), (None, None), (True, None), ("x", None)]
)
def test_serve_details_carry_the_target_capacity(raw: Any, parsed: float | None) -> None:
    assert _details(raw).target_capacity == parsed


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        (None, None),
        (_details(50), ReportedCapacity(50.0, True)),
        (_details(None), ReportedCapacity(None, True)),
        (_details(100, dep="UPSCALING"), ReportedCapacity(100.0, False)),
        (_details(100, dep="UPDATING"), ReportedCapacity(100.0, False)),
        (_details(100, app="DEPLOYING"), ReportedCapacity(100.0, False)),
        (ServeDetails(applications={}, target_capacity=100), ReportedCapacity(100.0, False)),
    ],
)
def test_reported_capacity(details: ServeDetails | None, expected: ReportedCapacity) -> None:
    assert reported_capacity(details) == expected


@pytest.mark.parametrize(
    ("reported", "restored"),
    [
        (None, False),
        (ReportedCapacity(50, True), False),
        (ReportedCapacity(100, False), False),
        (ReportedCapacity(100, True), True),
        (ReportedCapacity(None, True), True),
    ],
)
def test_capacity_restored_needs_an_answer_at_full_capacity_and_settled(
    reported: ReportedCapacity | None, restored: bool
) -> None:
    assert capacity_restored(reported) is restored


# ----- the deadline ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("capacity", "sending", "reported", "keep"),
    [
        (None, None, None, False),  # never lowered: dropped at once, as before
        (100, None, ReportedCapacity(100, True), False),
        (50, None, None, True),  # lowered in status
        (0, None, ReportedCapacity(0, True), True),
        (100, 50, None, True),  # being lowered this very pass
        (100, None, ReportedCapacity(50, True), True),  # Serve says less than the status
    ],
)
def test_the_pending_cluster_is_kept_when_the_active_capacity_is_or_may_be_lowered(
    capacity: int | None, sending: int | None, reported: ReportedCapacity | None, keep: bool
) -> None:
    assert keep_pending_on_abandon(ClusterShare(50, capacity), sending, reported) is keep


def _rs(active_capacity: int | None, *, timeout: str = "1") -> dict[str, Any]:
    rs: dict[str, Any] = {
        "metadata": {
            "name": "svc",
            "namespace": "ns",
            "annotations": {"ray.io/upgrade-timeout": timeout},
        },
        "spec": {"rayClusterConfig": {"rayVersion": "2.47.0"}},
        "status": {
            "activeServiceStatus": {"rayClusterName": "old", "trafficRoutedPercent": 50},
            "pendingServiceStatus": {"rayClusterName": "new", "trafficRoutedPercent": 50},
        },
    }
    if active_capacity is not None:
        rs["status"]["activeServiceStatus"]["targetCapacity"] = active_capacity
    S.calculate_conditions(rs, "2026-01-01T00:00:00Z")
    return rs


def _overdue(rs: dict[str, Any], *, pending_exists: bool = True) -> str | None:
    return abandon_if_overdue(
        rs,
        T0 + dt.timedelta(seconds=10),
        problem="head Pod h is Pending",
        sending=None,
        reported=None,
        pending_exists=pending_exists,
    )


def test_an_abandon_that_must_restore_capacity_keeps_the_pending_cluster() -> None:
    rs = _rs(50)
    message = _overdue(rs)
    assert message is not None and "head Pod h is Pending" in message
    assert abandoned_hash(rs) == goal_cluster_hash(rs)
    assert S.cluster_name(rs, "pendingServiceStatus") == "new"
    assert abandoning(rs)
    upgrading = S.find(rs, S.UPGRADE_IN_PROGRESS)
    assert upgrading is not None and upgrading["status"] == "True"
    assert "the upgrade is abandoned" in upgrading["message"]
    # later passes (UpgradeInProgress still True, its deadline long past) do not fire again
    assert _overdue(rs) is None


def test_an_abandon_with_nothing_to_restore_drops_the_pending_cluster_at_once() -> None:
    for rs, exists in ((_rs(None), True), (_rs(100), True), (_rs(50), False)):
        assert _overdue(rs, pending_exists=exists) is not None
        assert S.cluster_name(rs, "pendingServiceStatus") == ""
        assert not S.is_true(rs, S.UPGRADE_IN_PROGRESS)
        assert not abandoning(rs)
        assert abandoned_hash(rs) == goal_cluster_hash(rs)


def test_no_abandon_before_the_deadline_or_without_one() -> None:
    for rs in (_rs(50, timeout="1h"), _rs(50, timeout="")):
        assert _overdue(rs) is None
        assert abandoned_hash(rs) is None


def test_retiring_the_pending_cluster_ends_a_rollback_that_was_running() -> None:
    rs = _rs(50)
    S.set_cond(rs, S.ROLLBACK_IN_PROGRESS, True, "DesiredClusterSpecChanged", "x", "t")
    assert retire_pending(rs) == {}
    assert S.find(rs, S.ROLLBACK_IN_PROGRESS) is None


# ----- one pass of an abandon --------------------------------------------------------------
def _world(**kw: Any) -> AbandonWorld:
    base = AbandonWorld(
        active=ClusterShare(50, 50, EARLIER),
        pending=ClusterShare(50, 100, EARLIER),
        reported=ReportedCapacity(50, True),
        route_observed=True,
        now=T0,
        active_name="old",
    )
    return replace(base, **kw)


@pytest.mark.parametrize(
    ("reported", "send", "words"),
    [
        (None, 100, "waiting for the Serve status of RayCluster old"),
        (ReportedCapacity(50, True), 100, "restoring the target_capacity of RayCluster old"),
        (ReportedCapacity(0, True), 100, "(Serve reports 0)"),
        (ReportedCapacity(100, False), None, "to scale up to target_capacity 100"),
        (ReportedCapacity(None, False), None, "to scale up"),
    ],
)
def test_traffic_stays_until_serve_reports_the_active_cluster_restored(
    reported: ReportedCapacity | None, send: int | None, words: str
) -> None:
    plan = plan_abandon(_world(reported=reported))
    assert plan.weights == (50, 50)
    assert plan.active == ClusterShare(50, 50, EARLIER)  # nothing stamped: no weight moved
    assert plan.pending == ClusterShare(50, 100, EARLIER)
    assert plan.send_active == send
    assert not plan.retire
    assert plan.waiting is not None and words in plan.waiting


def test_unset_traffic_is_held_as_active_100_pending_0() -> None:
    plan = plan_abandon(_world(active=ClusterShare(), pending=ClusterShare()))
    assert plan.weights == (100, 0)
    assert not plan.retire


def test_once_restored_all_traffic_moves_back_in_one_step() -> None:
    plan = plan_abandon(_world(reported=ReportedCapacity(100, True)))
    assert plan.weights == (100, 0)
    assert plan.active == ClusterShare(100, 100, T0)
    assert plan.pending == ClusterShare(0, 100, T0)
    assert plan.send_active is None
    assert not plan.retire  # the weights just written: the gateway has not seen them
    assert plan.waiting is not None and "route all traffic to RayCluster old" in plan.waiting


def test_the_pending_cluster_is_retired_once_the_gateway_observed_the_route_back() -> None:
    world = _world(
        active=ClusterShare(100, 100, EARLIER),
        pending=ClusterShare(0, 100, EARLIER),
        reported=ReportedCapacity(None, True),
    )
    assert not plan_abandon(replace(world, route_observed=False)).retire
    plan = plan_abandon(world)
    assert plan.retire and plan.waiting is None
    assert plan.weights == (100, 0)
    assert plan.active.last_migrated == EARLIER  # no weight changed


@pytest.mark.parametrize(
    ("reported", "send"),
    [(None, 100), (ReportedCapacity(50, True), 100), (ReportedCapacity(100, False), None)],
)
def test_the_restore_wait_is_bounded(reported: ReportedCapacity | None, send: int | None) -> None:
    """A Serve that never confirms holds the traffic only RESTORE_BOUND_SECONDS from the
    abandon (the condition's time, which survives a restart); then it moves back anyway,
    100 still sent while Serve reports less."""
    bound = dt.timedelta(seconds=RESTORE_BOUND_SECONDS)
    held = plan_abandon(_world(reported=reported, abandoned_since=T0 - bound / 2))
    assert held.weights == (50, 50) and held.send_active == send
    plan = plan_abandon(_world(reported=reported, abandoned_since=T0 - bound))
    assert plan.weights == (100, 0) and plan.send_active == send
    assert plan.active == ClusterShare(100, 100, T0)
    assert plan.waiting is not None and "traffic moved back anyway" in plan.waiting
    assert not plan.retire
    # moved back and seen by the gateway: retired, bound or not
    after = plan_abandon(
        _world(
            active=ClusterShare(100, 100, T0),
            pending=ClusterShare(0, 100, T0),
            reported=reported,
            abandoned_since=T0 - bound,
        )
    )
    assert after.retire and after.waiting is None


def test_as_incremental_is_recorded_without_promotion_or_rollback() -> None:
    plan = plan_abandon(_world()).as_incremental()
    assert (plan.weights, plan.send_active, plan.send_pending) == ((50, 50), 100, None)
    assert not plan.promote and not plan.rollback_done


def test_a_whole_abandon_pass_by_pass_never_routes_back_before_the_restore() -> None:
    """Serve takes the config one pass after it is sent and needs two more passes to scale
    up; the status carries the plan's shares from pass to pass. The plan is recomputed from
    scratch each pass (as after a restart)."""
    active, pending = ClusterShare(50, 50, EARLIER), ClusterShare(50, 100, EARLIER)
    serve_capacity: float = 50
    settled, upscaling_passes, sent = True, 0, False
    weights: list[tuple[int, int]] = []
    now = T0
    for _ in range(10):
        now += dt.timedelta(seconds=2)
        plan = plan_abandon(
            AbandonWorld(active, pending, ReportedCapacity(serve_capacity, settled), True, now)
        )
        weights.append(plan.weights)
        if plan.weights[0] == 100:
            assert serve_capacity == 100 and settled  # never before Serve reports it
        if plan.retire:
            break
        active, pending = plan.active, plan.pending
        if sent and serve_capacity < 100:
            serve_capacity, settled, upscaling_passes = 100, False, 2
        elif upscaling_passes:
            upscaling_passes -= 1
            settled = upscaling_passes == 0
        sent = sent or plan.send_active == 100
    assert weights == [(50, 50)] * 4 + [(100, 0)] * 2
    assert plan.retire


def test_capacity_reached_needs_serve_to_report_it_settled() -> None:
    from kuberay.controllers.rayservice.abandon import ReportedCapacity, capacity_reached

    assert not capacity_reached(None, 50)  # no answer
    assert not capacity_reached(ReportedCapacity(0.0, True), 50)  # the send has not arrived
    assert not capacity_reached(ReportedCapacity(50.0, False), 50)  # replicas still starting
    assert capacity_reached(ReportedCapacity(50.0, True), 50)
    assert capacity_reached(ReportedCapacity(100.0, True), 50)
    assert capacity_reached(ReportedCapacity(None, True), 50)  # unset: full


def test_replicas_starting_names_the_deployments_still_scaling() -> None:
    from kuberay.controllers.dashboard.models import ServeDetails
    from kuberay.controllers.rayservice.abandon import replicas_starting

    details = ServeDetails.from_json(
        {
            "target_capacity": 50,
            "applications": {
                "math": {
                    "status": "RUNNING",
                    "deployments": {
                        "Adder": {"name": "Adder", "status": "UPSCALING"},
                        "Router": {"name": "Router", "status": "HEALTHY"},
                    },
                }
            },
        }
    )
    text = replicas_starting("rs-new", 50, details)
    assert text == (
        "waiting for the Serve replicas of RayCluster rs-new (target_capacity 50): "
        "math/Adder UPSCALING"
    )
    assert "Serve status" in replicas_starting("rs-new", 50, None)
