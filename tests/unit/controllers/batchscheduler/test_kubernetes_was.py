"""The KubernetesWAS plugin's builders and metadata against KubeRay's Go unit-test
expectations (feeaf72: ``kubernetes-was/v1alpha2/kubernetes_was_v1alpha2_test.go``): the
same fixtures (cluster ``test-cluster`` in ``default``, uid ``test-cluster-uid``, gang label
on), the same expected values."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuberay.controllers.batchscheduler import KUBERNETES_WAS_PLUGIN, SCHEDULERS
from kuberay.controllers.batchscheduler import new_batch_scheduler as new_scheduler
from kuberay.controllers.batchscheduler.kubernetes_was import (
    SKIP_AUTOSCALING,
    SKIP_GANG_DISABLED,
    KubernetesWASScheduler,
    build_pod_group,
    build_workload,
    skip_reason,
    workload_stale,
)

OWNER = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "name": "test-cluster",
    "uid": "test-cluster-uid",
    "controller": True,
    "blockOwnerDeletion": True,
}


def group(name: str, replicas: int, hosts: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "groupName": name,
        "numOfHosts": hosts,
        "replicas": replicas,
        "minReplicas": replicas,
        "maxReplicas": replicas,
        "template": {},
        **extra,
    }


def cluster(*groups: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": "test-cluster",
            "namespace": "default",
            "uid": "test-cluster-uid",
            "labels": {"ray.io/gang-scheduling-enabled": "true"},
        },
        "spec": {"headGroupSpec": {"template": {}}, "workerGroupSpecs": list(groups)},
    }


def test_workload_and_pod_group_as_kuberay_builds_them() -> None:
    rc = cluster(group("workers", 3))
    assert build_workload(rc) == {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "Workload",
        "metadata": {
            "name": "test-cluster",
            "namespace": "default",
            "labels": {"ray.io/cluster": "test-cluster"},
            "ownerReferences": [OWNER],
        },
        "spec": {
            "controllerRef": {"apiGroup": "ray.io", "kind": "RayCluster", "name": "test-cluster"},
            "podGroupTemplates": [
                {"name": "cluster", "schedulingPolicy": {"gang": {"minCount": 4}}}
            ],
        },
    }
    assert build_pod_group(rc) == {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {
            "name": "test-cluster-cluster",
            "namespace": "default",
            "labels": {"ray.io/cluster": "test-cluster"},
            "ownerReferences": [OWNER],
        },
        "spec": {
            "podGroupTemplateRef": {
                "workload": {"workloadName": "test-cluster", "podGroupTemplateName": "cluster"}
            },
            "schedulingPolicy": {"gang": {"minCount": 4}},
        },
    }


@pytest.mark.parametrize(
    ("groups", "want"),
    [
        ((), 1),  # head only
        ((group("workers", 3),), 4),
        ((group("group-a", 1), group("group-b", 2)), 4),
        ((group("workers", 3, hosts=2),), 7),  # multi-host replicas multiply
        ((group("workers", 1, suspend=True),), 1),  # a suspended group contributes zero
        (tuple(group(f"group-{i}", 1) for i in range(20)), 21),  # many worker groups
    ],
)
def test_gang_min_count(groups: tuple[dict[str, Any], ...], want: int) -> None:
    rc = cluster(*groups)
    for obj in (build_workload(rc), build_pod_group(rc)):
        spec = obj["spec"]
        policy = (spec["podGroupTemplates"][0] if "podGroupTemplates" in spec else spec)[
            "schedulingPolicy"
        ]
        assert policy == {"gang": {"minCount": want}}


@pytest.mark.parametrize(
    ("groups", "stale"),
    [
        ((group("workers", 3),), False),
        ((group("workers", 3), group("gpu", 1)), True),
        ((), True),
        ((group("renamed", 3),), False),  # same total: not stale
        ((group("workers", 5),), True),
        ((group("workers", 3, hosts=2),), True),
    ],
)
def test_workload_staleness(groups: tuple[dict[str, Any], ...], stale: bool) -> None:
    existing = build_workload(cluster(group("workers", 3)))
    assert workload_stale(existing, build_workload(cluster(*groups))) is stale


def test_workload_with_other_templates_is_stale() -> None:
    desired = build_workload(cluster(group("workers", 3)))
    renamed = copy.deepcopy(desired)
    renamed["spec"]["podGroupTemplates"][0]["name"] = "other"
    two = copy.deepcopy(desired)
    two["spec"]["podGroupTemplates"].append(copy.deepcopy(two["spec"]["podGroupTemplates"][0]))
    basic = copy.deepcopy(desired)
    basic["spec"]["podGroupTemplates"][0]["schedulingPolicy"] = {"basic": {}}
    assert all(workload_stale(w, desired) for w in (renamed, two, basic))


def test_gang_label_is_case_insensitive_true_and_autoscaling_skips() -> None:
    rc = cluster(group("workers", 3))
    assert skip_reason(rc) == ""
    for value in ("false", "False", "foo", ""):
        rc["metadata"]["labels"]["ray.io/gang-scheduling-enabled"] = value
        assert skip_reason(rc) == SKIP_GANG_DISABLED
    del rc["metadata"]["labels"]["ray.io/gang-scheduling-enabled"]
    assert skip_reason(rc) == SKIP_GANG_DISABLED
    rc["metadata"]["labels"]["ray.io/gang-scheduling-enabled"] = "True"
    assert skip_reason(rc) == ""
    rc["spec"]["enableInTreeAutoscaling"] = True
    assert skip_reason(rc) == SKIP_AUTOSCALING


def test_pods_and_templates_keep_default_scheduler_and_join_the_cluster_group() -> None:
    scheduler = KubernetesWASScheduler()
    rc = cluster(group("workers", 3))
    pod: dict[str, Any] = {"kind": "Pod", "spec": {"schedulerName": "other"}}
    template: dict[str, Any] = {"spec": {}}
    for child in (pod, template):
        scheduler.add_metadata_to_child_resource(rc, child, "workers")
        assert child["spec"]["schedulerName"] == "default-scheduler"
        assert child["spec"]["schedulingGroup"] == {"podGroupName": "test-cluster-cluster"}
    rc["spec"]["enableInTreeAutoscaling"] = True
    skipped: dict[str, Any] = {"kind": "Pod", "spec": {}}
    scheduler.add_metadata_to_child_resource(rc, skipped, "headgroup")
    assert skipped == {"kind": "Pod", "spec": {}}
    # a RayJob parent (its RayCluster child) is left alone
    job = {"kind": "RayJob", "metadata": rc["metadata"]}
    child: dict[str, Any] = {"kind": "RayCluster", "metadata": {}}
    scheduler.add_metadata_to_child_resource(job, child, "")
    assert child == {"kind": "RayCluster", "metadata": {}}


async def test_rayjobs_are_ignored() -> None:
    scheduler = KubernetesWASScheduler()  # no client: any API call would fail
    job = {"kind": "RayJob", "metadata": {"name": "j", "namespace": "default"}}
    await scheduler.do_batch_scheduling_on_submission(job)
    assert await scheduler.cleanup_on_completion(job) is False


def test_selected_by_the_gate_not_by_a_flag_value() -> None:
    assert KubernetesWASScheduler().name() == "kubernetes-was-v1alpha2"
    assert isinstance(new_scheduler(KUBERNETES_WAS_PLUGIN, None), KubernetesWASScheduler)
    assert KUBERNETES_WAS_PLUGIN not in SCHEDULERS  # --batch-scheduler cannot name it
