"""Plugin builders and metadata against KubeRay's Go unit-test expectations (feeaf72:
``batchscheduler/volcano/volcano_scheduler_test.go``, ``yunikorn/*_test.go``,
``kai-scheduler/kai_scheduler_test.go``, ``scheduler-plugins/scheduler_plugins_test.go``):
the same fixtures, the same expected values."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kuberay.controllers.batchscheduler import SCHEDULERS, BatchSchedulerError, new_batch_scheduler
from kuberay.controllers.batchscheduler.kai import KaiScheduler
from kuberay.controllers.batchscheduler.resources import gang_params, resources_json
from kuberay.controllers.batchscheduler.scheduler_plugins import (
    SchedulerPluginsScheduler,
)
from kuberay.controllers.batchscheduler.scheduler_plugins import (
    build_pod_group as build_sp_pod_group,
)
from kuberay.controllers.batchscheduler.volcano import (
    VolcanoScheduler,
    build_pod_group,
    pod_group_name,
    rayjob_gang,
)
from kuberay.controllers.batchscheduler.yunikorn import YuniKornScheduler, task_groups_annotation

HEAD = {
    "containers": [
        {
            "name": "ray-head",
            "resources": {
                "limits": {"cpu": "500m", "memory": "512Mi"},
                "requests": {"cpu": "256m", "memory": "256Mi"},
            },
        }
    ]
}
WORKER = {
    "containers": [
        {
            "name": "ray-worker",
            "resources": {
                "limits": {"cpu": "500m", "memory": "512Mi", "nvidia.com/gpu": "1"},
                "requests": {"cpu": "256m", "memory": "256Mi"},
            },
        }
    ]
}


def cluster_spec(hosts: int = 1) -> dict[str, Any]:
    return {
        "headGroupSpec": {"template": {"spec": copy.deepcopy(HEAD)}},
        "workerGroupSpecs": [
            {
                "groupName": "worker",
                "template": {"spec": copy.deepcopy(WORKER)},
                "replicas": 2,
                "numOfHosts": hosts,
                "minReplicas": 1,
                "maxReplicas": 4,
            }
        ],
    }


def raycluster(hosts: int = 1, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": "raycluster-sample",
            "namespace": "default",
            "uid": "u1",
            "labels": dict(labels or {}),
        },
        "spec": cluster_spec(hosts),
    }


def rayjob(mode: str, hosts: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {
            "name": "rayjob-sample",
            "namespace": "default",
            "uid": "j1",
            "labels": {
                "volcano.sh/queue-name": "test-queue",
                "ray.io/priority-class-name": "test-priority",
            },
        },
        "spec": {"submissionMode": mode, "rayClusterSpec": cluster_spec(hosts)},
    }


# ----- volcano ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hosts", "members", "cpu", "memory", "gpu"),
    [(1, 3, "768m", "768Mi", "2"), (2, 5, "1280m", "1280Mi", "4")],
)
def test_volcano_cluster_pod_group(
    hosts: int, members: int, cpu: str, memory: str, gpu: str
) -> None:
    """TestCreatePodGroupForRayCluster(_NumOfHosts2): desired replicas, requests not limits."""
    cluster = raycluster(hosts)
    pg = build_pod_group(cluster, *gang_params(cluster["spec"]))
    assert pg["metadata"]["name"] == "ray-raycluster-sample-pg"
    assert pg["metadata"]["namespace"] == "default"
    assert pg["spec"]["minMember"] == members
    assert pg["spec"]["minResources"] == {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpu}
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "RayCluster"
    assert pg["metadata"]["ownerReferences"][0]["controller"] is True


def test_volcano_network_topology_labels() -> None:
    """TestCreatePodGroup_NetworkTopology*."""
    both = raycluster(
        labels={
            "volcano.sh/network-topology-mode": "soft",
            "volcano.sh/network-topology-highest-tier-allowed": "3",
        }
    )
    pg = build_pod_group(both, *gang_params(both["spec"]))
    assert pg["spec"]["networkTopology"] == {"mode": "soft", "highestTierAllowed": 3}
    only = raycluster(labels={"volcano.sh/network-topology-mode": "hard"})
    assert build_pod_group(only, 1, {})["spec"]["networkTopology"] == {"mode": "hard"}
    bad = raycluster(
        labels={
            "volcano.sh/network-topology-mode": "soft",
            "volcano.sh/network-topology-highest-tier-allowed": "not-an-int",
        }
    )
    with pytest.raises(BatchSchedulerError, match="failed to convert"):
        build_pod_group(bad, 1, {})


@pytest.mark.parametrize(
    ("mode", "cpu", "memory"),
    [
        ("HTTPMode", "768m", "768Mi"),
        ("K8sJobMode", "1268m", "968Mi"),
        ("SidecarMode", "1268m", "968Mi"),
    ],
)
def test_volcano_rayjob_pod_group(mode: str, cpu: str, memory: str) -> None:
    """TestCreatePodGroupForRayJob: the submitter's resources join minResources, not
    minMember; queue and priority class from the RayJob's labels; RayJob owner."""
    job = rayjob(mode)
    pg = build_pod_group(job, *rayjob_gang(job))
    assert pg["spec"]["minMember"] == 3
    assert pg["spec"]["minResources"]["cpu"] == cpu
    assert pg["spec"]["minResources"]["memory"] == memory
    assert pg["spec"]["queue"] == "test-queue"
    assert pg["spec"]["priorityClassName"] == "test-priority"
    assert [r["kind"] for r in pg["metadata"]["ownerReferences"]] == ["RayJob"]


