"""Defaulting as KubeRay applies it: CRD defaults and controller defaults."""

from __future__ import annotations

import copy
from typing import Any

from kuberay_api_testutil import raycluster, raycronjob, rayjob, rayservice

from kuberay.api.v1 import (
    RayCluster,
    RayCronJob,
    RayJob,
    RayService,
    WorkerGroupSpec,
    default_raycluster,
    default_raycronjob,
    default_rayjob,
    default_rayservice,
    structure,
    unstructure,
)
from kuberay.api.v1 import defaults as d


def _group(**fields: Any) -> WorkerGroupSpec:
    return WorkerGroupSpec(group_name="g", template={}, **fields)


# --- object defaulting ----------------------------------------------------------------------
def test_raycluster_crd_and_controller_defaults() -> None:
    obj = raycluster(networkPolicy={})
    group = obj["spec"]["workerGroupSpecs"][0]
    for key in ("replicas", "minReplicas", "maxReplicas"):
        del group[key]
    del group["rayStartParams"]
    del obj["spec"]["headGroupSpec"]["rayStartParams"]
    obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"containerPort": 6379, "name": "gcs"},
        {"containerPort": 8265, "protocol": "UDP"},
    ]
    before = copy.deepcopy(obj)
    model = structure(RayCluster, obj)
    out = unstructure(default_raycluster(model))
    assert unstructure(model) == before  # pure: the input model is untouched
    group_out = out["spec"]["workerGroupSpecs"][0]
    assert group_out["replicas"] == 0
    assert group_out["minReplicas"] == 0
    assert group_out["maxReplicas"] == 2147483647
    assert group_out["priority"] == 0
    assert group_out["numOfHosts"] == 1
    assert group_out["rayStartParams"] == {}
    assert out["spec"]["headGroupSpec"]["rayStartParams"] == {}
    assert out["spec"]["networkPolicy"] == {"mode": "DenyAll"}
    ports = out["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"]
    assert ports == [
        {"containerPort": 6379, "name": "gcs", "protocol": "TCP"},
        {"containerPort": 8265, "protocol": "UDP"},
    ]
    # Go zero values stay absent: no suspend / enableInTreeAutoscaling appear.
    assert "suspend" not in out["spec"]
    assert "enableInTreeAutoscaling" not in out["spec"]


def test_raycluster_defaults_keep_explicit_values() -> None:
    obj = raycluster()
    group = obj["spec"]["workerGroupSpecs"][0]
    group.update({"replicas": 5, "minReplicas": 1, "maxReplicas": 4, "numOfHosts": 0})
    out = unstructure(default_raycluster(structure(RayCluster, obj)))
    group_out = out["spec"]["workerGroupSpecs"][0]
    assert (group_out["replicas"], group_out["minReplicas"], group_out["maxReplicas"]) == (5, 1, 4)
    assert group_out["numOfHosts"] == 0


def test_raycluster_crd_only_defaults_leave_ray_start_params_absent() -> None:
    obj = raycluster()
    del obj["spec"]["headGroupSpec"]["rayStartParams"]
    out = unstructure(default_raycluster(structure(RayCluster, obj), controller=False))
    assert "rayStartParams" not in out["spec"]["headGroupSpec"]


def test_rayjob_defaults() -> None:
    obj = rayjob(
        deletionStrategy={
            "deletionRules": [{"policy": "DeleteCluster", "condition": {"jobStatus": "FAILED"}}]
        },
        submitterPodTemplate={
            "spec": {"containers": [{"name": "s", "ports": [{"containerPort": 1}]}]}
        },
    )
    obj["status"] = {"jobStatus": "RUNNING"}
    del obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"]
    out = unstructure(default_rayjob(structure(RayJob, obj)))
    spec = out["spec"]
    assert spec["backoffLimit"] == 0
    assert spec["submissionMode"] == "K8sJobMode"
    assert spec["ttlSecondsAfterFinished"] == 0
    assert spec["deletionStrategy"]["deletionRules"][0]["condition"]["ttlSeconds"] == 0
    assert spec["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] == 0
    assert spec["submitterPodTemplate"]["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP"
    assert "shutdownAfterJobFinishes" not in spec
    assert "suspend" not in spec
    assert out["status"] == {"jobStatus": "RUNNING", "succeeded": 0, "failed": 0}


def test_rayjob_defaults_without_status_add_no_status() -> None:
    out = unstructure(default_rayjob(structure(RayJob, rayjob(submissionMode="HTTPMode"))))
    assert "status" not in out
    assert out["spec"]["submissionMode"] == "HTTPMode"


def test_rayservice_defaults() -> None:
    obj = rayservice(
        upgradeStrategy={
            "type": "NewClusterWithIncrementalUpgrade",
            "clusterUpgradeOptions": {
                "stepSizePercent": 10,
                "intervalSeconds": 30,
                "gatewayClassName": "istio",
            },
        },
        serveService={"spec": {"ports": [{"name": "serve", "port": 8000}]}},
    )
    out = unstructure(default_rayservice(structure(RayService, obj)))
    assert out["spec"]["upgradeStrategy"]["clusterUpgradeOptions"]["maxSurgePercent"] == 100
    assert out["spec"]["serveService"]["spec"]["ports"][0]["protocol"] == "TCP"
    assert out["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["numOfHosts"] == 1
    assert "rayClusterDeletionDelaySeconds" not in out["spec"]


def test_raycronjob_defaults_apply_to_the_job_template() -> None:
    out = unstructure(default_raycronjob(structure(RayCronJob, raycronjob())))
    template = out["spec"]["jobTemplate"]
    assert template["submissionMode"] == "K8sJobMode"
    assert template["backoffLimit"] == 0
    assert template["rayClusterSpec"]["workerGroupSpecs"][0]["priority"] == 0
    assert "suspend" not in out["spec"]


def test_spec_level_helpers_are_pure() -> None:
    model = structure(RayJob, rayjob())
    assert model.spec is not None
    defaulted = d.crd_defaults_rayjob_spec(model.spec)
    assert model.spec.backoff_limit is None
    assert defaulted.backoff_limit == 0
    assert model.spec.ray_cluster_spec is not None
    cluster = d.crd_defaults_raycluster_spec(model.spec.ray_cluster_spec)
    assert (cluster.worker_group_specs or [])[0].num_of_hosts == 1
    assert (model.spec.ray_cluster_spec.worker_group_specs or [])[0].num_of_hosts is None
    service = structure(RayService, rayservice())
    assert service.spec is not None
    assert d.crd_defaults_rayservice_spec(service.spec).ray_cluster_config.worker_group_specs
