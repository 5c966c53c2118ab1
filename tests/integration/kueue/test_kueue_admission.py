"""The real Kueue controller admitting Ray objects our operator then runs (issue 12, Kueue).

Kueue's contract with KubeRay: a Ray object labelled ``kueue.x-k8s.io/queue-name`` and created
with ``suspend: true`` gets a Workload; when the ClusterQueue has quota, Kueue admits it by
writing the flavor's node labels into every pod template and setting ``suspend: false`` in one
update; only then does KubeRay create the RayCluster (RayJob) or the pods (RayCluster), from the
spec as Kueue wrote it. Without quota the object stays suspended and nothing is created.

No kubelet runs here, so pods stay Pending: the tests assert what a user sees (the Workload's
conditions, the RayJob's status, which clusters and pods exist and where they would land).
"""

from __future__ import annotations

from typing import Any

import yaml

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.kueue.objects import (
    FLAVOR_NODE_LABEL,
    QUEUE_LABEL,
    condition,
    get_or_none,
    is_true,
    queues,
    workload_of,
)
from tests.integration.kueue.process import KueueProcess
from tests.integration.rayjob.conftest import start_operator
from tests.integration.rayjob.helpers import get_job, head_pod, state
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples

pytestmark = requires_kuberay_samples  # both tests queue one of KubeRay's samples

Obj = dict[str, Any]


def queued(sample: str, namespace: str, queue: str) -> Obj:
    """KubeRay's sample ``sample`` in ``namespace``, queued in ``queue`` and suspended (what
    Kueue's own webhook would do; it is not registered here)."""
    doc: Obj = yaml.safe_load((SAMPLES / sample).read_text())
    doc["metadata"]["namespace"] = namespace
    doc["metadata"].setdefault("labels", {})[QUEUE_LABEL] = queue
    doc["spec"]["suspend"] = True
    return doc


def templates(cluster_spec: Obj) -> list[Obj]:
    """The head's and every worker group's pod template spec."""
    specs = [cluster_spec["headGroupSpec"]["template"].get("spec") or {}]
    specs += [(g["template"].get("spec") or {}) for g in cluster_spec.get("workerGroupSpecs") or []]
    return specs


async def admitted_workload(client: Client, namespace: str, uid: str) -> Obj:
    async def admitted() -> Obj | None:
        workload = await workload_of(client, namespace, uid)
        return workload if workload is not None and is_true(workload, "Admitted") else None

    found: Obj = await eventually(admitted, timeout=90, message="Workload admitted by Kueue")
    return found


async def test_kueue_admits_a_queued_rayjob_within_quota_and_holds_the_next(
    kueue: KueueProcess, kclient: Client, namespace: str
) -> None:
    # one toy RayJob asks for 2.5 CPUs (head 1, worker 1, default submitter 0.5): room for one
    async with (
        queues(kclient, namespace, cpu="4", memory="8Gi") as names,
        start_operator(kclient, namespace),
    ):
        sample = "ray-job.kueue-toy-sample.yaml"
        first = await kclient.create(queued(sample, namespace, names.local_queue))
        name = first["metadata"]["name"]

        workload = await admitted_workload(kclient, namespace, first["metadata"]["uid"])
        assert workload["status"]["admission"]["clusterQueue"] == names.cluster_queue

        async def running_on_a_cluster() -> Obj | None:
            job = await get_job(kclient, namespace, name)
            cluster_name = (job.get("status") or {}).get("rayClusterName")
            if job["spec"].get("suspend") or not cluster_name:
                return None
            cluster = await get_or_none(kclient, "ray.io/v1", "RayCluster", cluster_name, namespace)
            return {"job": job, "cluster": cluster} if cluster else None

        found = await eventually(running_on_a_cluster, timeout=60, message="RayCluster created")
        job, cluster = found["job"], found["cluster"]
        assert state(job) == "Initializing"
        # Kueue wrote the flavor's node label into the RayJob; the cluster was built from that
        for spec in templates(job["spec"]["rayClusterSpec"]) + templates(cluster["spec"]):
            assert spec.get("nodeSelector", {}).get(FLAVOR_NODE_LABEL) == names.flavor
        pod = await head_pod(kclient, namespace, cluster["metadata"]["name"])
        assert pod["spec"]["nodeSelector"][FLAVOR_NODE_LABEL] == names.flavor

        second = await kclient.create(queued(sample, namespace, names.local_queue))
        second_uid = second["metadata"]["uid"]

        async def pending() -> Obj | None:
            workload = await workload_of(kclient, namespace, second_uid)
            reserved = condition(workload or {}, "QuotaReserved")
            return workload if reserved and reserved["status"] == "False" else None

        waiting = await eventually(pending, timeout=90, message="second Workload evaluated")
        assert not is_true(waiting, "Admitted")
        assert "insufficient" in condition(waiting, "QuotaReserved")["message"]  # type: ignore[index]
        job2 = await eventually(
            lambda: _state_is(kclient, namespace, second["metadata"]["name"], "Suspended"),
            timeout=60,
            message="second RayJob Suspended",
        )
        assert job2["spec"]["suspend"] is True and not job2["status"].get("rayClusterName")
        clusters, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
        assert [c["metadata"]["name"] for c in clusters] == [cluster["metadata"]["name"]]


async def _state_is(client: Client, namespace: str, name: str, wanted: str) -> Obj | None:
    job = await get_job(client, namespace, name)
    return job if state(job) == wanted else None


async def test_kueue_admits_a_queued_raycluster(
    kueue: KueueProcess, kclient: Client, namespace: str
) -> None:
    async with (
        queues(kclient, namespace, cpu="4", memory="8Gi") as names,
        start_operator(kclient, namespace),
    ):
        doc = queued("ray-job.kueue-toy-sample.yaml", namespace, names.local_queue)
        cluster_body: Obj = {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {
                "name": "queued",
                "namespace": namespace,
                "labels": {QUEUE_LABEL: names.local_queue},
            },
            "spec": {**doc["spec"]["rayClusterSpec"], "suspend": True},
        }
        created = await kclient.create(cluster_body)
        await admitted_workload(kclient, namespace, created["metadata"]["uid"])
        pod = await head_pod(kclient, namespace, "queued")
        assert pod["spec"]["nodeSelector"][FLAVOR_NODE_LABEL] == names.flavor
        cluster = await kclient.get("ray.io/v1", "RayCluster", "queued", namespace)
        assert cluster["spec"].get("suspend") is False
