"""Fixtures: the NetworkPolicy controller running in-process against the real apiserver."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.cmd.operator import CACHE_SCOPE
from kuberay.controllers.networkpolicy import setup_networkpolicy_controller
from kuberay.kube import Client
from kuberay.reconcile import Manager
from tests.integration.raycluster.conftest import Operator, crds_installed

__all__ = ["crds_installed"]


@contextlib.asynccontextmanager
async def start_netpol_operator(client: Client, namespace: str) -> AsyncIterator[Operator]:
    """The NetworkPolicy controller alone (it needs no pods), scoped to ``namespace``."""
    mgr = Manager(
        client,
        namespaces=[namespace],
        by_object=CACHE_SCOPE,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        handle_signals=False,
        max_concurrent_reconciles=2,
    )
    ctrl = setup_networkpolicy_controller(mgr)
    task = asyncio.create_task(mgr.run())
    try:
        yield Operator(mgr, ctrl, client, task)
    finally:
        mgr.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


@pytest.fixture
async def netpol_operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[Any]:
    async with start_netpol_operator(kclient, namespace) as op:
        yield op
