"""Fixtures: the RayCluster and RayService controllers in-process against the real apiserver,
with the operator's real dashboard poller (dial guard: 127.0.0.0/8 only)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.dashboard import DashboardPoller, setup_dashboard_poller
from kuberay.controllers.raycluster import RayClusterSettings, setup_raycluster_controller
from kuberay.controllers.rayservice import RayServiceSettings, setup_rayservice_controller
from kuberay.kube import Client
from kuberay.reconcile import Controller, Manager
from kuberay.testing.crds import install_crds
from tests.integration.operator_harness import feature_gates, new_manager, running


def _gateway_api_crd_dir() -> Path:
    """The Gateway API CRDs from its Go module (see ``hack/build/fetch_crds.py``)."""
    from hack.build import fetch_crds

    return Path(fetch_crds.fetch("gateway-api"))


@pytest.fixture(scope="session")
async def crds_installed(kubeconfig_path: Any) -> None:
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    try:
        await install_crds(client, timeout=240)
        await install_crds(client, timeout=240, directory=_gateway_api_crd_dir())
    finally:
        await client.close()


@attrs.define
class ServiceOperator:
    """A running in-process operator (RayCluster + RayService controllers) scoped to one
    namespace, with its own client so its writes can be counted."""

    manager: Manager
    controller: Controller
    client: Client
    namespace: str
    task: asyncio.Task[None]
    poller: DashboardPoller

    @property
    def reconciler(self) -> Any:
        return self.controller.reconciler


@contextlib.asynccontextmanager
async def start_service_operator(
    kubeconfig_path: Path,
    namespace: str,
    *,
    gates: str = "",
    env: dict[str, str] | None = None,
    enable_metrics: bool = False,
) -> AsyncIterator[ServiceOperator]:
    features = feature_gates(gates)
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    mgr = new_manager(client, namespace)
    environ = dict(env or {})
    options = BuildOptions.from_env(environ)
    setup_raycluster_controller(mgr, RayClusterSettings(options=options, features=features))
    poller = setup_dashboard_poller(mgr, env=environ)
    ctrl = setup_rayservice_controller(
        mgr,
        RayServiceSettings(
            options=options, features=features, env=environ, enable_metrics=enable_metrics
        ),
        poller,
    )
    try:
        async with running(mgr) as task:
            yield ServiceOperator(mgr, ctrl, client, namespace, task, poller)
    finally:
        await client.close()


@pytest.fixture
async def service_operator(
    crds_installed: None, kubeconfig_path: Path, namespace: str
) -> AsyncIterator[ServiceOperator]:
    async with start_service_operator(kubeconfig_path, namespace) as op:
        yield op
