"""Fixtures for tests on the real apiserver that use kuberay's own client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kuberay.kube import Client
from kuberay.testing.crds import install_crds


@pytest.fixture(scope="session")
async def crds_installed(kubeconfig_path: Path) -> None:
    """kuberay's four CRDs, installed once per session (packages needing more CRDs add a
    fixture of their own on top of this one)."""
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    try:
        await install_crds(client)
    finally:
        await client.close()


@pytest.fixture
async def kclient(kubeconfig_path: Path) -> AsyncIterator[Client]:
    """kuberay's dict client as cluster admin, unthrottled."""
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    try:
        yield client
    finally:
        await client.close()
