"""Our side of Kueue's contract, with the test writing what Kueue writes (no Kueue binary
needed): admission (flavor node labels + ``suspend: false`` in one update), eviction
(``suspend: true`` + the injected fields restored), readmission on another flavor, and
``managedBy: kueue.x-k8s.io/multikueue`` objects left alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kuberay.kube import Client, Conflict
from tests.helpers import eventually
from tests.integration.kueue.objects import FLAVOR_NODE_LABEL, get_or_none
from tests.integration.raycluster.helpers import raycluster
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import get_job, head_pod, rayjob, state, wait_gone, wait_state

Obj = dict[str, Any]
MULTIKUEUE = "kueue.x-k8s.io/multikueue"


def _templates(cluster_spec: Obj) -> list[Obj]:
    groups = [cluster_spec["headGroupSpec"], *(cluster_spec.get("workerGroupSpecs") or [])]
    return [g["template"].setdefault("spec", {}) for g in groups]


async def kueue_update(
    client: Client, namespace: str, name: str, mutate: Callable[[Obj], None]
) -> None:
    """Read-modify-update of a RayJob's spec, retried on conflicts (as Kueue's job
    reconciler does)."""
    while True:
        job = await get_job(client, namespace, name)
        mutate(job["spec"])
        try:
            await client.update(job)
            return
        except Conflict:
            continue


def admit(flavor: str) -> Callable[[Obj], None]:
    """Kueue's ``RunWithPodSetsInfo``: the flavor's node label on every template, unsuspend."""

    def mutate(spec: Obj) -> None:
        for template in _templates(spec["rayClusterSpec"]):
            template.setdefault("nodeSelector", {})[FLAVOR_NODE_LABEL] = flavor
        spec["suspend"] = False

    return mutate


def evict(spec: Obj) -> None:
    """Kueue's eviction: suspend, and ``RestorePodSetsInfo`` (the injected label removed)."""
    spec["suspend"] = True
    for template in _templates(spec["rayClusterSpec"]):
        template.pop("nodeSelector", None)


async def cluster_of(client: Client, namespace: str, name: str) -> Obj | None:
    """The RayCluster a RayJob runs on, once its status names one that exists."""
    job = await get_job(client, namespace, name)
    cluster_name = (job.get("status") or {}).get("rayClusterName")
    if not cluster_name:
        return None
    return await get_or_none(client, "ray.io/v1", "RayCluster", cluster_name, namespace)


async def test_admission_eviction_and_readmission_follow_kueues_writes(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    # no queue-name label: the operator ignores it, and the real Kueue (when the session runs
    # it) would otherwise re-suspend a job this test admits behind its back
    body = rayjob("queued", namespace, workers=1, suspend=True, shutdownAfterJobFinishes=True)
    await kclient.create(body)
    job = await wait_state(kclient, namespace, "queued", "Suspended")
    assert not job["status"].get("rayClusterName")
    assert (await kclient.list_all("ray.io/v1", "RayCluster", namespace))[0] == []

    await kueue_update(kclient, namespace, "queued", admit("flavor-a"))
    first: Obj = await eventually(
        lambda: cluster_of(kclient, namespace, "queued"), timeout=60, message="RayCluster"
    )
    for template in _templates(first["spec"]):
        assert template["nodeSelector"][FLAVOR_NODE_LABEL] == "flavor-a"
    pod = await head_pod(kclient, namespace, first["metadata"]["name"])
    assert pod["spec"]["nodeSelector"][FLAVOR_NODE_LABEL] == "flavor-a"

    await kueue_update(kclient, namespace, "queued", evict)
    await wait_state(kclient, namespace, "queued", "Suspended")
    await wait_gone(kclient, "ray.io/v1", "RayCluster", namespace, first["metadata"]["name"])

    await kueue_update(kclient, namespace, "queued", admit("flavor-b"))

    async def second_cluster() -> Obj | None:
        cluster = await cluster_of(kclient, namespace, "queued")
        new = cluster is not None and cluster["metadata"]["name"] != first["metadata"]["name"]
        return cluster if new else None

    second: Obj = await eventually(second_cluster, timeout=60, message="a new RayCluster")
    for template in _templates(second["spec"]):
        assert template["nodeSelector"] == {FLAVOR_NODE_LABEL: "flavor-b"}
    assert state(await get_job(kclient, namespace, "queued")) == "Initializing"


async def test_multikueue_objects_get_nothing_from_this_operator(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    job = rayjob("remote", namespace, workers=1, managedBy=MULTIKUEUE)
    await kclient.create(job)
    cluster = raycluster("remote-cluster", namespace, replicas=1, managedBy=MULTIKUEUE)
    await kclient.create(cluster)
    # a RayJob this operator does manage, created after them, marks how far it got
    await kclient.create(rayjob("local", namespace, suspend=True, shutdownAfterJobFinishes=True))
    await wait_state(kclient, namespace, "local", "Suspended")

    remote_job = await get_job(kclient, namespace, "remote")
    assert not remote_job.get("status") and not remote_job["metadata"].get("finalizers")
    remote_cluster = await kclient.get("ray.io/v1", "RayCluster", "remote-cluster", namespace)
    assert not remote_cluster.get("status")
    assert not remote_cluster["metadata"].get("finalizers")
    clusters, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
    assert [c["metadata"]["name"] for c in clusters] == ["remote-cluster"]
    pods, _ = await kclient.list_all("v1", "Pod", namespace)
    services, _ = await kclient.list_all("v1", "Service", namespace)
    assert pods == [] and services == []
