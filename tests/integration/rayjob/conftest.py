"""Fixtures: the RayCluster and RayJob controllers running in-process against the real
apiserver, with the real dashboard poller dialling fake Ray dashboards on 127.0.0.0/8."""

from __future__ import annotations

import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.kube import Client
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.integration import operator_harness as harness
from tests.integration.operator_harness import Operator

__all__ = ["Operator", "dashboard", "start_operator"]


def start_operator(
    client: Client,
    namespace: str,
    *,
    gates: str = "",
    env: dict[str, str] | None = None,
    registry: Any = None,
    batch_scheduler: str = "",
    dashboard_timeout: float | None = None,
    **settings: Any,
) -> contextlib.AbstractAsyncContextManager[Operator]:
    """RayCluster + RayJob controllers with gates ``gates`` and ``--batch-scheduler``
    ``batch_scheduler``; ``settings`` go to the RayJob controller. ``dashboard_timeout``:
    the dashboard client's timeout (None: the operator's 2 s)."""
    return harness.start_operator(
        client,
        namespace,
        kinds=("raycluster", "rayjob"),
        gates=gates,
        env=env,
        registry=registry,
        raycluster={"requeue_seconds": 10, "batch_scheduler": batch_scheduler},
        rayjob={"batch_scheduler": batch_scheduler, **settings},
        dashboard_timeout=dashboard_timeout,
    )


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
