"""Defaulting as KubeRay applies it: CRD defaults, controller defaults, effective values."""

from __future__ import annotations

import copy
from typing import Any

import pytest
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


# --- replicas -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"replicas": 2, "min_replicas": 1, "max_replicas": 5}, 2),
        ({"replicas": None, "min_replicas": 3, "max_replicas": 5}, 3),
        ({"replicas": 0, "min_replicas": 1, "max_replicas": 5}, 1),
        ({"replicas": 9, "min_replicas": 1, "max_replicas": 5}, 5),
        ({"replicas": 2, "min_replicas": 1, "max_replicas": 5, "num_of_hosts": 4}, 8),
        ({"replicas": 2, "min_replicas": 1, "max_replicas": 5, "suspend": True}, 0),
        ({"replicas": 2}, 2),  # min absent -> 0, max absent -> MaxInt32
        ({"replicas": 2, "num_of_hosts": 0}, 0),  # explicit 0 hosts, as Go would compute
    ],
)
def test_worker_group_desired_replicas(fields: dict[str, Any], expected: int) -> None:
    assert d.worker_group_desired_replicas(_group(**fields)) == expected


def test_cluster_level_replica_sums() -> None:
    obj = raycluster()
    groups = [
        {"groupName": "a", "replicas": 2, "minReplicas": 1, "maxReplicas": 3, "numOfHosts": 2},
        {"groupName": "b", "replicas": 5, "minReplicas": 0, "maxReplicas": 4, "suspend": True},
        {"groupName": "c", "minReplicas": 1, "maxReplicas": 2147483647},
    ]
    obj["spec"]["workerGroupSpecs"] = [{**g, "template": {}} for g in groups]
    model = structure(RayCluster, obj)
    assert model.spec is not None
    assert d.desired_worker_replicas(model.spec) == 4 + 0 + 1
    assert d.min_worker_replicas(model.spec) == 2 + 1
    assert d.max_worker_replicas(model.spec) == 2147483647  # 6 + MaxInt32 capped


def test_desired_replicas_wrap_like_go_int32() -> None:
    group = _group(replicas=2**30, min_replicas=0, max_replicas=2**31 - 1, num_of_hosts=4)
    assert d.worker_group_desired_replicas(group) == 0  # 2^32 wraps to 0 in int32


def test_clamp_replicas() -> None:
    assert d.clamp_replicas(None, 2, 5) == 2
    assert d.clamp_replicas(7, 2, 5) == 5
    assert d.clamp_replicas(3, 2, 5) == 3


# --- effective values -----------------------------------------------------------------------
def test_autoscaling_flags() -> None:
    spec = structure(
        RayCluster, raycluster(enableInTreeAutoscaling=True, autoscalerOptions={"version": "v2"})
    ).spec
    assert d.is_autoscaling_enabled(spec)
    assert d.is_autoscaling_v2_enabled(spec)
    assert not d.is_autoscaling_v1_enabled(spec)
    assert not d.is_autoscaling_enabled(structure(RayCluster, raycluster()).spec)
    assert not d.is_autoscaling_enabled(None)


def test_gcs_fault_tolerance_helpers() -> None:
    plain = structure(RayCluster, raycluster()).spec
    assert plain is not None
    assert d.gcs_fault_tolerance_backend(None) == "redis"
    assert not d.is_gcs_fault_tolerance_enabled(plain, {})
    assert d.is_gcs_fault_tolerance_enabled(plain, {"ray.io/ft-enabled": "TRUE"})
    assert not d.is_gcs_fault_tolerance_enabled(plain, {"ray.io/ft-enabled": "yes"})
    assert d.gcs_storage_pvc_name("c", plain) == "c-gcs-pvc"
    assert d.gcs_storage_size(plain) == "1Gi"
    assert d.gcs_storage_access_modes(plain) == ["ReadWriteOnce"]
    assert d.gcs_storage_deletion_policy(plain) == "DeleteWithCluster"
    embedded = structure(
        RayCluster,
        raycluster(
            gcsFaultToleranceOptions={
                "backend": "rocksdb",
                "storage": {"claimName": "mine", "accessModes": ["ReadWriteMany"], "size": "5Gi"},
            }
        ),
    ).spec
    assert embedded is not None
    assert d.is_gcs_fault_tolerance_embedded(embedded.gcs_fault_tolerance_options)
    assert d.is_gcs_fault_tolerance_enabled(embedded, {})
    assert d.gcs_storage_pvc_name("c", embedded) == "mine"
    assert d.gcs_storage_size(embedded) == "5Gi"
    assert d.gcs_storage_access_modes(embedded) == ["ReadWriteMany"]


