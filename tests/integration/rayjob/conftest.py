"""Fixtures: the RayCluster and RayJob controllers running in-process against the real
apiserver, with the real dashboard poller dialling fake Ray dashboards on 127.0.0.0/8."""

from __future__ import annotations

import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.dashboard.factory import DashboardClientFactory
from kuberay.controllers.dashboard.poller import DashboardPoller
from kuberay.controllers.dashboard.setup import cached_secret_reader
from kuberay.controllers.raycluster import RayClusterSettings, setup_raycluster_controller
from kuberay.controllers.rayjob import RayJobSettings, setup_rayjob_controller
from kuberay.kube import Client
from kuberay.reconcile import Controller, Manager
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.integration.operator_harness import feature_gates, new_manager, running


@attrs.define
class Operator:
    """A running in-process operator (RayCluster + RayJob) scoped to one namespace."""

    manager: Manager
    rayjob: Controller
    client: Client
    poller: DashboardPoller

    @property
    def reconciler(self) -> Any:
        return self.rayjob.reconciler


@contextlib.asynccontextmanager
async def start_operator(
    client: Client,
    namespace: str,
    *,
    gates: str = "",
    env: dict[str, str] | None = None,
    registry: Any = None,
    batch_scheduler: str = "",
    dashboard_timeout: float | None = None,
    **settings: Any,
) -> AsyncIterator[Operator]:
    """RayCluster + RayJob controllers with gates ``gates`` and ``--batch-scheduler``
    ``batch_scheduler``; ``settings`` go to the RayJob controller. ``dashboard_timeout``:
    the dashboard client's timeout (None: the operator's 2 s)."""
    features = feature_gates(gates)
    mgr = new_manager(client, namespace, registry=registry)
    options = BuildOptions.from_env(env or {})
    setup_raycluster_controller(
        mgr,
        RayClusterSettings(
            options=options,
            features=features,
            requeue_seconds=10,
            batch_scheduler=batch_scheduler,
        ),
    )
    # no apiserver-proxy fallback (the operator's default is on): the fake pod IPs these
    # tests refuse must stay refused, and the integration apiserver has no Endpoints to proxy
    factory = DashboardClientFactory(
        client, environ={}, timeout=dashboard_timeout, cached_secret=cached_secret_reader(mgr)
    )
    poller = DashboardPoller(factory)
    rayjob = setup_rayjob_controller(
        mgr,
        RayJobSettings.from_env(
            env or {},
            options=options,
            features=features,
            batch_scheduler=batch_scheduler,
            **settings,
        ),
        poller,
    )
    try:
        async with running(mgr):
            yield Operator(mgr, rayjob, client, poller)
    finally:
        await poller.close()
        await factory.close()


@pytest.fixture
async def operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[Operator]:
    async with start_operator(kclient, namespace) as op:
        yield op


@pytest.fixture
async def dashboard() -> AsyncIterator[FakeDashboard]:
    """A fake Ray dashboard on port 8265 of a random 127.x.y.z address."""
    host = f"127.{random.randint(20, 250)}.{random.randint(0, 255)}.{random.randint(2, 250)}"
    async with FakeDashboard(host, 8265) as fake:
        yield fake
