"""The steady-state requeue of a RayCluster wakes the cluster when a pod-creation
expectation expires: a pod deleted before the cache ever showed it sends no event the
controller can use, and the group must not wait for the 300 s resync."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kuberay.controllers.raycluster.reconciler import RayClusterReconciler
from kuberay.reconcile import Expectations, Request


def reconciler(requeue_seconds: float, now: list[float]) -> RayClusterReconciler:
    r = RayClusterReconciler.__new__(RayClusterReconciler)
    ctx: Any = SimpleNamespace(
        expectations=Expectations(ttl=30, now=lambda: now[0]),
        settings=SimpleNamespace(requeue_seconds=requeue_seconds),
    )
    r.ctx = ctx
    return r


def test_requeue_is_shortened_to_the_next_expectation_expiry() -> None:
    now = [0.0]
    r = reconciler(300.0, now)
    req = Request("ns", "rc")
    assert r._steady_requeue(req) == 300.0
    r.ctx.expectations.expect_creations("ns/rc/workers", ["rc-workers-abc"])
    r.ctx.expectations.expect_creations("ns/other/workers", ["other-x"])
    now[0] = 10.0
    assert abs(r._steady_requeue(req) - 20.1) < 1e-9
    # Deletions wake the controller through the pod's delete event: no shortening.
    r.ctx.expectations.delete("ns/rc/workers")
    r.ctx.expectations.expect_deletions("ns/rc/workers", ["rc-workers-abc"])
    assert r._steady_requeue(req) == 300.0


def test_no_periodic_requeue_still_wakes_for_an_expiring_expectation() -> None:
    now = [0.0]
    r = reconciler(0.0, now)  # RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV=0
    req = Request("ns", "rc")
    assert r._steady_requeue(req) == 0.0
    r.ctx.expectations.expect_creations("ns/rc/", ["rc-head-x"])
    assert abs(r._steady_requeue(req) - 30.1) < 1e-9
