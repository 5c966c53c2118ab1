"""``--batch-scheduler`` = yunikorn, scheduler-plugins, kai-scheduler on the real apiserver
(scheduler-plugins' PodGroup CRD from its Go module): each KubeRay sample gets KubeRay's
labels, annotations, scheduler name and (scheduler-plugins) PodGroup."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.batchscheduler.conftest import create_sample, start_scheduler_operator
from tests.integration.batchscheduler.test_volcano import pods
from tests.integration.rayjob.helpers import rayjob, wait_job
from tests.kuberay_samples import requires_kuberay_samples

pytestmark = requires_kuberay_samples  # every test creates one of KubeRay's samples


@pytest.fixture
async def scheduler(
    request: pytest.FixtureRequest, scheduler_crds: None, kclient: Client, namespace: str
) -> AsyncIterator[str]:
    name = str(request.param)
    async with start_scheduler_operator(kclient, namespace, name):
        yield name


@pytest.mark.parametrize("scheduler", ["yunikorn"], indirect=True)
async def test_yunikorn_cluster_sample(scheduler: str, kclient: Client, namespace: str) -> None:
    await create_sample(kclient, "ray-cluster.yunikorn-scheduler.yaml", namespace)
    for pod in await pods(kclient, namespace, "test-yunikorn-0", 3):
        meta = pod["metadata"]
        assert pod["spec"]["schedulerName"] == "yunikorn"
        assert meta["labels"]["applicationId"] == "test-yunikorn-0"
        assert meta["labels"]["queue"] == "root.test"
        group = meta["labels"]["ray.io/group"]
        assert meta["annotations"]["yunikorn.apache.org/task-group-name"] == group
        groups = json.loads(meta["annotations"]["yunikorn.apache.org/task-groups"])
        assert [(g["name"], g["minMember"], g["minResource"]) for g in groups] == [
            ("headgroup", 1, {"cpu": "1", "memory": "2Gi"}),
            ("worker", 2, {"cpu": "1", "memory": "1Gi"}),
        ]


@pytest.mark.parametrize("scheduler", ["yunikorn"], indirect=True)
async def test_yunikorn_rayjob_sample_stamps_cluster_pods(
    scheduler: str, kclient: Client, namespace: str
) -> None:
    await create_sample(kclient, "ray-job.yunikorn-scheduler.yaml", namespace)
    job = await wait_job(
        kclient,
        namespace,
        "rayjob-yunikorn-0",
        lambda j: bool(j.get("status", {}).get("rayClusterName")),
    )
    cluster = job["status"]["rayClusterName"]
    rc = await eventually(lambda: kclient.get("ray.io/v1", "RayCluster", cluster, namespace))
    assert rc["metadata"]["labels"]["applicationId"] == "rayjob-yunikorn-0"
    groups = json.loads(rc["metadata"]["annotations"]["yunikorn.apache.org/task-groups"])
    assert next(g["name"] for g in groups) == "headgroup"
    assert groups[-1]["name"] == "submittergroup" and groups[-1]["minMember"] == 1
    [head, *_] = await pods(kclient, namespace, cluster, 1)
    assert head["spec"]["schedulerName"] == "yunikorn"


@pytest.mark.parametrize("scheduler", ["scheduler-plugins"], indirect=True)
async def test_scheduler_plugins_sample_gets_pod_group(
    scheduler: str, kclient: Client, namespace: str
) -> None:
    rc = await create_sample(kclient, "ray-cluster.scheduler-plugins.yaml", namespace)
    pg: dict[str, Any] = await eventually(
        lambda: kclient.get(
            "scheduling.x-k8s.io/v1alpha1", "PodGroup", "test-podgroup-0", namespace
        ),
        timeout=60,
    )
    assert pg["spec"]["minMember"] == 3
    assert pg["spec"]["minResources"] == {"cpu": "3", "memory": "4Gi"}
    [ref] = pg["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["uid"]) == ("RayCluster", rc["metadata"]["uid"])
    for pod in await pods(kclient, namespace, "test-podgroup-0", 3):
        assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "test-podgroup-0"


@pytest.mark.parametrize("scheduler", ["kai-scheduler"], indirect=True)
async def test_kai_sample_and_k8sjobmode_refusal(
    scheduler: str, kclient: Client, namespace: str
) -> None:
    await create_sample(kclient, "ray-cluster.kai-scheduler.yaml", namespace)
    for pod in await pods(kclient, namespace, "raycluster-sample", 3):
        assert pod["spec"]["schedulerName"] == "kai-scheduler"
        assert pod["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"

    await kclient.create(rayjob("kj", namespace))
    await kclient.create(rayjob("ks", namespace, submissionMode="SidecarMode"))
    # SidecarMode goes on to its cluster; K8sJobMode (created first) is refused on every pass
    await wait_job(
        kclient, namespace, "ks", lambda j: bool(j.get("status", {}).get("rayClusterName"))
    )
    sidecar = (await kclient.get("ray.io/v1", "RayJob", "ks", namespace))["status"][
        "rayClusterName"
    ]
    await eventually(lambda: kclient.get("ray.io/v1", "RayCluster", sidecar, namespace), timeout=60)
    items, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
    owners = {r["name"] for i in items for r in i["metadata"].get("ownerReferences") or []}
    assert "ks" in owners and "kj" not in owners
