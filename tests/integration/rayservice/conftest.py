"""Fixtures: the RayCluster and RayService controllers in-process against the real apiserver,
with the operator's real dashboard poller (dial guard: 127.0.0.0/8 only)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client
from kuberay.testing.crds import install_crds
from tests.integration import operator_harness as harness
from tests.integration.operator_harness import Operator


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


ServiceOperator = Operator


def start_service_operator(
    kubeconfig_path: Path,
    namespace: str,
    *,
    gates: str = "",
    env: dict[str, str] | None = None,
    enable_metrics: bool = False,
    **settings: Any,
) -> contextlib.AbstractAsyncContextManager[Operator]:
    """RayCluster + RayService controllers with a client of their own (its writes can be
    counted) and the operator's dashboard poller; ``settings`` go to the RayService
    controller."""
    return harness.start_operator(
        kubeconfig_path,
        namespace,
        kinds=("raycluster", "rayservice"),
        gates=gates,
        env=env,
        rayservice={"enable_metrics": enable_metrics, **settings},
    )


@pytest.fixture
async def service_operator(
    crds_installed: None, kubeconfig_path: Path, namespace: str
) -> AsyncIterator[ServiceOperator]:
    async with start_service_operator(kubeconfig_path, namespace) as op:
        yield op
