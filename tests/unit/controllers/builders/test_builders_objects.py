"""RBAC, Redis cleanup Job, auth Secret, GCS PVC, replicas, resources, pod health, helpers."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from builders_testlib import env_map, fixture_p

from kuberay.api.v1.rules import (
    calculate_desired_replicas,
    calculate_max_replicas,
    calculate_min_replicas,
    worker_group_desired_replicas,
    workers_to_delete,
)
from kuberay.controllers.builders.auth import (
    build_auth_secret,
    generate_auth_token,
    needs_auth_secret,
)
from kuberay.controllers.builders.gcs_ft import build_gcs_storage_pvc
from kuberay.controllers.builders.owner import AlreadyOwnedError, set_controller_reference
from kuberay.controllers.builders.rbac import (
    build_autoscaler_role,
    build_autoscaler_role_binding,
    build_autoscaler_service_account,
    user_provided_service_account,
)
from kuberay.controllers.builders.resources import desired_resource_status
from kuberay.controllers.builders.selectors import (
    group_pods_selector,
    head_pods_selector,
    head_service_selector,
)
from kuberay.controllers.common.gates import feature_enabled
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.common.pod_health import (
    all_pods_running,
    is_running_and_ready,
    should_delete_pod,
)
from kuberay.controllers.common.replicas import (
    is_multi_host_indexing,
    lowest_free_indices,
    random_scale_down_allowed,
)
from kuberay.controllers.raycluster.redis_cleanup_job import build_redis_cleanup_job
from kuberay.gocompat.versions import parse_generic_version, version_at_least

LABELS = {
    "ray.io/cluster": "raycluster-sample",
    "app.kubernetes.io/name": "kuberay",
    "app.kubernetes.io/created-by": "kuberay-operator",
}


def test_autoscaler_rbac() -> None:
    cluster = fixture_p()
    sa = build_autoscaler_service_account(cluster)
    assert sa["metadata"]["name"] == "raycluster-sample"
    assert sa["metadata"]["labels"] == LABELS
    role = build_autoscaler_role(cluster)
    assert role["metadata"]["name"] == "raycluster-sample"
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": [""], "resources": ["pods/resize"], "verbs": ["patch"]},
        {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": ["get", "patch"]},
    ]
    binding = build_autoscaler_role_binding(cluster)
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "raycluster-sample", "namespace": "default"}
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "raycluster-sample",
    }
    assert user_provided_service_account(cluster) is None
    cluster["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = "my-sa"
    assert user_provided_service_account(cluster) == "my-sa"
    assert build_autoscaler_role_binding(cluster)["subjects"][0]["name"] == "my-sa"


@pytest.mark.parametrize("with_username", [False, True])
def test_redis_cleanup_job(with_username: bool) -> None:
    cluster = fixture_p()
    options: dict[str, Any] = {"redisAddress": "redis:6379"}
    if with_username:
        options["redisUsername"] = {"value": "u"}
    cluster["spec"]["gcsFaultToleranceOptions"] = options
    cluster["spec"]["enableInTreeAutoscaling"] = True
    job = build_redis_cleanup_job(cluster)
    assert job["apiVersion"] == "batch/v1"
    assert job["metadata"]["name"] == "raycluster-sample-redis-cleanup"
    assert job["metadata"]["labels"]["ray.io/node-type"] == "redis-cleanup"
    assert job["metadata"]["annotations"]["ray.io/ft-enabled"] == "true"
    assert "ray.io/upgrade-strategy-recreate-hash" not in job["metadata"]["annotations"]
    assert job["spec"]["backoffLimit"] == 0
    assert job["spec"]["activeDeadlineSeconds"] == 300
    pod_spec = job["spec"]["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Never"
    [container] = pod_spec["containers"]
    assert container["command"] == ["/bin/bash", "-c", "--"]
    arg = container["args"][0]
    assert arg.startswith('echo "To get more information about manually deleting')
    assert 'python -c "from ray._private.gcs_utils import cleanup_redis_storage; ' in arg
    assert ("username=os.getenv('REDIS_USERNAME', parsed.username), " in arg) is with_username
    assert arg.endswith(
        "storage_namespace=os.getenv('RAY_external_storage_namespace')) else None\""
    )
    assert "livenessProbe" not in container and "readinessProbe" not in container
    env = env_map(container)
    assert env["RAY_redis_db_connect_retries"] == "120"
    assert env["RAY_redis_db_connect_wait_milliseconds"] == "500"
    assert container["resources"]["requests"] == {"cpu": "200m", "memory": "256Mi"}


def test_auth_secret() -> None:
    cluster = fixture_p()
    assert not needs_auth_secret(cluster)
    cluster["spec"]["authOptions"] = {"mode": "token"}
    assert needs_auth_secret(cluster)
    token = generate_auth_token()
    assert len(base64.b64decode(token)) == 32
    secret = build_auth_secret(cluster, token)
    assert secret["metadata"]["name"] == "raycluster-sample"
    assert secret["metadata"]["labels"] == {"ray.io/cluster": "raycluster-sample"}
    assert secret["metadata"]["ownerReferences"][0]["controller"] is True
    assert secret["stringData"] == {"auth_token": token}
    for options in (
        {"mode": "disabled"},
        {"mode": "token", "secretName": "s"},
        {"mode": "token", "enableK8sTokenAuth": True},
    ):
        cluster["spec"]["authOptions"] = options
        assert not needs_auth_secret(cluster)
    cluster["spec"]["authOptions"] = {}
    assert needs_auth_secret(cluster)  # KubeRay quirk: no mode still creates the Secret


def test_gcs_storage_pvc() -> None:
    cluster = fixture_p()
    cluster["spec"]["gcsFaultToleranceOptions"] = {"backend": "rocksdb"}
    pvc = build_gcs_storage_pvc(cluster)
    assert pvc["metadata"]["name"] == "raycluster-sample-gcs-pvc"
    assert pvc["metadata"]["labels"] == {"ray.io/cluster": "raycluster-sample"}
    assert pvc["metadata"]["ownerReferences"][0]["uid"] == "uid-p"
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    }
    cluster["spec"]["gcsFaultToleranceOptions"]["storage"] = {
        "size": "10240Mi",
        "storageClassName": "fast",
        "accessModes": ["ReadWriteMany"],
        "deletionPolicy": "Retain",
    }
    pvc = build_gcs_storage_pvc(cluster)
    assert "ownerReferences" not in pvc["metadata"]
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "storageClassName": "fast",
        "resources": {"requests": {"storage": "10Gi"}},
    }


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ({"replicas": 3, "minReplicas": 0, "maxReplicas": 4}, 3),
        ({"replicas": 5, "minReplicas": 0, "maxReplicas": 4}, 4),
        ({"replicas": 1, "minReplicas": 2, "maxReplicas": 4}, 2),
        ({"minReplicas": 2}, 2),
        ({"replicas": 3, "maxReplicas": 4, "numOfHosts": 4}, 12),
        ({"replicas": 3, "suspend": True}, 0),
    ],
)
def test_desired_replicas(group: dict[str, Any], expected: int) -> None:
    group.setdefault("numOfHosts", 1)
    assert worker_group_desired_replicas(group) == expected


def test_cluster_replica_totals() -> None:
    cluster = fixture_p()
    cluster["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 2
    cluster["spec"]["workerGroupSpecs"].append(
        {"groupName": "b", "replicas": 1, "maxReplicas": 2**31 - 1, "numOfHosts": 1}
    )
    cluster["spec"]["workerGroupSpecs"].append(
        {"groupName": "c", "replicas": 1, "minReplicas": 1, "suspend": True, "numOfHosts": 1}
    )
    assert calculate_desired_replicas(cluster) == 7
    assert calculate_min_replicas(cluster) == 0
    assert calculate_max_replicas(cluster) == 2**31 - 1


def test_scaling_helpers() -> None:
    cluster = fixture_p()
    group = cluster["spec"]["workerGroupSpecs"][0]
    group["scaleStrategy"] = {"workersToDelete": ["a", "b"]}
    assert workers_to_delete(group) == ["a", "b"]
    assert random_scale_down_allowed(cluster, BuildOptions())
    cluster["spec"]["enableInTreeAutoscaling"] = True
    assert not random_scale_down_allowed(cluster, BuildOptions())
    assert random_scale_down_allowed(cluster, BuildOptions(enable_random_pod_delete=True))
    group["numOfHosts"] = 2
    assert is_multi_host_indexing(group, {})
    assert not is_multi_host_indexing(group, {"RayMultiHostIndexing": False})
    assert lowest_free_indices([0, 2, 3], 3) == [1, 4, 5]


def test_desired_resources() -> None:
    cluster = fixture_p()
    cluster["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 1  # the CRD default
    assert desired_resource_status(cluster) == {
        "desiredCPU": "4",
        "desiredMemory": "4Gi",
        "desiredGPU": "9",
        "desiredTPU": "0",
    }
    worker = cluster["spec"]["workerGroupSpecs"][0]
    worker["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "500m"},
        "limits": {"cpu": "2", "google.com/tpu": "4"},
    }
    worker["numOfHosts"] = 2
    status = desired_resource_status(cluster)
    assert status["desiredCPU"] == "4"  # 1 + 3 replicas x 2 hosts x 500m
    assert status["desiredTPU"] == "24"
    worker["suspend"] = True
    assert desired_resource_status(cluster)["desiredCPU"] == "1"


def test_should_delete_pod() -> None:
    def pod(phase: str, policy: str = "Always", terminated: bool = False) -> dict[str, Any]:
        state = {"terminated": {"exitCode": 1}} if terminated else {"running": {}}
        return {
            "metadata": {"name": "p"},
            "spec": {"restartPolicy": policy, "containers": [{"name": "ray"}]},
            "status": {"phase": phase, "containerStatuses": [{"name": "ray", "state": state}]},
        }

    assert should_delete_pod(pod("Failed"), "worker")[0]
    assert should_delete_pod(pod("Succeeded"), "head")[0]
    assert should_delete_pod(pod("Running", "Never", True), "worker")[0]
    assert not should_delete_pod(pod("Running", "Always", True), "worker")[0]
    assert not should_delete_pod(pod("Pending"), "worker")[0]
    reason = should_delete_pod(pod("Failed"), "worker")[1]
    assert reason.startswith("The worker Pod p status is Failed which is a terminal state.")


def test_pod_readiness_helpers() -> None:
    ready = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    running = {"status": {"phase": "Running"}}
    not_ready = {
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}
    }
    assert is_running_and_ready(ready) and not is_running_and_ready(running)
    assert all_pods_running([ready, running])
    assert not all_pods_running([ready, not_ready])
    assert not all_pods_running([])


def test_selectors() -> None:
    cluster = fixture_p()
    assert head_pods_selector(cluster) == {
        "ray.io/cluster": "raycluster-sample",
        "ray.io/node-type": "head",
    }
    assert group_pods_selector(cluster, "g") == {
        "ray.io/cluster": "raycluster-sample",
        "ray.io/group": "g",
    }
    assert head_service_selector(cluster)["ray.io/identifier"] == "raycluster-sample-head"


def test_options_from_env() -> None:
    assert BuildOptions.from_env({}) == BuildOptions()
    opts = BuildOptions.from_env(
        {
            "ENABLE_INIT_CONTAINER_INJECTION": "FALSE",
            "ENABLE_PROBES_INJECTION": "no",
            "ENABLE_RANDOM_POD_DELETE": "True",
            "ENABLE_GCS_FT_REDIS_CLEANUP": "false",
            "CLUSTER_DOMAIN": "x.y",
        }
    )
    assert not opts.enable_init_container_injection
    assert opts.enable_probes_injection  # only "false" disables
    assert opts.enable_random_pod_delete
    assert not opts.enable_gcs_ft_redis_cleanup
    assert opts.cluster_domain == "x.y"
    assert BuildOptions(enable_login_shell=True).container_command("e") == [
        "/bin/bash",
        "-cel",
        "--",
    ]


def test_feature_defaults() -> None:
    assert feature_enabled({}, "RayMultiHostIndexing")
    assert not feature_enabled({}, "RayClusterHistoryServer")
    assert feature_enabled({"RayClusterHistoryServer": True}, "RayClusterHistoryServer")
    assert not feature_enabled(None, "UnknownGate")


def test_versions() -> None:
    assert parse_generic_version("2.53.0rc1") == (2, 53, 0)
    assert parse_generic_version("v2.9") == (2, 9)
    assert parse_generic_version("2") is None
    assert parse_generic_version("02.1") is None
    assert parse_generic_version("nightly") is None
    assert version_at_least("2.53", (2, 53, 0))
    assert not version_at_least("2.52.9", (2, 53, 0))


def test_set_controller_reference() -> None:
    cluster = fixture_p()
    obj: dict[str, Any] = {
        "metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "n"}]}
    }
    set_controller_reference(obj, cluster)
    set_controller_reference(obj, cluster)
    refs = obj["metadata"]["ownerReferences"]
    assert len(refs) == 2 and refs[1]["kind"] == "RayCluster"
    other = {
        "metadata": {
            "ownerReferences": [
                {"apiVersion": "a/v1", "kind": "Y", "name": "o", "controller": True}
            ]
        }
    }
    with pytest.raises(AlreadyOwnedError):
        set_controller_reference(other, cluster)
