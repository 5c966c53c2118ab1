"""The effective values of the ray.io spec (kuberay.api.v1.rules): what KubeRay's controllers
use when a field is absent or out of range, on the objects as the API server returns them."""

from __future__ import annotations

from typing import Any

import pytest
from kuberay_api_testutil import raycluster, rayjob, rayservice

from kuberay.api.v1 import rules as r


def _group(**fields: Any) -> dict[str, Any]:
    return {"groupName": "g", "template": {}, **{k: v for k, v in fields.items() if v is not None}}


# --- replicas -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"replicas": 2, "minReplicas": 1, "maxReplicas": 5}, 2),
        ({"replicas": None, "minReplicas": 3, "maxReplicas": 5}, 3),
        ({"replicas": 0, "minReplicas": 1, "maxReplicas": 5}, 1),
        ({"replicas": 9, "minReplicas": 1, "maxReplicas": 5}, 5),
        ({"replicas": 2, "minReplicas": 1, "maxReplicas": 5, "numOfHosts": 4}, 8),
        ({"replicas": 2, "minReplicas": 1, "maxReplicas": 5, "suspend": True}, 0),
        ({"replicas": 2}, 2),  # min absent -> 0, max absent -> MaxInt32
        ({"replicas": 2, "numOfHosts": 0}, 2),  # numOfHosts <= 0 counts as 1 (KubeRay v1.7)
    ],
)
def test_worker_group_desired_replicas(fields: dict[str, Any], expected: int) -> None:
    assert r.worker_group_desired_replicas(_group(**fields)) == expected


def test_cluster_level_replica_sums() -> None:
    obj = raycluster()
    groups = [
        {"groupName": "a", "replicas": 2, "minReplicas": 1, "maxReplicas": 3, "numOfHosts": 2},
        {"groupName": "b", "replicas": 5, "minReplicas": 0, "maxReplicas": 4, "suspend": True},
        {"groupName": "c", "minReplicas": 1, "maxReplicas": 2147483647},
    ]
    obj["spec"]["workerGroupSpecs"] = [{**g, "template": {}} for g in groups]
    assert r.calculate_desired_replicas(obj) == 4 + 0 + 1
    assert r.calculate_min_replicas(obj) == 2 + 1
    assert r.calculate_max_replicas(obj) == 2147483647  # 6 + MaxInt32 capped


def test_desired_replicas_wrap_like_go_int32() -> None:
    group = _group(replicas=2**30, minReplicas=0, maxReplicas=2**31 - 1, numOfHosts=4)
    assert r.worker_group_desired_replicas(group) == 0  # 2^32 wraps to 0 in int32


def test_clamp_replicas() -> None:
    assert r.clamp_replicas(None, 2, 5) == 2
    assert r.clamp_replicas(7, 2, 5) == 5
    assert r.clamp_replicas(3, 2, 5) == 3


# --- effective values -----------------------------------------------------------------------
def test_autoscaling_flags() -> None:
    obj = raycluster(enableInTreeAutoscaling=True, autoscalerOptions={"version": "v2"})
    assert r.is_autoscaling_enabled(obj)
    assert r.is_autoscaling_v2_enabled(obj)
    assert not r.is_autoscaling_v1_enabled(obj)
    assert not r.is_autoscaling_enabled(raycluster())
    assert not r.is_autoscaling_enabled({})


