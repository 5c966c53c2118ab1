"""Fixtures: the third-party scheduler CRDs (from their Go modules, see
``hack/build/fetch_crds.py``) and the RayCluster + RayJob controllers running in-process with
``--batch-scheduler=<name>``. No third-party scheduler runs (see the README of this
directory's tests): tests read the objects and metadata the operator writes."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.kube import AlreadyExists, Client
from kuberay.testing.crds import install_crds
from tests.integration.rayjob.conftest import Operator, dashboard, start_operator
from tests.kuberay_samples import sample, skip_unless_available

__all__ = ["dashboard"]


def _crd_dir(name: str) -> Path:
    from hack.build import fetch_crds

    return Path(fetch_crds.fetch(name))


@pytest.fixture(scope="session")
async def scheduler_crds(crds_installed: None, kubeconfig_path: Any) -> None:
    """Volcano's and scheduler-plugins' CRDs, installed once."""
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    try:
        for name in ("volcano", "scheduler-plugins"):
            await install_crds(client, directory=_crd_dir(name))
    finally:
        await client.close()


def start_scheduler_operator(
    client: Client, namespace: str, scheduler: str
) -> contextlib.AbstractAsyncContextManager[Operator]:
    """RayCluster + RayJob controllers with ``--batch-scheduler=<scheduler>``."""
    return start_operator(client, namespace, batch_scheduler=scheduler)


_CREATABLE = {"ray.io/v1", "v1", "scheduling.volcano.sh/v1beta1"}


async def create_sample(client: Client, file: str, namespace: str) -> dict[str, Any]:
    """Create every document of a KubeRay sample (cluster-scoped ones tolerate
    AlreadyExists); the Ray object (RayCluster / RayJob) it holds. Skips the test where
    KubeRay's samples are absent (``tests/kuberay_samples.py``)."""
    skip_unless_available()
    ray: dict[str, Any] = {}
    for doc in yaml.safe_load_all(sample(file).read_text()):
        if not doc or doc["apiVersion"] not in _CREATABLE:
            continue  # e.g. KAI's queues: that scheduler's CRDs are not installed
        if doc["kind"] != "Queue":
            doc["metadata"]["namespace"] = namespace
        try:
            created = await client.create(doc)
        except AlreadyExists:
            continue
        if doc["apiVersion"] == "ray.io/v1":
            ray = created
    return ray
