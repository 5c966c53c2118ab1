"""Fixtures: the RayCluster controller running in-process against the real apiserver."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.raycluster import RayClusterSettings, setup_raycluster_controller
from kuberay.kube import Client
from kuberay.reconcile import Controller, Manager
from tests.integration.operator_harness import feature_gates, new_manager, running


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
    mgr = new_manager(client, namespace, registry=registry)
    options = BuildOptions.from_env(env or {})
    ctrl = setup_raycluster_controller(
        mgr, RayClusterSettings(options=options, features=feature_gates(gates), **settings)
    )
    async with running(mgr) as task:
        yield Operator(mgr, ctrl, client, task)


@pytest.fixture
async def operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[Operator]:
    async with start_operator(kclient, namespace) as op:
        yield op