def test_volcano_pod_group_name_and_owner_annotations() -> None:
    """TestGetAppPodGroupName, TestCreatePodGroup_OwnerAnnotationsCopied."""
    cluster = raycluster()
    assert pod_group_name(cluster) == "ray-raycluster-sample-pg"
    cluster["metadata"]["labels"] = {
        "ray.io/originated-from-crd": "RayJob",
        "ray.io/originated-from-cr-name": "rayjob-sample",
    }
    assert pod_group_name(cluster) == "ray-rayjob-sample-pg"
    cluster["metadata"]["annotations"] = {"a": "1", "b": "2"}
    assert build_pod_group(cluster, 1, {})["metadata"]["annotations"] == {"a": "1", "b": "2"}


def test_volcano_autoscaling_uses_min_replicas() -> None:
    """TestCalculatePodGroupParams: with autoscaling, minReplicas (1) + head."""
    spec = cluster_spec()
    spec["enableInTreeAutoscaling"] = True
    members, resources = gang_params(spec)
    assert members == 2
    assert resources_json(resources) == {"cpu": "512m", "memory": "512Mi", "nvidia.com/gpu": "1"}


def test_volcano_submitter_metadata() -> None:
    """TestAddMetadataToSubmitterPod; a RayCluster child gets no schedulerName."""
    job = rayjob("K8sJobMode")
    template: dict[str, Any] = {"metadata": {}, "spec": {"containers": []}}
    VolcanoScheduler().add_metadata_to_child_resource(job, template, "submittergroup")
    assert template["metadata"]["annotations"] == {
        "scheduling.k8s.io/group-name": "ray-rayjob-sample-pg",
        "volcano.sh/task-spec": "submittergroup",
    }
    assert template["metadata"]["labels"] == {
        "volcano.sh/queue-name": "test-queue",
        "ray.io/priority-class-name": "test-priority",
    }
    assert template["spec"]["schedulerName"] == "volcano"
    child = {"kind": "RayCluster", "metadata": {}, "spec": {}}
    VolcanoScheduler().add_metadata_to_child_resource(job, child, "")
    assert "schedulerName" not in child["spec"]


# ----- yunikorn -----------------------------------------------------------------------------
def test_yunikorn_labels_and_task_groups() -> None:
    """yunikorn_scheduler_test.go: legacy labels always; task groups only with the gang
    label; head 1, worker minReplicas x numOfHosts."""
    cluster = raycluster(
        hosts=2,
        labels={
            "yunikorn.apache.org/app-id": "job-1",
            "yunikorn.apache.org/queue": "root.abc",
        },
    )
    pod: dict[str, Any] = {"kind": "Pod", "metadata": {}, "spec": {}}
    YuniKornScheduler().add_metadata_to_child_resource(cluster, pod, "worker")
    assert pod["metadata"]["labels"] == {"applicationId": "job-1", "queue": "root.abc"}
    assert pod["spec"]["schedulerName"] == "yunikorn"
    assert "annotations" not in pod["metadata"]

    cluster["metadata"]["labels"]["ray.io/gang-scheduling-enabled"] = "true"
    YuniKornScheduler().add_metadata_to_child_resource(cluster, pod, "worker")
    assert pod["metadata"]["annotations"]["yunikorn.apache.org/task-group-name"] == "worker"
    groups = json.loads(pod["metadata"]["annotations"]["yunikorn.apache.org/task-groups"])
    assert [(g["name"], g["minMember"], g["minResource"]) for g in groups] == [
        ("headgroup", 1, {"cpu": "256m", "memory": "256Mi"}),
        ("worker", 2, {"cpu": "256m", "memory": "256Mi", "nvidia.com/gpu": "1"}),
    ]


