"""Head and worker pods: token auth (Secret and Kubernetes modes), GCS fault tolerance (Redis,
the legacy annotation, embedded storage), the history-server collector sidecar and mTLS
wiring, as KubeRay wires them in."""

from __future__ import annotations

from builders_testlib import env_map, env_names, fixture_p, ray_container, small_group_worker

from kuberay.controllers.builders.pod import build_head_pod


def test_token_auth_secret_mode() -> None:
    cluster = fixture_p()
    cluster["spec"]["rayVersion"] = "2.52.0"
    cluster["spec"]["authOptions"] = {"mode": "token"}
    cluster["spec"]["enableInTreeAutoscaling"] = True
    token = {"secretKeyRef": {"name": "raycluster-sample", "key": "auth_token"}}
    head = build_head_pod(cluster)
    for container in head["spec"]["containers"]:
        assert env_map(container)["RAY_AUTH_MODE"] == "token"
        assert env_map(container)["RAY_AUTH_TOKEN"] == token
    worker = small_group_worker(cluster)
    assert env_map(ray_container(worker))["RAY_AUTH_TOKEN"] == token
    init = worker["spec"]["initContainers"][0]
    assert env_names(init) == ["RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "FQ_RAY_IP", "RAY_IP"]
    cluster["spec"]["authOptions"]["secretName"] = "my-secret"
    token = env_map(ray_container(build_head_pod(cluster)))["RAY_AUTH_TOKEN"]
    assert token["secretKeyRef"]["name"] == "my-secret"


def test_token_auth_kubernetes_mode() -> None:
    cluster = fixture_p()
    cluster["spec"]["rayVersion"] = "2.55.0"
    cluster["spec"]["authOptions"] = {"mode": "token", "enableK8sTokenAuth": True}
    pod = build_head_pod(cluster)
    ray = ray_container(pod)
    env = env_map(ray)
    assert env["RAY_AUTH_MODE"] == "token"
    assert env["RAY_ENABLE_K8S_TOKEN_AUTH"] == "true"
    assert "RAY_AUTH_TOKEN" not in env
    assert {
        "name": "ray-token",
        "readOnly": True,
        "mountPath": "/var/run/secrets/ray.io/serviceaccount",
    } in ray["volumeMounts"]
    assert {
        "name": "ray-token",
        "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]},
    } in pod["spec"]["volumes"]


def test_auth_mode_unset_injects_nothing() -> None:
    cluster = fixture_p()
    cluster["spec"]["authOptions"] = {}
    assert "RAY_AUTH_MODE" not in env_map(ray_container(build_head_pod(cluster)))


def test_gcs_ft_redis() -> None:
    cluster = fixture_p()
    cluster["spec"]["gcsFaultToleranceOptions"] = {
        "redisAddress": "redis:6379",
        "redisUsername": {"value": "user"},
        "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "s", "key": "password"}}},
    }
    head = build_head_pod(cluster)
    assert head["metadata"]["annotations"]["ray.io/ft-enabled"] == "true"
    assert head["metadata"]["annotations"]["ray.io/external-storage-namespace"] == "uid-p"
    ray = ray_container(head)
    assert env_names(ray)[1:5] == [
        "RAY_external_storage_namespace",
        "RAY_REDIS_ADDRESS",
        "REDIS_USERNAME",
        "REDIS_PASSWORD",
    ]
    env = env_map(ray)
    assert env["RAY_external_storage_namespace"] == "uid-p"
    assert env["RAY_REDIS_ADDRESS"] == "redis:6379"
    assert env["REDIS_USERNAME"] == "user"
    assert env["REDIS_PASSWORD"] == {"secretKeyRef": {"name": "s", "key": "password"}}
    start = env["KUBERAY_GEN_RAY_START_CMD"]
    assert "--redis-password=$REDIS_PASSWORD " in start
    assert "--redis-username=$REDIS_USERNAME " in start
    worker_env = env_map(ray_container(small_group_worker(cluster)))
    assert worker_env["RAY_gcs_rpc_server_reconnect_timeout_s"] == "600"


def test_gcs_ft_legacy_annotation() -> None:
    cluster = fixture_p()
    cluster["metadata"]["annotations"] = {
        "ray.io/ft-enabled": "TRUE",
        "ray.io/external-storage-namespace": "my-ns",
    }
    cluster["spec"]["headGroupSpec"]["rayStartParams"] = {"redis-password": "secret"}
    env = env_map(ray_container(build_head_pod(cluster)))
    assert env["RAY_external_storage_namespace"] == "my-ns"
    assert env["REDIS_PASSWORD"] == "secret"
    assert "RAY_REDIS_ADDRESS" not in env


def test_gcs_ft_embedded() -> None:
    cluster = fixture_p()
    cluster["spec"]["gcsFaultToleranceOptions"] = {
        "backend": "rocksdb",
        "storage": {"subPath": "gcs"},
    }
    pod = build_head_pod(cluster, features={"GCSFaultToleranceEmbeddedStorage": True})
    ray = ray_container(pod)
    env = env_map(ray)
    assert env["RAY_gcs_storage"] == "rocksdb"
    assert env["RAY_gcs_storage_path"] == "/data/gcs"
    assert "RAY_REDIS_ADDRESS" not in env
    assert ray["volumeMounts"][0] == {
        "name": "gcs-storage",
        "mountPath": "/data/gcs",
        "subPath": "gcs",
    }
    assert pod["spec"]["volumes"][0] == {
        "name": "gcs-storage",
        "persistentVolumeClaim": {"claimName": "raycluster-sample-gcs-pvc"},
    }


def test_history_server_collector() -> None:
    cluster = fixture_p()
    cluster["spec"]["historyServerOptions"] = {
        "collectorOptions": {
            "image": "collector:1",
            "env": [{"name": "STORAGE_BACKEND", "value": "s3"}],
        }
    }
    features = {"RayClusterHistoryServer": True}
    head = build_head_pod(cluster, features=features)
    ray, collector = head["spec"]["containers"]
    assert collector["name"] == "ray-history-collector"
    assert collector["image"] == "collector:1"
    assert collector["imagePullPolicy"] == "IfNotPresent"
    assert collector["resources"] == {
        "limits": {"cpu": "200m", "memory": "256Mi"},
        "requests": {"cpu": "50m", "memory": "64Mi"},
    }
    assert env_names(collector) == [
        "POD_IP",
        "RAY_CLUSTER_NAME",
        "RAY_CLUSTER_NAMESPACE",
        "RAY_ROLE",
        "EVENTS_PORT",
        "FQ_RAY_IP",
        "RAY_DASHBOARD_ADDRESS",
        "STORAGE_BACKEND",
    ]
    assert env_map(collector)["RAY_ROLE"] == "Head"
    assert {"name": "ray-logs", "mountPath": "/tmp/ray"} in collector["volumeMounts"]
    env = env_map(ray)
    assert env["RAY_enable_ray_event"] == "true"
    assert env["RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR"] == (
        "http://localhost:8084/v1/events"
    )
    worker_collector = small_group_worker(cluster, features=features)["spec"]["containers"][1]
    assert env_map(worker_collector)["RAY_ROLE"] == "Worker"
    assert "RAY_DASHBOARD_ADDRESS" not in env_map(worker_collector)
    assert len(build_head_pod(cluster)["spec"]["containers"]) == 1  # gate off


def test_mtls_wiring() -> None:
    cluster = fixture_p()
    cluster["spec"]["tlsOptions"] = {"enabled": True}
    pod = small_group_worker(cluster, features={"RayClusterMTLS": True})
    inits = pod["spec"]["initContainers"]
    assert [i["name"] for i in inits] == ["wait-for-tls-ip-san", "wait-gcs-ready"]
    assert inits[0]["command"] == ["sh", "-c"]
    assert {"name": "ray-tls", "secret": {"secretName": "ray-worker-secret-raycluster-sample"}} in (
        pod["spec"]["volumes"]
    )
    env = env_map(ray_container(pod))
    assert env["RAY_USE_TLS"] == "1"
    assert env["RAY_TLS_CA_CERT"] == "/etc/ray/tls/ca.crt"
    assert env_map(inits[1])["RAY_USE_TLS"] == "1"
    assert "ray-tls" not in str(small_group_worker(cluster)["spec"].get("volumes"))  # gate off