def test_auth_tls_network_and_ingress_helpers() -> None:
    spec = structure(
        RayCluster,
        raycluster(
            authOptions={"enableK8sTokenAuth": True},
            tlsOptions={"enabled": True},
            networkPolicy={},
            headGroupSpec={"template": {}, "ingressOptions": {"host": "h"}},
        ),
    ).spec
    assert spec is not None
    assert not d.is_auth_enabled(spec)  # no mode: auth is off (no CRD default)
    assert d.is_k8s_auth_enabled(spec.auth_options)
    assert not d.is_tls_enabled(spec)  # gate RayClusterMTLS off by default
    assert d.is_tls_enabled(spec, {"RayClusterMTLS": True})
    assert d.is_tls_enabled(spec, lambda name: name == "RayClusterMTLS")
    assert spec.network_policy is not None
    assert d.network_policy_mode(spec.network_policy) == "DenyAll"
    assert d.ingress_path(spec.head_group_spec.ingress_options) == "/"
    assert d.ingress_path_type(spec.head_group_spec.ingress_options) == "Prefix"
    assert d.ingress_path(None) == "/"


def test_managed_by_and_crd_type() -> None:
    assert d.managed_by_external_controller(None) is None
    assert d.managed_by_external_controller("ray.io/kuberay-operator") is None
    assert d.managed_by_external_controller("kueue.x-k8s.io/multikueue") == (
        "kueue.x-k8s.io/multikueue"
    )
    assert d.get_crd_type("RayJob") == "RayJob"
    assert d.get_crd_type("RayService") == "RayService"
    assert d.get_crd_type("Something") == "RayCluster"
    assert d.get_crd_type(None) == "RayCluster"


def test_rayjob_effective_values() -> None:
    spec = structure(RayJob, rayjob()).spec
    assert spec is not None
    assert d.submission_mode(spec) == "K8sJobMode"
    assert d.backoff_limit(spec) == 0
    assert d.shutdown_after_job_finishes(spec) is False
    assert d.ttl_seconds_after_finished(spec) == 0
    assert d.submitter_backoff_limit(spec) == 2
    custom = structure(RayJob, rayjob(submitterConfig={"backoffLimit": 7}, backoffLimit=3)).spec
    assert custom is not None
    assert d.submitter_backoff_limit(custom) == 7
    assert d.backoff_limit(custom) == 3


def test_rayservice_effective_values() -> None:
    spec = structure(RayService, rayservice()).spec
    assert spec is not None
    assert d.ray_cluster_deletion_delay_seconds(spec) == 60
    zero = structure(RayService, rayservice(rayClusterDeletionDelaySeconds=0)).spec
    assert zero is not None
    assert d.ray_cluster_deletion_delay_seconds(zero) == 0


@pytest.mark.parametrize(
    ("upgrade_type", "gates", "env", "expected"),
    [
        (None, None, {}, True),
        (None, None, {"ENABLE_ZERO_DOWNTIME": "False"}, False),
        ("NewCluster", None, {"ENABLE_ZERO_DOWNTIME": "false"}, True),
        ("None", None, {}, False),
        ("NewClusterWithIncrementalUpgrade", None, {}, True),
        ("NewClusterWithIncrementalUpgrade", {"RayServiceIncrementalUpgrade": False}, {}, False),
    ],
)
def test_zero_downtime_upgrade(
    upgrade_type: str | None, gates: dict[str, bool] | None, env: dict[str, str], expected: bool
) -> None:
    overrides = {"upgradeStrategy": {"type": upgrade_type}} if upgrade_type else {}
    spec = structure(RayService, rayservice(**overrides)).spec
    assert spec is not None
    assert d.is_zero_downtime_upgrade_enabled(spec, gates, env) is expected


def test_incremental_upgrade_needs_gate_and_type() -> None:
    spec = structure(
        RayService, rayservice(upgradeStrategy={"type": "NewClusterWithIncrementalUpgrade"})
    ).spec
    assert spec is not None
    assert d.is_incremental_upgrade_enabled(spec)
    assert not d.is_incremental_upgrade_enabled(spec, {"RayServiceIncrementalUpgrade": False})
    plain = structure(RayService, rayservice()).spec
    assert plain is not None
    assert not d.is_incremental_upgrade_enabled(plain)