def test_yunikorn_task_groups_go_json_layout() -> None:
    """Go's struct order (minResource, nodeSelector, affinity, name, tolerations,
    minMember), empty fields left out."""
    cluster = raycluster()
    head = cluster["spec"]["headGroupSpec"]["template"]["spec"]
    head["nodeSelector"] = {"z": "1", "a": "2"}
    head["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    text = task_groups_annotation(cluster)
    assert text.startswith(
        '[{"minResource":{"cpu":"256m","memory":"256Mi"},"nodeSelector":{"a":"2","z":"1"},'
        '"name":"headgroup","tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}],'
        '"minMember":1}'
    )


def test_yunikorn_rayjob_adds_submitter_group() -> None:
    job = rayjob("K8sJobMode")
    groups = json.loads(task_groups_annotation(job))
    assert groups[-1]["name"] == "submittergroup" and groups[-1]["minMember"] == 1
    assert groups[-1]["minResource"] == {"cpu": "500m", "memory": "200Mi"}


# ----- kai / scheduler-plugins / registry -----------------------------------------------------
async def test_kai_queue_label_and_k8sjobmode_refusal() -> None:
    """kai_scheduler_test.go."""
    cluster = raycluster(labels={"kai.scheduler/queue": "team-a"})
    pod: dict[str, Any] = {"kind": "Pod", "metadata": {}, "spec": {}}
    KaiScheduler().add_metadata_to_child_resource(cluster, pod, "headgroup")
    assert pod["metadata"]["labels"] == {"kai.scheduler/queue": "team-a"}
    assert pod["spec"]["schedulerName"] == "kai-scheduler"
    with pytest.raises(BatchSchedulerError, match="K8sJobMode"):
        await KaiScheduler().do_batch_scheduling_on_submission(rayjob("K8sJobMode"))
    await KaiScheduler().do_batch_scheduling_on_submission(rayjob("SidecarMode"))


def test_scheduler_plugins_pod_group_and_label() -> None:
    """scheduler_plugins_test.go: PodGroup named like the cluster, desired + 1."""
    cluster = raycluster(labels={"ray.io/gang-scheduling-enabled": "true"})
    pg = build_sp_pod_group(cluster)
    assert pg["metadata"]["name"] == "raycluster-sample"
    assert pg["spec"] == {
        "minMember": 3,
        "minResources": {"cpu": "768m", "memory": "768Mi", "nvidia.com/gpu": "2"},
    }
    pod: dict[str, Any] = {"kind": "Pod", "metadata": {}, "spec": {}}
    SchedulerPluginsScheduler().add_metadata_to_child_resource(cluster, pod, "worker")
    assert pod["metadata"]["labels"] == {"scheduling.x-k8s.io/pod-group": "raycluster-sample"}
    assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"


def test_registry_names_match_kuberay_flag_values() -> None:
    assert set(SCHEDULERS) == {"volcano", "yunikorn", "scheduler-plugins", "kai-scheduler"}
    assert new_batch_scheduler("", None) is None
    with pytest.raises(ValueError, match="not supported"):
        new_batch_scheduler("slurm", None)


def test_registry_names_match_the_plugins_and_load_them_when_selected() -> None:
    from kuberay.controllers.batchscheduler import KUBERNETES_WAS_PLUGIN
    from kuberay.controllers.batchscheduler.kubernetes_was import PLUGIN_NAME

    assert KUBERNETES_WAS_PLUGIN == PLUGIN_NAME
    for name in SCHEDULERS:
        assert SCHEDULERS[name].plugin_name == name
    was = new_batch_scheduler(KUBERNETES_WAS_PLUGIN, None)
    assert was is not None and was.plugin_name == KUBERNETES_WAS_PLUGIN
