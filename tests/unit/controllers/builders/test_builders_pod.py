"""Head and worker pods: readable expectations for every feature KubeRay wires into them."""

from __future__ import annotations

import copy

import pytest
from builders_testlib import env_map, env_names, fixture_p, ray_container, small_group_worker

from kuberay.api.v1.constants import KUBERAY_VERSION
from kuberay.controllers.builders.hashing import ray_cluster_recreate_hash
from kuberay.controllers.builders.pod import build_head_pod
from kuberay.controllers.builders.pod_template import wait_gcs_ready_script
from kuberay.controllers.common.options import BuildOptions

FQDN = "raycluster-sample-head-svc.default.svc.cluster.local"
ULIMIT = "ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; "
HEAD_START = (
    "ray start --head  --block  --dashboard-agent-listen-port=52365  "
    "--dashboard-host=0.0.0.0  --memory=1073741824  --metrics-export-port=8080  --num-cpus=1 "
)
WORKER_START = (
    f"ray start  --address={FQDN}:6379  --block  --dashboard-agent-listen-port=52365  "
    "--memory=1073741824  --metrics-export-port=8080  --num-cpus=1  --num-gpus=3  --port=6379 "
)
OWNER = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "name": "raycluster-sample",
    "uid": "uid-p",
    "controller": True,
    "blockOwnerDeletion": True,
}


def test_basic_head_pod() -> None:
    cluster = fixture_p()
    pod = build_head_pod(cluster)
    meta = pod["metadata"]
    assert pod["apiVersion"] == "v1" and pod["kind"] == "Pod"
    assert meta["generateName"] == "raycluster-sample-head-"
    assert "name" not in meta
    assert meta["namespace"] == "default"
    assert meta["labels"] == {
        "ray.io/is-ray-node": "yes",
        "ray.io/cluster": "raycluster-sample",
        "ray.io/node-type": "head",
        "ray.io/group": "headgroup",
        "ray.io/identifier": "raycluster-sample-head",
        "app.kubernetes.io/name": "kuberay",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }
    assert meta["annotations"] == {
        "ray.io/ft-enabled": "false",
        "ray.io/upgrade-strategy-recreate-hash": ray_cluster_recreate_hash(cluster),
        "ray.io/kuberay-version": KUBERAY_VERSION,
    }
    assert meta["ownerReferences"] == [OWNER]
    ray = ray_container(pod)
    assert ray["command"] == ["/bin/bash", "-c", "--"]
    assert ray["args"] == [ULIMIT + HEAD_START]
    assert env_names(ray) == [
        "TEST_ENV_NAME",
        "RAY_CLUSTER_NAME",
        "RAY_CLUSTER_NAMESPACE",
        "RAY_CLOUD_INSTANCE_ID",
        "RAY_NODE_TYPE_NAME",
        "KUBERAY_GEN_RAY_START_CMD",
        "RAY_PORT",
        "RAY_ADDRESS",
        "RAY_USAGE_STATS_KUBERAY_IN_USE",
        "RAY_USAGE_STATS_EXTRA_TAGS",
        "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE",
    ]
    env = env_map(ray)
    assert env["RAY_CLUSTER_NAME"] == {
        "fieldRef": {"fieldPath": "metadata.labels['ray.io/cluster']"}
    }
    assert env["RAY_CLUSTER_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["RAY_CLOUD_INSTANCE_ID"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["RAY_NODE_TYPE_NAME"] == {
        "fieldRef": {"fieldPath": "metadata.labels['ray.io/group']"}
    }
    assert env["KUBERAY_GEN_RAY_START_CMD"] == HEAD_START
    assert env["RAY_PORT"] == "6379"
    assert env["RAY_ADDRESS"] == "127.0.0.1:6379"
    assert env["RAY_USAGE_STATS_EXTRA_TAGS"] == (
        f"kuberay_version={KUBERAY_VERSION};kuberay_crd=RayCluster"
    )
    assert ray["ports"][-1] == {"name": "metrics", "containerPort": 8080}
    assert ray["volumeMounts"] == [{"name": "shared-mem", "mountPath": "/dev/shm"}]
    assert pod["spec"]["volumes"] == [
        {"name": "shared-mem", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}
    ]
    assert ray["livenessProbe"] == {
        "exec": {
            "command": [
                "bash",
                "-c",
                "wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz"
                " | grep success && wget --tries 1 -T 10 -q -O- "
                "http://localhost:8265/api/gcs_healthz | grep success",
            ]
        },
        "initialDelaySeconds": 30,
        "timeoutSeconds": 5,
        "periodSeconds": 5,
        "successThreshold": 1,
        "failureThreshold": 120,
    }
    assert ray["readinessProbe"]["failureThreshold"] == 10
    assert ray["readinessProbe"]["initialDelaySeconds"] == 10
    assert "initContainers" not in pod["spec"]


