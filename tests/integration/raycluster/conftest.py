"""Fixtures: the RayCluster controller running in-process against the real apiserver."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from kuberay.cmd.operator import CACHE_SCOPE
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.features import new_feature_gate
from kuberay.controllers.raycluster import RayClusterSettings, setup_raycluster_controller
from kuberay.kube import Client
from kuberay.reconcile import Controller, Manager
from tests.crds import install_crds


@pytest.fixture(scope="session")
async def crds_installed(kubeconfig_path: Any) -> None:
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    try:
        await install_crds(client)
    finally:
        await client.close()


@attrs.define
class Operator:
    """A running in-process operator scoped to one namespace."""

    manager: Manager
    controller: Controller
    client: Client
    task: asyncio.Task[None]

    @property
    def reconciler(self) -> Any:
        return self.controller.reconciler


@contextlib.asynccontextmanager
async def start_operator(
    client: Client,
    namespace: str,
    *,
    gates: str = "",
    env: dict[str, str] | None = None,
    registry: Any = None,
    **settings: Any,
) -> AsyncIterator[Operator]:
    fg = new_feature_gate()
    fg.set_from_string(gates)
    mgr = Manager(
        client,
        namespaces=[namespace],
        by_object=CACHE_SCOPE,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        handle_signals=False,
        max_concurrent_reconciles=2,
        registry=registry,
    )
    options = BuildOptions.from_env(env or {})
    ctrl = setup_raycluster_controller(
        mgr, RayClusterSettings(options=options, features=fg.as_dict(), **settings)
    )
    task = asyncio.create_task(mgr.run())
    try:
        yield Operator(mgr, ctrl, client, task)
    finally:
        mgr.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


@pytest.fixture
async def operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[Operator]:
    async with start_operator(kclient, namespace) as op:
        yield op
