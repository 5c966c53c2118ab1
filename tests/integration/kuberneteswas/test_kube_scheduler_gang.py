"""The kube-scheduler's own gang scheduling (v1.36, ``GangScheduling``) of a RayCluster
under the KubernetesWAS gate, on a full local cluster (kube-controller-manager,
kube-scheduler, kwok) with the alpha API and gates on. The cluster (head + 2 workers, 1 CPU
each) is pinned to kwok nodes of 1 CPU: one node short, the scheduler tries every pod and
binds none; once the missing node exists all three bind."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import yaml

from kuberay.controllers.batchscheduler.kubernetes_was import PLUGIN_NAME
from kuberay.kube import Client
from kuberay.testing.crds import install_crds
from tests.helpers import eventually
from tests.integration.kuberneteswas.conftest import WAS_APISERVER_ARGS
from tests.integration.raycluster.conftest import start_operator
from tests.kuberay_samples import requires_kuberay_samples, sample

SAMPLE = sample("ray-cluster.scheduler-plugins.yaml")  # KubeRay's, unchanged
POOL_LABEL = "kuberay-test/gang-pool"
GATES = "--feature-gates=GenericWorkload=true,GangScheduling=true"

pytestmark = requires_kuberay_samples


@pytest.fixture(scope="module")
def full_was_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import os

    if os.environ.get("KUBERAY_TEST_KUBECONFIG"):
        pytest.skip("needs the local full control plane (kwok nodes of set capacity)")
    from kuberay.testing import envtest as controlplane

    cp = controlplane.ControlPlane(
        tmp_path_factory.mktemp("was-full"),
        full=True,
        fake_nodes=1,
        start_timeout=240,
        extra_apiserver_args=WAS_APISERVER_ARGS,
        extra_args={"kube-scheduler": [GATES], "kube-controller-manager": [GATES]},
    )
    try:
        cp.start()
    except (controlplane.BuildError, controlplane.ControlPlaneError) as exc:
        pytest.fail(f"full control plane with GangScheduling failed: {exc}", pytrace=False)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture
async def client(full_was_plane: Any) -> AsyncIterator[Client]:
    c = await Client.from_kubeconfig(full_was_plane.kubeconfig, qps=0)
    try:
        await install_crds(c, timeout=180)
        yield c
    finally:
        await c.close()


@pytest.fixture
async def ns(client: Client) -> AsyncIterator[str]:
    name = f"gang-{uuid.uuid4().hex[:6]}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name


@pytest.fixture
async def operator(client: Client, ns: str) -> AsyncIterator[None]:
    async with start_operator(
        client,
        ns,
        gates="KubernetesWAS=true",
        requeue_seconds=10,
        batch_scheduler=PLUGIN_NAME,
    ):
        yield


async def add_node(client: Client, pool: str, index: int) -> str:
    from kuberay.testing import envtest as controlplane

    node = controlplane.fake_node(f"kwok-gang-{index}", index)
    node["metadata"]["labels"][POOL_LABEL] = pool
    capacity = {"cpu": "1", "memory": "8Gi", "pods": "110"}
    node["status"]["capacity"] = dict(capacity)
    node["status"]["allocatable"] = dict(capacity)
    await client.create(node)
    return str(node["metadata"]["name"])


def gang_cluster(ns: str) -> dict[str, Any]:
    body: dict[str, Any] = yaml.safe_load(SAMPLE.read_text())
    body["metadata"]["namespace"] = ns
    for template in [body["spec"]["headGroupSpec"]["template"]] + [
        g["template"] for g in body["spec"]["workerGroupSpecs"]
    ]:
        template["spec"]["nodeSelector"] = {POOL_LABEL: ns}
    return body


def unschedulable(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


async def test_kube_scheduler_binds_the_gang_all_or_nothing(
    operator: None, client: Client, ns: str
) -> None:
    body = gang_cluster(ns)
    name = body["metadata"]["name"]
    nodes = [await add_node(client, ns, i) for i in (10, 11)]  # room for 2 of 3 pods
    await client.create(body)

    async def pods() -> list[dict[str, Any]]:
        items, _ = await client.list_all("v1", "Pod", ns, label_selector=f"ray.io/cluster={name}")
        return items

    async def all_tried() -> list[dict[str, Any]] | None:
        items = await pods()
        return items if len(items) == 3 and all(unschedulable(p) for p in items) else None

    tried = await eventually(
        all_tried, timeout=180, interval=0.5, message="every pod tried and left unscheduled"
    )
    assert all(p["spec"]["schedulingGroup"] == {"podGroupName": f"{name}-cluster"} for p in tried)
    assert [p["metadata"]["name"] for p in await pods() if p["spec"].get("nodeName")] == []

    nodes.append(await add_node(client, ns, 12))

    async def all_bound() -> list[dict[str, Any]] | None:
        items = await pods()
        return items if len(items) == 3 and all(p["spec"].get("nodeName") for p in items) else None

    bound = await eventually(all_bound, timeout=180, interval=0.5, message="all 3 pods bound")
    assert {p["spec"]["nodeName"] for p in bound} == set(nodes)