def test_basic_worker_pod() -> None:
    pod = small_group_worker(fixture_p())
    meta = pod["metadata"]
    assert meta["generateName"] == "raycluster-sample-small-group-worker-"
    assert meta["labels"]["ray.io/node-type"] == "worker"
    assert meta["labels"]["ray.io/group"] == "small-group"
    assert meta["labels"]["ray.io/identifier"] == "raycluster-sample-worker"
    assert meta["labels"]["ray.io/worker-group-replica-index"] == "0"
    assert "ray.io/worker-group-replica-name" not in meta["labels"]
    assert "annotations" not in meta  # no ft-enabled / hash on workers
    assert meta["ownerReferences"] == [OWNER]
    ray = ray_container(pod)
    assert ray["args"] == [ULIMIT + WORKER_START]
    env = env_map(ray)
    assert env_names(ray)[:3] == ["FQ_RAY_IP", "RAY_IP", "RAY_CLUSTER_NAME"]
    assert env["FQ_RAY_IP"] == FQDN
    assert env["RAY_IP"] == "raycluster-sample-head-svc"
    assert env["RAY_ADDRESS"] == f"{FQDN}:6379"
    assert "RAY_USAGE_STATS_EXTRA_TAGS" not in env
    assert ray["livenessProbe"]["timeoutSeconds"] == 2
    assert ray["livenessProbe"]["exec"]["command"][2] == (
        "wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success"
    )
    [init] = pod["spec"]["initContainers"]
    assert init["name"] == "wait-gcs-ready"
    assert init["image"] == "repo/image:custom"
    assert init["command"] == ["/bin/bash", "-c", "--"]
    assert init["args"] == [wait_gcs_ready_script(FQDN, "6379")]
    assert init["resources"] == {
        "limits": {"cpu": "200m", "memory": "256Mi"},
        "requests": {"cpu": "200m", "memory": "256Mi"},
    }
    assert init["env"] == [
        {"name": "FQ_RAY_IP", "value": FQDN},
        {"name": "RAY_IP", "value": "raycluster-sample-head-svc"},
    ]
    assert pod["spec"]["volumes"][0]["emptyDir"] == {"medium": "Memory", "sizeLimit": "1Gi"}


def test_wait_gcs_ready_script_text() -> None:
    script = wait_gcs_ready_script("h.ns.svc.cluster.local", "6379")
    assert script.startswith("\n\t\t\t\t\tSECONDS=0\n\t\t\t\t\twhile true; do\n")
    assert (
        "\t\t\t\t\t\t\tif ray health-check --address h.ns.svc.cluster.local:6379"
        " > /dev/null 2>&1; then\n" in script
    )
    assert script.endswith("\t\t\t\t\tdone\n\t\t\t\t")


def test_input_is_not_mutated() -> None:
    cluster = fixture_p()
    cluster["spec"]["enableInTreeAutoscaling"] = True
    cluster["spec"]["authOptions"] = {"mode": "token"}
    cluster["spec"]["gcsFaultToleranceOptions"] = {"redisAddress": "redis:6379"}
    before = copy.deepcopy(cluster)
    build_head_pod(cluster)
    small_group_worker(cluster)
    assert cluster == before


