"""A RayCluster step that fails the expected way (a create refused, a child name taken)
is a reconcile error retried with backoff, not a panic: only bugs count as panics."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import REGISTRY

from kuberay.controllers.raycluster.children import ChildConflict
from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.reconcile import Controller, Request, Result


class Failing:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def reconcile(self, request: Request) -> Result:
        raise self.exc


def _value(name: str, controller: str) -> float:
    return REGISTRY.get_sample_value(name, {"controller": controller}) or 0.0


@pytest.mark.parametrize(
    "exc",
    [
        ReconcileError("failed to create head Pod ns/rc-head: quota", "FailedCreateHeadPod"),
        ChildConflict("name taken", "ChildResourceConflict"),
    ],
)
async def test_step_failures_are_errors_not_panics(exc: Exception) -> None:
    name = f"rc-failure-{type(exc).__name__}"
    ctrl = Controller(name, Failing(exc))
    ctrl.queue = ctrl._make_queue()
    await ctrl.process(Request("ns", "rc"))
    assert _value("controller_runtime_reconcile_errors_total", name) == 1.0
    assert _value("controller_runtime_reconcile_panics_total", name) == 0.0
    assert ctrl.queue.num_requeues(Request("ns", "rc")) == 1
    ctrl.queue.shutdown()
    await asyncio.sleep(0)
