"""The incremental upgrade's status fields: what one pass writes into active/pending service
status (KubeRay ``calculateStatus`` / ``applyServeTargetCapacity``), the first pending
capacity, the words for a Gateway or HTTPRoute that is not ready, and a whole upgrade and
rollback driven through plan + status with values Serve confirms one pass later."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kuberay.controllers.rayservice.incremental import (
    ClusterShare,
    StepOptions,
    rollback_complete,
    upgrade_complete,
)
from kuberay.controllers.rayservice.incremental_plan import (
    IncrementalWorld,
    plan_incremental_step,
)
from kuberay.controllers.rayservice.incremental_status import (
    initial_pending_capacity,
    record_routing,
    routing_problem,
    share_of,
    write_share,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OPTS = StepOptions(step_size=50, interval_seconds=1, max_surge=50)


def test_share_round_trips_through_the_status_block() -> None:
    block: dict[str, Any] = {"rayClusterName": "c"}
    record_routing(block, None, (100, 0), None, {}, T0)
    assert block == {
        "rayClusterName": "c",
        "trafficRoutedPercent": 100,
        "lastTrafficMigratedTime": "2026-01-01T00:00:00Z",
    }
    assert share_of(block) == ClusterShare(100, None, T0)


def test_an_unchanged_weight_keeps_its_migration_time() -> None:
    block: dict[str, Any] = {
        "trafficRoutedPercent": 100,
        "lastTrafficMigratedTime": "2025-12-31T00:00:00Z",
    }
    record_routing(block, None, (100, 0), None, {}, T0)
    assert block["lastTrafficMigratedTime"] == "2025-12-31T00:00:00Z"


def test_no_route_writes_nothing() -> None:
    block: dict[str, Any] = {"rayClusterName": "c", "targetCapacity": 100}
    record_routing(block, {}, None, None, {"active": 50}, T0)
    assert block == {"rayClusterName": "c", "targetCapacity": 100}


def test_confirmed_capacities_override_the_plan() -> None:
    world = IncrementalWorld(
        active=ClusterShare(100, 100, T0 - timedelta(seconds=9)),
        pending=ClusterShare(0, 0, T0 - timedelta(seconds=9)),
        options=OPTS,
        rollback=False,
        pending_ready=True,
        routing_ready=True,
        now=T0,
    )
    plan = plan_incremental_step(world)
    assert (plan.send_active, plan.send_pending) == (None, 50)
    active: dict[str, Any] = {}
    pending: dict[str, Any] = {}
    record_routing(active, pending, plan.weights, plan, {"pending": 50}, T0)
    assert (active["targetCapacity"], pending["targetCapacity"]) == (100, 50)
    # sent but not yet confirmed: the status keeps the old value
    pending2: dict[str, Any] = {}
    record_routing({}, pending2, plan.weights, plan, {}, T0)
    assert pending2["targetCapacity"] == 0


@pytest.mark.parametrize(
    ("active", "expected"),
    [
        ({}, 100),  # the first cluster of a RayService serves at once
        ({"rayClusterName": "a", "targetCapacity": 100}, 0),  # an upgrade starts at 0
        ({"targetCapacity": 100}, 0),
    ],
)
def test_initial_pending_capacity(active: dict[str, Any], expected: int) -> None:
    assert initial_pending_capacity(active) == expected


def _cond(ctype: str, status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    return {"type": ctype, "status": status, "reason": reason, "message": message}


def _route(*conds: dict[str, Any]) -> dict[str, Any]:
    return {"status": {"parents": [{"conditions": list(conds)}]}}


READY_GW = {"status": {"conditions": [_cond("Accepted", "True"), _cond("Programmed", "True")]}}


@pytest.mark.parametrize(
    ("gateway", "route", "expected"),
    [
        (None, None, "Gateway gw does not exist yet"),
        (
            {"status": {"conditions": [_cond("Accepted", "Unknown", "Pending", "Waiting")]}},
            None,
            "Gateway gw is not Accepted (Pending: Waiting) (is a controller for its "
            "GatewayClass running?)",
        ),
        (
            {"status": {"conditions": [_cond("Accepted", "True")]}},
            None,
            "Gateway gw has no Programmed condition yet (is a controller for its GatewayClass "
            "running?)",
        ),
        (READY_GW, None, "HTTPRoute rt does not exist yet"),
        (READY_GW, {"status": {}}, "HTTPRoute rt has no status from the Gateway's controller yet"),
        (
            READY_GW,
            _route(_cond("Accepted", "True"), _cond("ResolvedRefs", "False", "BackendNotFound")),
            "HTTPRoute rt is not ResolvedRefs (BackendNotFound)",
        ),
        (READY_GW, _route(_cond("Accepted", "True"), _cond("ResolvedRefs", "True")), None),
    ],
)
def test_routing_problem_names_the_object_and_condition(
    gateway: dict[str, Any] | None, route: dict[str, Any] | None, expected: str | None
) -> None:
    assert routing_problem(gateway, route, "gw", "rt") == expected


def _drive(
    active: ClusterShare, pending: ClusterShare, *, rollback: bool, until: str
) -> tuple[list[tuple[int, int]], list[tuple[str, int]], ClusterShare, ClusterShare]:
    """Passes one second apart; a sent capacity is confirmed at the next pass (the poller)."""
    weights: list[tuple[int, int]] = []
    sent: list[tuple[str, int]] = []
    unconfirmed: dict[str, int] = {}
    last_sent: dict[str, int] = {}
    now = T0
    a_block: dict[str, Any] = {}
    p_block: dict[str, Any] = {}
    write_share(a_block, active)
    write_share(p_block, pending)
    for _ in range(60):
        now += timedelta(seconds=1)
        plan = plan_incremental_step(
            IncrementalWorld(share_of(a_block), share_of(p_block), OPTS, rollback, True, True, now)
        )
        confirmed, unconfirmed = unconfirmed, {}
        for role, value in (("active", plan.send_active), ("pending", plan.send_pending)):
            if value is not None:
                if last_sent.get(role) != value:  # asked again until confirmed: one PUT
                    sent.append((role, value))
                    last_sent[role] = value
                unconfirmed[role] = value
        record_routing(a_block, p_block, plan.weights, plan, confirmed, now)
        if not weights or weights[-1] != plan.weights:
            weights.append(plan.weights)
        a, p = share_of(a_block), share_of(p_block)
        if until == "promote" and not rollback and upgrade_complete(a, p):
            return weights, sent, a, p
        if until == "rollback" and rollback and rollback_complete(a, p, pending_ready=True):
            return weights, sent, a, p
    raise AssertionError(f"did not reach {until}: {a_block} {p_block}")


def test_whole_upgrade_through_status_with_late_confirmations() -> None:
    weights, sent, active, pending = _drive(
        ClusterShare(100, 100), ClusterShare(0, 0), rollback=False, until="promote"
    )
    assert weights == [(100, 0), (50, 50), (0, 100)]
    assert sent == [("pending", 50), ("active", 50), ("pending", 100), ("active", 0)]
    assert (active.capacity, pending.traffic, pending.capacity) == (0, 100, 100)


def test_rollback_from_half_way_through_status() -> None:
    weights, sent, active, pending = _drive(
        ClusterShare(50, 50), ClusterShare(50, 50), rollback=True, until="rollback"
    )
    # capacity back first (the active cluster's traffic equals its capacity), then traffic
    assert weights == [(50, 50), (100, 0)]
    assert sent == [("active", 100), ("pending", 0)]
    assert (active.traffic, active.capacity, pending.capacity) == (100, 100, 0)