def test_gcs_fault_tolerance_helpers() -> None:
    plain = raycluster("c")
    assert r.gcs_fault_tolerance_backend({}) == "redis"
    assert not r.is_gcs_fault_tolerance_enabled(plain)
    annotated = raycluster("c")
    annotated["metadata"]["annotations"] = {"ray.io/ft-enabled": "TRUE"}
    assert r.is_gcs_fault_tolerance_enabled(annotated)
    annotated["metadata"]["annotations"] = {"ray.io/ft-enabled": "yes"}
    assert not r.is_gcs_fault_tolerance_enabled(annotated)
    assert r.gcs_storage_pvc_name(plain) == "c-gcs-pvc"
    assert r.gcs_storage_size(plain) == "1Gi"
    assert r.gcs_storage_access_modes(plain) == ["ReadWriteOnce"]
    assert r.gcs_storage_deletion_policy(plain) == "DeleteWithCluster"
    embedded = raycluster(
        "c",
        gcsFaultToleranceOptions={
            "backend": "rocksdb",
            "storage": {"claimName": "mine", "accessModes": ["ReadWriteMany"], "size": "5Gi"},
        },
    )
    assert r.is_gcs_fault_tolerance_embedded(embedded)
    assert r.is_gcs_fault_tolerance_enabled(embedded)
    assert r.gcs_storage_pvc_name(embedded) == "mine"
    assert r.gcs_storage_size(embedded) == "5Gi"
    assert r.gcs_storage_access_modes(embedded) == ["ReadWriteMany"]


def test_auth_tls_network_and_ingress_helpers() -> None:
    obj = raycluster(
        authOptions={"enableK8sTokenAuth": True},
        tlsOptions={"enabled": True},
        networkPolicy={},
        headGroupSpec={"template": {}, "ingressOptions": {"host": "h"}},
    )
    spec = obj["spec"]
    assert not r.is_auth_enabled(obj)  # no mode: auth is off (no CRD default)
    assert r.is_k8s_auth_enabled(spec["authOptions"])
    assert not r.is_tls_enabled(obj)  # gate RayClusterMTLS off by default
    assert r.is_tls_enabled(obj, {"RayClusterMTLS": True})
    assert r.is_tls_enabled(obj, lambda name: name == "RayClusterMTLS")
    assert r.network_policy_mode(spec["networkPolicy"]) == "DenyAll"
    assert r.ingress_path(spec["headGroupSpec"]["ingressOptions"]) == "/"
    assert r.ingress_path_type(spec["headGroupSpec"]["ingressOptions"]) == "Prefix"
    assert r.ingress_path(None) == "/"


def test_managed_by_and_crd_type() -> None:
    assert r.managed_by_external_controller(None) is None
    assert r.managed_by_external_controller("ray.io/kuberay-operator") is None
    assert r.managed_by_external_controller("kueue.x-k8s.io/multikueue") == (
        "kueue.x-k8s.io/multikueue"
    )

    def labelled(value: str | None) -> dict[str, Any]:
        labels = {} if value is None else {"ray.io/originated-from-crd": value}
        return {"metadata": {"labels": labels}}

    assert r.creator_crd_type(labelled("RayJob")) == "RayJob"
    assert r.creator_crd_type(labelled("RayService")) == "RayService"
    assert r.creator_crd_type(labelled("Something")) == "RayCluster"
    assert r.creator_crd_type(labelled(None)) == "RayCluster"


def test_rayjob_effective_values() -> None:
    spec = rayjob()["spec"]
    assert r.submission_mode(spec) == "K8sJobMode"
    assert r.backoff_limit(spec) == 0
    assert r.shutdown_after_job_finishes(spec) is False
    assert r.ttl_seconds_after_finished(spec) == 0
    assert r.submitter_backoff_limit(spec) == 2
    custom = rayjob(submitterConfig={"backoffLimit": 7}, backoffLimit=3)["spec"]
    assert r.submitter_backoff_limit(custom) == 7
    assert r.backoff_limit(custom) == 3


def test_rayservice_effective_values() -> None:
    assert r.ray_cluster_deletion_delay_seconds(rayservice()) == 60
    assert r.ray_cluster_deletion_delay_seconds(rayservice(rayClusterDeletionDelaySeconds=0)) == 0


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
    assert r.is_zero_downtime_upgrade_enabled(rayservice(**overrides), gates, env) is expected


def test_incremental_upgrade_needs_gate_and_type() -> None:
    obj = rayservice(upgradeStrategy={"type": "NewClusterWithIncrementalUpgrade"})
    assert r.is_incremental_upgrade_enabled(obj)
    assert not r.is_incremental_upgrade_enabled(obj, {"RayServiceIncrementalUpgrade": False})
    assert not r.is_incremental_upgrade_enabled(rayservice())
