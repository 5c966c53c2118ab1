"""``helm install`` of the ray-cluster chart (manifests/helm/ray-cluster) into the real-node
cluster: the RayCluster it renders goes ``ready`` on real Ray (``rayproject/ray:2.52.0``, the
chart's default image, built by ``hack/release/images.py``), its labels reach the Ray pods, and
``helm uninstall`` removes the cluster and its pods.

The operator runs on the host as in tests/e2e/test_real_node.py. Values: KubeRay's defaults
with the Ray containers' requests shrunk to fit a 2-CPU node. Needs root and ``make helm``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client, NotFound
from tests.e2e.harness import TIMINGS, OperatorProcess, cluster_pods, node_type, pod_ready
from tests.e2e.realcluster import RealCluster, RealIdentity

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "manifests" / "helm" / "ray-cluster"
RELEASE = "raycluster"
CLUSTER = "raycluster-kuberay"  # KubeRay's chart: <release>-<nameOverride "kuberay">

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")

SMALL = {
    "limits": {"cpu": "1", "memory": "2Gi"},
    "requests": {"cpu": "100m", "memory": "512Mi"},
}
VALUES: dict[str, Any] = {
    "labels": {"team": "ml"},
    "head": {"resources": SMALL, "rayStartParams": {"num-cpus": "0"}},
    "worker": {
        "replicas": 1,
        "resources": {
            "limits": {"cpu": "1", "memory": "1Gi"},
            "requests": {"cpu": "100m", "memory": "256Mi"},
        },
    },
}


@pytest.fixture(scope="module")
async def chart_operator(
    real_cluster: RealCluster, real_identity: RealIdentity
) -> AsyncIterator[OperatorProcess]:
    """kuberay-operator on the host, as its ServiceAccount with the shipped RBAC."""
    op = OperatorProcess(
        "ray-cluster-chart-operator",
        real_identity.kubeconfig,
        real_cluster.cp.dir.parent / "operators",
        lease_namespace=real_identity.namespace,
    ).start()
    try:
        await op.wait_ready(60)
        await op.wait_leading(60)
        yield op
    finally:
        op.terminate()


def _helm(real_cluster: RealCluster, *args: str) -> subprocess.CompletedProcess[str]:
    from hack.build import build_helm

    helm = build_helm.binary_path()
    assert helm.exists(), f"no helm at {helm}: run `make helm`"
    env = {
        **os.environ,
        "KUBECONFIG": str(real_cluster.kubeconfig),
        "HOME": str(real_cluster.cp.dir),
    }
    return subprocess.run([str(helm), *args], capture_output=True, text=True, env=env, timeout=300)


async def _until(what: str, check: Any, timeout: float) -> float:
    began = time.monotonic()
    while not await check():
        if time.monotonic() - began > timeout:
            pytest.fail(f"{what}: not within {timeout:.0f}s")
        await asyncio.sleep(1)
    return time.monotonic() - began


async def test_helm_installed_ray_cluster_goes_ready_on_real_ray(
    real_cluster: RealCluster,
    real_admin: Client,
    chart_operator: OperatorProcess,
    rns: str,
    tmp_path: Path,
) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(json.dumps(VALUES))
    done = _helm(real_cluster, "install", RELEASE, str(CHART), "-n", rns, "-f", str(values))
    assert done.returncode == 0, done.stderr + done.stdout
    try:

        async def ready() -> bool:
            rc = await real_admin.get("ray.io/v1", "RayCluster", CLUSTER, rns)
            return (rc.get("status") or {}).get("state") == "ready"

        took = await _until("RayCluster from the chart ready", ready, 300)
        TIMINGS.setdefault("ray-cluster chart: helm install -> ready", []).append(took)
        rc = await real_admin.get("ray.io/v1", "RayCluster", CLUSTER, rns)
        assert rc["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        pods = await cluster_pods(real_admin, rns, CLUSTER)
        assert sorted(node_type(p) for p in pods) == ["head", "worker"]
        for pod in pods:
            assert pod_ready(pod)
            assert pod["metadata"]["labels"]["team"] == "ml"
            assert pod["metadata"]["labels"]["app.kubernetes.io/instance"] == RELEASE
    finally:
        gone = _helm(real_cluster, "uninstall", RELEASE, "-n", rns, "--wait")
    assert gone.returncode == 0, gone.stderr + gone.stdout

    async def deleted() -> bool:
        try:
            await real_admin.get("ray.io/v1", "RayCluster", CLUSTER, rns)
        except NotFound:
            return not await cluster_pods(real_admin, rns, CLUSTER)
        return False

    await _until("RayCluster and its pods deleted by helm uninstall", deleted, 120)
