"""``--batch-scheduler=volcano`` on the real apiserver with Volcano's CRDs: KubeRay's
PodGroups, pod metadata, the v1.7 PodGroup update on RayJob completion, and (beyond
KubeRay) the PodGroup released on RayJob and RayCluster suspend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.kube import Client, NotFound
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.batchscheduler.conftest import create_sample, start_scheduler_operator
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import (
    finish_submitter,
    make_ready,
    rayjob,
    wait_events,
    wait_job,
    wait_state,
)
from tests.kuberay_samples import requires_kuberay_samples

PG = ("scheduling.volcano.sh/v1beta1", "PodGroup")


@pytest.fixture
async def volcano(scheduler_crds: None, kclient: Client, namespace: str) -> AsyncIterator[Operator]:
    async with start_scheduler_operator(kclient, namespace, "volcano") as op:
        yield op


async def pod_group(client: Client, namespace: str, name: str) -> dict[str, Any]:
    return await eventually(
        lambda: client.get(*PG, name, namespace), timeout=60, message=f"PodGroup {name}"
    )


async def pods(client: Client, namespace: str, cluster: str, count: int) -> list[dict[str, Any]]:
    async def listed() -> list[dict[str, Any]] | None:
        items, _ = await client.list_all(
            "v1", "Pod", namespace, label_selector=f"ray.io/cluster={cluster}"
        )
        return items if len(items) >= count else None

    result: list[dict[str, Any]] = await eventually(listed, timeout=60, message="pods")
    return result


@requires_kuberay_samples
async def test_headonly_sample_gets_a_pod_group_of_one(
    volcano: Operator, kclient: Client, namespace: str
) -> None:
    await create_sample(kclient, "ray-cluster.volcano-scheduler.yaml", namespace)
    pg = await pod_group(kclient, namespace, "ray-test-cluster-0-pg")
    assert pg["spec"]["minMember"] == 1
    assert pg["spec"]["queue"] == "default"  # no queue label: Volcano's CRD defaults it
    [pod] = await pods(kclient, namespace, "test-cluster-0", 1)
    assert pod["spec"]["schedulerName"] == "volcano"
    assert pod["metadata"]["annotations"]["volcano.sh/task-spec"] == "headgroup"


@requires_kuberay_samples
async def test_cluster_sample_gets_pod_group_and_pod_metadata(
    volcano: Operator, kclient: Client, namespace: str
) -> None:
    rc = await create_sample(kclient, "ray-cluster.volcano-scheduler-queue.yaml", namespace)
    pg = await pod_group(kclient, namespace, "ray-test-cluster-0-pg")
    assert pg["spec"]["minMember"] == 3  # 2 workers + head
    # requests: head 1 CPU / 2Gi, two workers 1 CPU / 1Gi each
    assert pg["spec"]["minResources"] == {"cpu": "3", "memory": "4Gi"}
    assert pg["spec"]["queue"] == "kuberay-test-queue"
    [ref] = pg["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "RayCluster",
        "test-cluster-0",
        rc["metadata"]["uid"],
        True,
    )
    for pod in await pods(kclient, namespace, "test-cluster-0", 3):
        meta = pod["metadata"]
        assert pod["spec"]["schedulerName"] == "volcano"
        assert meta["labels"]["volcano.sh/queue-name"] == "kuberay-test-queue"
        assert meta["annotations"]["scheduling.k8s.io/group-name"] == "ray-test-cluster-0-pg"
        group = meta["labels"]["ray.io/group"]
        assert meta["annotations"]["volcano.sh/task-spec"] == group
    # every pod creation reconciled the cluster again; none of those passes rewrote the PodGroup
    pg = await kclient.get(*PG, "ray-test-cluster-0-pg", namespace)
    assert pg["metadata"]["generation"] == 1


@requires_kuberay_samples
async def test_scaling_resizes_and_suspend_releases_the_cluster_pod_group(
    volcano: Operator, kclient: Client, namespace: str
) -> None:
    await create_sample(kclient, "ray-cluster.volcano-scheduler-queue.yaml", namespace)
    rc = await eventually(
        lambda: kclient.get("ray.io/v1", "RayCluster", "test-cluster-0", namespace)
    )
    pg = await pod_group(kclient, namespace, "ray-test-cluster-0-pg")
    before = pg["spec"]["minMember"]
    group = rc["spec"]["workerGroupSpecs"][0]
    ops = [
        {"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 1},
        {"op": "replace", "path": "/spec/workerGroupSpecs/0/minReplicas", "value": 1},
    ]
    assert group["replicas"] != 1
    await kclient.patch(
        "ray.io/v1", "RayCluster", "test-cluster-0", ops, namespace, patch_type="json"
    )

    async def resized() -> bool:
        got = await kclient.get(*PG, "ray-test-cluster-0-pg", namespace)
        return bool(got["spec"]["minMember"] == 2 != before)

    await eventually(resized, timeout=60, message="PodGroup resized to 1 worker + head")

    await kclient.patch(
        "ray.io/v1", "RayCluster", "test-cluster-0", {"spec": {"suspend": True}}, namespace
    )

    async def released() -> bool:
        got = await kclient.get(*PG, "ray-test-cluster-0-pg", namespace)
        return bool(got["spec"].get("minMember", 0) == 0 and not got["spec"].get("minResources"))

    await eventually(released, timeout=60, message="PodGroup zeroed on suspend")


@requires_kuberay_samples
async def test_rayjob_sample_pod_group_includes_the_submitter(
    volcano: Operator, kclient: Client, namespace: str
) -> None:
    job = await create_sample(kclient, "ray-job.volcano-scheduler-queue.yaml", namespace)
    pg = await pod_group(kclient, namespace, "ray-rayjob-sample-0-pg")
    [ref] = pg["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["uid"]) == ("RayJob", job["metadata"]["uid"])
    assert pg["spec"]["queue"] == "kuberay-test-queue"
    assert pg["spec"]["minMember"] == 3  # head + 2 workers; the submitter waits outside
    # head 1 CPU / 2Gi + 2 workers x 1 CPU / 1Gi + default submitter 500m / 200Mi
    assert pg["spec"]["minResources"] == {"cpu": "3500m", "memory": "4296Mi"}
    got = await wait_job(
        kclient,
        namespace,
        "rayjob-sample-0",
        lambda j: bool(j.get("status", {}).get("rayClusterName")),
    )
    cluster = got["status"]["rayClusterName"]
    rc = await kclient.get("ray.io/v1", "RayCluster", cluster, namespace)
    # K8sJobMode: the cluster carries the scheduler's metadata, and has no PodGroup of its own
    assert rc["metadata"]["labels"]["volcano.sh/queue-name"] == "kuberay-test-queue"
    assert rc["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "ray-rayjob-sample-0-pg"
    for pod in await pods(kclient, namespace, cluster, 3):
        assert pod["spec"]["schedulerName"] == "volcano"
        annotations = pod["metadata"]["annotations"]
        assert annotations["scheduling.k8s.io/group-name"] == "ray-rayjob-sample-0-pg"
    with pytest.raises(NotFound):
        await kclient.get(*PG, f"ray-{cluster}-pg", namespace)


async def test_rayjob_completion_updates_the_pod_group(
    volcano: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    body = rayjob("done", namespace, workers=1)
    body["metadata"]["labels"] = {"volcano.sh/queue-name": "q1"}
    await kclient.create(body)
    pg = await pod_group(kclient, namespace, "ray-done-pg")
    assert pg["spec"]["minMember"] == 2
    assert pg["spec"]["minResources"] == {"cpu": "500m", "memory": "200Mi"}  # submitter only
    job = await wait_state(kclient, namespace, "done", "Initializing")
    cluster = job["status"]["rayClusterName"]
    await pods(kclient, namespace, cluster, 2)
    await make_ready(kclient, namespace, cluster, dashboard)
    job = await wait_state(kclient, namespace, "done", "Running")
    submitter = await kclient.get("batch/v1", "Job", "done", namespace)
    template = submitter["spec"]["template"]
    assert template["spec"]["schedulerName"] == "volcano"
    assert template["metadata"]["annotations"]["volcano.sh/task-spec"] == "submittergroup"
    assert template["metadata"]["labels"]["volcano.sh/queue-name"] == "q1"

    dashboard.add_job(job["status"]["jobId"], status="SUCCEEDED")
    await finish_submitter(kclient, namespace, "done")
    await wait_state(kclient, namespace, "done", "Complete")
    await wait_events(kclient, namespace, "done", {"BatchSchedulerCleanedUp"})
    # v1.7: updated to the live cluster (the submitter's share is gone), not deleted
    pg = await kclient.get(*PG, "ray-done-pg", namespace)
    assert pg["spec"]["minMember"] == 2
    assert not pg["spec"].get("minResources")


async def test_rayjob_suspend_releases_the_pod_group(
    volcano: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(rayjob("sus", namespace, workers=2, shutdownAfterJobFinishes=True))
    pg = await pod_group(kclient, namespace, "ray-sus-pg")
    assert pg["spec"]["minMember"] == 3
    await wait_state(kclient, namespace, "sus", "Initializing")
    await kclient.patch("ray.io/v1", "RayJob", "sus", {"spec": {"suspend": True}}, namespace)
    await wait_state(kclient, namespace, "sus", "Suspended")
    await wait_events(kclient, namespace, "sus", {"BatchSchedulerCleanedUp"})
    pg = await kclient.get(*PG, "ray-sus-pg", namespace)
    assert pg["spec"].get("minMember", 0) == 0 and not pg["spec"].get("minResources")


async def test_clusterselector_rayjob_is_refused_by_volcano(
    volcano: Operator, kclient: Client, namespace: str
) -> None:
    body = rayjob("sel", namespace, clusterSelector={"ray.io/cluster": "shared"})
    del body["spec"]["rayClusterSpec"]
    await kclient.create(body)
    await wait_state(kclient, namespace, "sel", "Initializing")
    # every pass fails before the cluster is looked at: no PodGroup, no status progress
    with pytest.raises(NotFound):
        await kclient.get(*PG, "ray-sel-pg", namespace)