def test_gpu_tpu_and_custom_resources() -> None:
    cluster = fixture_p()
    worker = cluster["spec"]["workerGroupSpecs"][0]
    worker["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"cpu": "2", "memory": "2Gi", "google.com/tpu": "4"}
    }
    worker["resources"] = {"custom_a": "2", "nvidia.com/gpu": "1"}
    start = env_map(ray_container(small_group_worker(cluster)))["KUBERAY_GEN_RAY_START_CMD"]
    assert "--num-gpus=1 " in start
    assert "--num-cpus=2 " in start
    assert "--memory=2147483648 " in start
    # group resources already set "resources"; TPU is added into the same JSON
    assert '--resources=\'{"TPU":4,"custom_a":2}\' ' in start


def test_multi_host_labels() -> None:
    cluster = fixture_p()
    cluster["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 4
    pod = small_group_worker(
        cluster, replica_group_name="small-group-abcde", replica_index=2, host_index=3
    )
    labels = pod["metadata"]["labels"]
    assert labels["ray.io/worker-group-replica-name"] == "small-group-abcde"
    assert labels["ray.io/worker-group-replica-index"] == "2"
    assert labels["ray.io/replica-host-index"] == "3"
    off = small_group_worker(cluster, features={"RayMultiHostIndexing": False}, replica_index=2)
    assert not any(k.startswith("ray.io/worker-group-replica") for k in off["metadata"]["labels"])


def test_user_labels_cannot_override_identity_labels() -> None:
    cluster = fixture_p()
    cluster["spec"]["headGroupSpec"]["template"]["metadata"] = {
        "labels": {
            "ray.io/cluster": "other",
            "ray.io/node-type": "worker",
            "ray.io/group": "x",
            "app.kubernetes.io/name": "myapp",
        }
    }
    labels = build_head_pod(cluster)["metadata"]["labels"]
    assert labels["ray.io/cluster"] == "raycluster-sample"
    assert labels["ray.io/node-type"] == "head"
    assert labels["ray.io/group"] == "headgroup"
    assert labels["app.kubernetes.io/name"] == "myapp"


@pytest.mark.parametrize("version", [None, "v1", "v2"])
def test_autoscaler(version: str | None) -> None:
    cluster = fixture_p()
    cluster["spec"]["enableInTreeAutoscaling"] = True
    if version:
        cluster["spec"]["autoscalerOptions"] = {"version": version}
    pod = build_head_pod(cluster)
    spec = pod["spec"]
    assert spec["serviceAccountName"] == "raycluster-sample"
    ray, autoscaler = spec["containers"]
    assert "--no-monitor " in env_map(ray)["KUBERAY_GEN_RAY_START_CMD"]
    assert autoscaler["name"] == "autoscaler"
    assert autoscaler["image"] == "repo/image:custom"
    assert autoscaler["imagePullPolicy"] == "IfNotPresent"
    start = (
        "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) "
        "--cluster-namespace $(RAY_CLUSTER_NAMESPACE)"
    )
    assert autoscaler["command"] == ["/bin/bash", "-c", "--"]
    assert autoscaler["args"] == [start]
    assert env_names(autoscaler) == [
        "RAY_CLUSTER_NAME",
        "RAY_CLUSTER_NAMESPACE",
        "RAY_HEAD_POD_NAME",
        "KUBERAY_CRD_VER",
        "KUBERAY_GEN_AUTOSCALER_START_CMD",
    ]
    assert env_map(autoscaler)["KUBERAY_GEN_AUTOSCALER_START_CMD"] == start
    assert autoscaler["resources"]["limits"] == {"cpu": "500m", "memory": "512Mi"}
    assert {"name": "ray-logs", "mountPath": "/tmp/ray"} in autoscaler["volumeMounts"]
    assert {"name": "ray-logs", "mountPath": "/tmp/ray"} in ray["volumeMounts"]
    assert {"name": "ray-logs", "emptyDir": {}} in spec["volumes"]
    env = env_map(ray)
    worker_spec = small_group_worker(cluster)["spec"]
    if version == "v2":
        assert env["RAY_enable_autoscaler_v2"] == "true"
        assert spec["restartPolicy"] == "Never"
        assert worker_spec["restartPolicy"] == "Never"
    elif version == "v1":
        assert env["RAY_enable_autoscaler_v2"] == "false"
        assert "restartPolicy" not in spec
    else:
        assert "RAY_enable_autoscaler_v2" not in env
        assert "restartPolicy" not in worker_spec


def test_autoscaler_options_override() -> None:
    cluster = fixture_p()
    cluster["spec"]["enableInTreeAutoscaling"] = True
    cluster["spec"]["autoscalerOptions"] = {
        "image": "my/autoscaler",
        "imagePullPolicy": "Always",
        "resources": {"limits": {"cpu": "1"}},
        "env": [{"name": "FOO", "value": "bar"}],
        "securityContext": {"runAsUser": 1000},
        "command": ["sh"],
        "args": ["-c", "$KUBERAY_GEN_AUTOSCALER_START_CMD"],
    }
    autoscaler = build_head_pod(cluster)["spec"]["containers"][1]
    assert autoscaler["image"] == "my/autoscaler"
    assert autoscaler["imagePullPolicy"] == "Always"
    assert autoscaler["resources"] == {"limits": {"cpu": "1"}}
    assert env_names(autoscaler)[-1] == "FOO"
    assert autoscaler["securityContext"] == {"runAsUser": 1000}
    assert autoscaler["command"] == ["sh"]
    assert autoscaler["args"] == ["-c", "$KUBERAY_GEN_AUTOSCALER_START_CMD"]


def test_overwrite_container_cmd_annotation() -> None:
    cluster = fixture_p()
    cluster["metadata"]["annotations"] = {"ray.io/overwrite-container-cmd": "true"}
    head = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    head["command"] = ["I am head"]
    head["args"] = ["I am head again"]
    pod = build_head_pod(cluster)
    assert pod["metadata"]["annotations"]["ray.io/overwrite-container-cmd"] == "true"
    ray = ray_container(pod)
    assert ray["command"] == ["I am head"]
    assert ray["args"] == ["I am head again"]
    assert env_map(ray)["KUBERAY_GEN_RAY_START_CMD"] == HEAD_START


def test_head_command_is_chained_before_ray_start() -> None:
    cluster = fixture_p()
    head = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    head["command"] = ["echo 123"]
    head["args"] = ["456"]
    ray = ray_container(build_head_pod(cluster))
    assert ray["command"] == ["/bin/bash", "-c", "--"]
    assert ray["args"] == [" echo 123  456  && " + ULIMIT + HEAD_START]


def test_command_with_ray_start_is_kept() -> None:
    cluster = fixture_p()
    head = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    head["args"] = ["ray start --head --block"]
    ray = ray_container(build_head_pod(cluster))
    assert "command" not in ray
    assert ray["args"] == ["ray start --head --block"]


def test_operator_switches() -> None:
    cluster = fixture_p()
    opts = BuildOptions.from_env(
        {
            "ENABLE_LOGIN_SHELL": "true",
            "ENABLE_INIT_CONTAINER_INJECTION": "false",
            "ENABLE_PROBES_INJECTION": "False",
            "ENABLE_DETERMINISTIC_HEAD_POD_NAME": "TRUE",
            "CLUSTER_DOMAIN": "corp.local",
        }
    )
    head = build_head_pod(cluster, opts)
    assert head["metadata"]["name"] == "raycluster-sample-head"
    assert "generateName" not in head["metadata"]
    assert ray_container(head)["command"] == ["/bin/bash", "-cl", "--"]
    assert "livenessProbe" not in ray_container(head)
    worker = small_group_worker(cluster, options=opts)
    assert "initContainers" not in worker["spec"]
    assert (
        env_map(ray_container(worker))["FQ_RAY_IP"]
        == "raycluster-sample-head-svc.default.svc.corp.local"
    )


def test_http_probes_for_new_ray_and_serve_readiness() -> None:
    cluster = fixture_p()
    cluster["spec"]["rayVersion"] = "2.53.0"
    ray = ray_container(build_head_pod(cluster))
    assert ray["livenessProbe"]["httpGet"] == {"path": "/api/healthz", "port": 52365}
    cluster["metadata"]["labels"] = {"ray.io/originated-from-crd": "RayService"}
    worker = ray_container(small_group_worker(cluster))
    assert worker["livenessProbe"]["httpGet"] == {"path": "/api/healthz", "port": 52365}
    readiness = worker["readinessProbe"]
    assert "httpGet" not in readiness
    assert readiness["failureThreshold"] == 1
    assert readiness["exec"]["command"][2].endswith(
        "&& wget --tries 1 -T 10 -q -O- http://localhost:8000/-/healthz | grep success"
    )


def test_user_probes_are_kept() -> None:
    cluster = fixture_p()
    probe = {"exec": {"command": ["true"]}}
    cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["livenessProbe"] = probe
    assert ray_container(build_head_pod(cluster))["livenessProbe"] == probe


def test_rayservice_cluster_env_and_labels() -> None:
    cluster = fixture_p()
    cluster["metadata"]["labels"] = {"ray.io/originated-from-crd": "RayService"}
    head = build_head_pod(cluster)
    assert head["metadata"]["labels"]["ray.io/serve"] == "false"
    env = env_map(ray_container(head))
    assert env["RAY_timeout_ms_task_wait_for_death_info"] == "0"
    assert env["RAY_gcs_server_request_timeout_seconds"] == "5"
    assert env["RAY_SERVE_KV_TIMEOUT_S"] == "5"
    assert env["RAY_USAGE_STATS_EXTRA_TAGS"].endswith("kuberay_crd=RayService")
    assert small_group_worker(cluster)["metadata"]["labels"]["ray.io/serve"] == "true"


def test_operator_config_defaults() -> None:
    opts = BuildOptions(
        default_container_envs=({"name": "X", "value": "1"},),
        head_sidecar_containers=({"name": "fluentbit", "image": "fluent/fluent-bit:1.9.6"},),
        default_pod_annotations={"a": "b"},
        default_pod_labels={"team": "t", "ray.io/cluster": "ignored"},
    )
    pod = build_head_pod(fixture_p(), opts)
    assert [c["name"] for c in pod["spec"]["containers"]] == ["ray-head", "fluentbit"]
    assert pod["metadata"]["annotations"]["a"] == "b"
    assert pod["metadata"]["labels"]["team"] == "t"
    assert pod["metadata"]["labels"]["ray.io/cluster"] == "raycluster-sample"
    assert env_names(ray_container(pod))[1] == "X"


def test_custom_head_port_and_service_name() -> None:
    cluster = fixture_p()
    cluster["spec"]["headGroupSpec"]["rayStartParams"] = {"port": "6380"}
    cluster["spec"]["headGroupSpec"]["headService"] = {"metadata": {"name": "my-svc"}}
    worker = ray_container(small_group_worker(cluster))
    env = env_map(worker)
    assert env["FQ_RAY_IP"] == "my-svc.default.svc.cluster.local"
    assert env["RAY_ADDRESS"] == "my-svc.default.svc.cluster.local:6380"
    assert env["RAY_PORT"] == "6380"
    assert env_map(ray_container(build_head_pod(cluster)))["RAY_ADDRESS"] == "127.0.0.1:6380"


def test_plasma_directory_and_user_shm() -> None:
    cluster = fixture_p()
    cluster["spec"]["headGroupSpec"]["rayStartParams"] = {"plasma-directory": "/tmp"}
    assert "volumes" not in build_head_pod(cluster)["spec"]
    container = cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    container["volumeMounts"] = [{"name": "mine", "mountPath": "/dev/shm"}]
    assert "volumes" not in small_group_worker(cluster)["spec"]


def test_recreate_hash_override() -> None:
    pod = build_head_pod(fixture_p(), recreate_hash="")
    assert "ray.io/upgrade-strategy-recreate-hash" not in pod["metadata"]["annotations"]
    pod = build_head_pod(fixture_p(), BuildOptions(kuberay_version="v9"), recreate_hash="H")
    assert pod["metadata"]["annotations"]["ray.io/upgrade-strategy-recreate-hash"] == "H"
    assert pod["metadata"]["annotations"]["ray.io/kuberay-version"] == "v9"


def test_fixed_worker_pod_name_and_null_start_params() -> None:
    cluster = fixture_p()
    cluster["spec"]["workerGroupSpecs"][0]["rayStartParams"] = {"num-cpus": None}
    pod = small_group_worker(cluster, pod_name="w-0")
    assert pod["metadata"]["name"] == "w-0"
    assert "generateName" not in pod["metadata"]
    assert " --num-cpus= " in env_map(ray_container(pod))["KUBERAY_GEN_RAY_START_CMD"]
