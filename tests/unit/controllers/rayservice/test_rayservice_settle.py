"""The bound on our own wait for a settled Serve in an incremental upgrade (issue 44, item 4):
a due traffic step waits for the pending cluster's deployments to settle, but only for
``max(3 x intervalSeconds, 30 s)``; then it is taken as KubeRay takes it, and what had not
settled is named."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from kuberay.controllers.dashboard import ServeDetails
from kuberay.controllers.rayservice.abandon import reported_capacity
from kuberay.controllers.rayservice.incremental import ClusterShare, StepOptions
from kuberay.controllers.rayservice.settle import (
    SettleWorld,
    hold_bound,
    settle_gate,
    unsettled,
)

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
OPTIONS = StepOptions(step_size=50, interval_seconds=10, max_surge=50)
#: The pending cluster was sent capacity 50 (confirmed), no traffic yet, last routed long ago.
ACTIVE = ClusterShare(traffic=100, capacity=100, last_migrated=T0 - dt.timedelta(minutes=5))
PENDING = ClusterShare(traffic=0, capacity=50, last_migrated=T0 - dt.timedelta(minutes=5))


def _serve(dep: str = "UPSCALING", app: str = "RUNNING", capacity: Any = 50) -> ServeDetails:
    return ServeDetails.from_json(
        {
            "target_capacity": capacity,
            "applications": {
                "math": {
                    "status": app,
                    "deployments": {
                        "Adder": {"name": "Adder", "status": dep},
                        "Router": {"name": "Router", "status": "HEALTHY"},
                    },
                }
            },
        }
    )


def _world(
    details: ServeDetails | None = None,
    *,
    since: dt.datetime | None = None,
    now: dt.datetime = T0,
    pending: ClusterShare = PENDING,
    ready: bool = True,
) -> SettleWorld:
    return SettleWorld(
        active=ACTIVE,
        pending=pending,
        options=OPTIONS,
        pending_ready=ready,
        reported=reported_capacity(details if details is not None else _serve()),
        held_since=since,
        now=now,
        bound=hold_bound(OPTIONS),
    )


def test_the_bound_is_three_intervals_and_at_least_thirty_seconds() -> None:
    assert hold_bound(OPTIONS) == 30.0
    assert hold_bound(StepOptions(10, 30)) == 90.0  # KubeRay's sample
    assert hold_bound(StepOptions(50, 1)) == 30.0
    assert hold_bound(StepOptions(50, 1), floor=0.0) == 3.0


def test_a_settled_serve_lets_traffic_move_at_once() -> None:
    gate = settle_gate(_world(_serve(dep="HEALTHY")))
    assert (gate.serving, gate.holding, gate.overdue) == (True, False, False)


def test_an_upscaling_serve_holds_a_due_step_and_starts_the_clock() -> None:
    gate = settle_gate(_world())
    assert (gate.serving, gate.holding, gate.overdue) == (False, True, False)


@pytest.mark.parametrize("waited", [0.0, 29.0])
def test_the_hold_lasts_until_the_bound(waited: float) -> None:
    gate = settle_gate(_world(since=T0 - dt.timedelta(seconds=waited)))
    assert (gate.serving, gate.holding, gate.overdue) == (False, True, False)


@pytest.mark.parametrize("dep", ["UPSCALING", "UPDATING"])
def test_past_the_bound_the_step_is_taken_as_kuberay_takes_it(dep: str) -> None:
    gate = settle_gate(_world(_serve(dep=dep), since=T0 - dt.timedelta(seconds=30)))
    assert (gate.serving, gate.holding, gate.overdue) == (True, True, True)


def test_a_pending_cluster_not_ready_is_never_forced() -> None:
    gate = settle_gate(_world(since=T0 - dt.timedelta(hours=1), ready=False))
    assert (gate.serving, gate.holding, gate.overdue) == (False, False, False)


def test_no_clock_while_no_step_is_due() -> None:
    # the interval since the last step has not passed: the wait holds nothing back yet
    recent = ClusterShare(traffic=0, capacity=50, last_migrated=T0 - dt.timedelta(seconds=3))
    assert not settle_gate(_world(pending=recent)).holding
    # traffic already equals the capacity sent: no step to hold
    caught_up = ClusterShare(traffic=50, capacity=50, last_migrated=T0 - dt.timedelta(minutes=1))
    assert not settle_gate(_world(pending=caught_up)).holding


def test_what_had_not_settled_is_named() -> None:
    assert unsettled(_serve(), 50) == "math/Adder UPSCALING"
    assert unsettled(_serve(dep="HEALTHY", app="DEPLOYING"), 50) == (
        "applications not RUNNING: math DEPLOYING"
    )
    assert unsettled(_serve(dep="HEALTHY", capacity=0), 50) == (
        "Serve reports target_capacity 0, not 50"
    )
    assert unsettled(None, 50) == "no Serve status was read"
