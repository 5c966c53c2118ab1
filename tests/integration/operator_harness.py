"""An in-process operator for integration tests: a Manager scoped to one namespace, run as a
task for the length of a ``with`` block (each test package adds the controllers it needs)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from kuberay.cmd.operator import CACHE_SCOPE
from kuberay.featuregates.kuberay_gates import new_feature_gate
from kuberay.kube import Client
from kuberay.reconcile import Manager
from kuberay.reconcile.options import ControllerOptions, ManagerOptions


def new_manager(
    client: Client, namespace: str, *, workers: int = 2, registry: Any = None
) -> Manager:
    """A Manager watching only ``namespace`` with the operator's cache scope, no metrics or
    probe servers, no signal handlers and ``workers`` concurrent reconciles per controller."""
    options = ManagerOptions(
        namespaces=[namespace],
        by_object=CACHE_SCOPE,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        handle_signals=False,
        controller=ControllerOptions(max_concurrent_reconciles=workers),
    )
    return Manager(client, options, registry=registry)


def feature_gates(gates: str = "") -> dict[str, bool]:
    """KubeRay's feature gates with their defaults, then ``gates`` (``"A=true,B=false"``)."""
    fg = new_feature_gate()
    fg.set_from_string(gates)
    return fg.as_dict()


@contextlib.asynccontextmanager
async def running(mgr: Manager) -> AsyncIterator[asyncio.Task[None]]:
    """Run ``mgr`` as a task; on exit stop it and wait (bounded) until it has shut down."""
    task = asyncio.create_task(mgr.run())
    try:
        yield task
    finally:
        mgr.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)
