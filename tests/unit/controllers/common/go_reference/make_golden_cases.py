"""Write the inputs of ``golden_harness_test.go``: sample clusters plus crafted feature cases.

Usage: ``python make_golden_cases.py <samples dir> cases.json``. Each case is a RayCluster
(RayJob/RayService samples become the cluster those controllers would create) plus the
operator env vars, feature gates and configuration to run KubeRay's builders with.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import yaml

Case = dict[str, Any]


def workers_for(spec: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for index, group in enumerate(spec.get("workerGroupSpecs") or []):
        hosts = group.get("numOfHosts") or 0
        if isinstance(hosts, int) and hosts > 1:
            name = f"{group['groupName']}-xk2b9"
            out.append({"group": index, "replicaName": name, "replicaIndex": 2, "hostIndex": 1})
        else:
            out.append({"group": index, "replicaName": "", "replicaIndex": 0, "hostIndex": 0})
    return out


def features_for(spec: dict[str, Any]) -> dict[str, bool]:
    features = {}
    if (spec.get("gcsFaultToleranceOptions") or {}).get("backend") == "rocksdb":
        features["GCSFaultToleranceEmbeddedStorage"] = True
    if spec.get("historyServerOptions"):
        features["RayClusterHistoryServer"] = True
    if spec.get("tlsOptions"):
        features["RayClusterMTLS"] = True
    return features


def case(name: str, cluster: dict[str, Any], **extra: Any) -> Case:
    result: Case = {
        "name": name,
        "cluster": cluster,
        "workers": workers_for(cluster["spec"]),
        "features": features_for(cluster["spec"]),
    }
    result.update(extra)
    return result


def sample_cases(samples: Path) -> list[Case]:
    cases = []
    counter = 0
    for path in sorted(samples.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if not isinstance(doc, dict):
                continue
            kind, spec, meta = doc.get("kind"), doc.get("spec") or {}, doc.get("metadata") or {}
            counter += 1
            uid = f"uid-{counter}"
            namespace = meta.get("namespace", "default")
            if kind == "RayCluster":
                cluster_meta = {**meta, "namespace": namespace, "uid": uid}
                cluster_spec = spec
            elif kind in ("RayService", "RayJob"):
                key = "rayClusterConfig" if kind == "RayService" else "rayClusterSpec"
                cluster_spec = spec.get(key)
                if not cluster_spec:
                    continue
                owner = meta.get("name", "noname")
                cluster_meta = {
                    "name": f"{owner}-bc2df",
                    "namespace": namespace,
                    "uid": uid,
                    "labels": {
                        "ray.io/originated-from-cr-name": owner,
                        "ray.io/originated-from-crd": kind,
                    },
                }
            else:
                continue
            cluster = {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": cluster_meta,
                "spec": cluster_spec,
            }
            cases.append(case(f"sample:{path.name}#{index}", cluster))
    return cases


def fixture_p() -> dict[str, Any]:
    head = {
        "name": "ray-head",
        "image": "repo/image:custom",
        "env": [{"name": "TEST_ENV_NAME", "value": "TEST_ENV_VALUE"}],
        "resources": {
            "requests": {"cpu": "1", "memory": "1Gi"},
            "limits": {"cpu": "1", "memory": "1Gi"},
        },
        "ports": [
            {"name": "gcs-server", "containerPort": 6379},
            {"name": "dashboard", "containerPort": 8265},
            {"name": "client", "containerPort": 10001},
            {"name": "serve", "containerPort": 8000},
        ],
    }
    worker = {
        "name": "ray-worker",
        "image": "repo/image:custom",
        "resources": {"limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 3}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "raycluster-sample", "namespace": "default", "uid": "uid-p"},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [head]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "small-group",
                    "replicas": 3,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {"port": "6379"},
                    "template": {"spec": {"containers": [worker]}},
                }
            ],
        },
    }


def head_container(cluster: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][
        0
    ]
    return container


def worker_group(cluster: dict[str, Any]) -> dict[str, Any]:
    group: dict[str, Any] = cluster["spec"]["workerGroupSpecs"][0]
    return group


def worker_container(cluster: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = worker_group(cluster)["template"]["spec"]["containers"][0]
    return container


def crafted_cases() -> list[Case]:
    cases: list[Case] = []

    def variant() -> dict[str, Any]:
        return copy.deepcopy(fixture_p())

    cases.append(case("fixture-p", variant()))
    for env in (
        {"ENABLE_LOGIN_SHELL": "true"},
        {"ENABLE_INIT_CONTAINER_INJECTION": "FALSE"},
        {"ENABLE_PROBES_INJECTION": "false"},
        {"ENABLE_DETERMINISTIC_HEAD_POD_NAME": "true"},
        {"CLUSTER_DOMAIN": "example.org"},
        {"ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE": "true"},
    ):
        name = "env:" + ",".join(f"{k}={v}" for k, v in env.items())
        cases.append(case(name, variant(), env=env))
    cases.append(
        case(
            "operator-config",
            variant(),
            defaultContainerEnvs=[
                {"name": "TEST_DEFAULT_ENV_NAME", "value": "X"},
                {"name": "TEST_ENV_NAME", "value": "ignored"},
            ],
            headSidecars=[{"name": "fluentbit", "image": "fluent/fluent-bit:1.9.6"}],
            workerSidecars=[{"name": "wside", "image": "busybox"}],
            defaultPodAnnotations={"a": "b", "ray.io/ft-enabled": "nope"},
            defaultPodLabels={"team": "x", "ray.io/group": "nope"},
        )
    )

    c = variant()
    head_container(c)["resources"] = {
        "limits": {
            "aws.amazon.com/neuroncore": 4,
            "nvidia.com/gpu": 1,
            "google.com/tpu": 8,
            "cpu": "500m",
        },
        "requests": {"memory": "2Gi", "cpu": "3"},
    }
    c["spec"]["headGroupSpec"]["rayStartParams"] = {"resources": '"{"custom_resource":2}"'}
    worker_container(c)["resources"] = {
        "limits": {"google.com/tpu": "4", "cpu": "2500m", "memory": "1.5Gi"}
    }
    cases.append(case("accelerators", c))

    c = variant()
    c["spec"]["headGroupSpec"]["rayStartParams"] = {"resources": "{", "num-gpus": "2"}
    head_container(c)["resources"] = {
        "limits": {"aws.amazon.com/neuroncore": 4, "nvidia.com/gpu": 1}
    }
    worker_group(c)["rayStartParams"] = {"resources": '\'{"TPU": 4, "x": 1.5}\''}
    worker_container(c)["resources"] = {
        "limits": {"google.com/tpu": "8", "nvidia.com/mig-2g.32gb": 1}
    }
    cases.append(case("accelerators-existing-resources", c))

    c = variant()
    head = c["spec"]["headGroupSpec"]
    head["resources"] = {"CPU": "2", "memory": "4Gi", "custom": "1.5", "Custom-Resource": "5"}
    head["labels"] = {
        "topology.kubernetes.io/zone": "us-central2",
        "ray.io/node-group": "head",
        "ray.io/cluster": "nope",
    }
    head["template"]["metadata"] = {
        "labels": {"app.kubernetes.io/name": "myapp", "ray.io/node-type": "worker"},
        "namespace": "not-default",
    }
    group = worker_group(c)
    group["resources"] = {"nvidia.com/gpu": "1", "TPU": "4", "memory": "bad!"}
    group["labels"] = {"cloud.google.com/gke-spot": "true", "ray.io/node-group": "worker-group-1"}
    group["template"]["metadata"] = {
        "labels": {
            "ray.io/node-group": "tmpl",
            "app.kubernetes.io/name": "myapp",
            "ray.io/group": "bogus",
        },
        "annotations": {"x": "y"},
        "name": "ignored",
        "namespace": "other",
    }
    cases.append(case("group-resources-labels", c))

    c = variant()
    c["metadata"]["annotations"] = {"ray.io/overwrite-container-cmd": "TRUE"}
    head_container(c).update(command=["I am head"], args=["I am head again"])
    cases.append(case("overwrite-cmd", c))

    c = variant()
    head_container(c).update(command=["echo"], args=["hi"])
    worker_container(c)["command"] = ["/bin/bash", "-c", "ray start --address=$X && sleep 1"]
    cases.append(case("user-command", c))

    c = variant()
    c["spec"]["rayVersion"] = "2.53.0"
    c["spec"]["headGroupSpec"]["rayStartParams"] = {
        "dashboard-agent-listen-port": "8266",
        "dashboard-port": "8365",
        "port": "6380",
        "include-log-monitor": "false",
        "disable-usage-stats": "True",
        "log-color": "true",
        "block": "false",
        "plasma-directory": "/tmp",
    }
    worker_group(c)["rayStartParams"] = {
        "dashboard-agent-listen-port": "abc",
        "address": "x:1",
        "metrics-export-port": "9090",
        "disable-usage-stats": "false",
    }
    cases.append(case("http-probes-custom-ports", c))

    c = variant()
    c["spec"]["rayVersion"] = "not-a-version"
    c["spec"]["headGroupSpec"]["rayStartParams"] = {
        "dashboard-agent-listen-port": "8266",
        "dashboard-port": "8365",
    }
    worker_container(c)["livenessProbe"] = {"exec": {"command": ["true"]}}
    worker_container(c)["volumeMounts"] = [{"name": "shm", "mountPath": "/dev/shm"}]
    cases.append(case("exec-probes-custom-ports", c))

    for version in ("2.53.0", "2.9.0"):
        c = variant()
        c["spec"]["rayVersion"] = version
        c["metadata"]["name"] = "rs-abcde"
        c["metadata"]["labels"] = {
            "ray.io/originated-from-crd": "RayService",
            "ray.io/originated-from-cr-name": "rs",
        }
        worker_container(c)["ports"] = [{"name": "serve", "containerPort": 8001}]
        cases.append(case(f"rayservice-{version}", c))

    c = variant()
    c["metadata"]["labels"] = {
        "ray.io/originated-from-crd": "RayJob",
        "ray.io/originated-from-cr-name": "job",
    }
    cases.append(case("rayjob-cluster", c))

    for autoscaler_version in (None, "v1", "v2"):
        c = variant()
        c["spec"]["enableInTreeAutoscaling"] = True
        if autoscaler_version:
            c["spec"]["autoscalerOptions"] = {"version": autoscaler_version}
        cases.append(case(f"autoscaler-{autoscaler_version}", c))

    c = variant()
    c["spec"]["enableInTreeAutoscaling"] = True
    c["spec"]["autoscalerOptions"] = {
        "version": "v2",
        "image": "my/autoscaler:1",
        "imagePullPolicy": "Always",
        "resources": {"limits": {"cpu": "1"}},
        "env": [{"name": "FOO", "value": "bar"}],
        "envFrom": [{"configMapRef": {"name": "cm"}}],
        "volumeMounts": [{"name": "v", "mountPath": "/v"}],
        "securityContext": {"runAsUser": 1000},
        "command": ["sh"],
        "args": ["-c", "ulimit -n 65536; $KUBERAY_GEN_AUTOSCALER_START_CMD"],
        "idleTimeoutSeconds": 30,
        "upscalingMode": "Default",
    }
    c["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = "my-sa-" + "x" * 60
    worker_group(c)["idleTimeoutSeconds"] = 10
    cases.append(case("autoscaler-v2-overrides", c))

    for auth in (
        {"mode": "token"},
        {"mode": "token", "secretName": "my-secret"},
        {"mode": "token", "enableK8sTokenAuth": True},
        {"mode": "disabled"},
        {},
    ):
        c = variant()
        c["spec"]["rayVersion"] = "2.55.0"
        c["spec"]["authOptions"] = auth
        c["spec"]["enableInTreeAutoscaling"] = True
        worker_container(c)["env"] = [{"name": "RAY_AUTH_MODE", "value": "token"}]
        cases.append(case("auth:" + json.dumps(auth, sort_keys=True), c))

    c = variant()
    c["metadata"]["name"] = "raycluster-historyserver"
    c["metadata"]["labels"] = {
        "ray.io/originated-from-crd": "RayJob",
        "ray.io/originated-from-cr-name": "job1",
    }
    c["spec"]["historyServerOptions"] = {
        "collectorOptions": {
            "image": "collector:1",
            "env": [{"name": "STORAGE_BACKEND", "value": "s3"}],
        }
    }
    c["spec"]["authOptions"] = {"mode": "token"}
    cases.append(case("history-server-auth", c))
    cases.append(
        case(
            "history-server-gate-off", copy.deepcopy(c), features={"RayClusterHistoryServer": False}
        )
    )

    c = variant()
    c["spec"]["gcsFaultToleranceOptions"] = {
        "redisAddress": "redis:6379",
        "redisUsername": {"value": "user"},
        "redisPassword": {
            "valueFrom": {"secretKeyRef": {"name": "redis-password-secret", "key": "password"}}
        },
        "externalStorageNamespace": "ns1",
    }
    c["metadata"]["annotations"] = {"ray.io/external-storage-namespace": "ignored"}
    cases.append(case("gcs-ft-redis-options", c))

    c = variant()
    c["metadata"]["annotations"] = {
        "ray.io/ft-enabled": "True",
        "ray.io/external-storage-namespace": "legacy-ns",
    }
    c["spec"]["headGroupSpec"]["rayStartParams"] = {"redis-password": "5241590000000000"}
    head_container(c)["env"] = [{"name": "RAY_REDIS_ADDRESS", "value": "redis:6379"}]
    worker_container(c)["env"] = [
        {"name": "RAY_gcs_rpc_server_reconnect_timeout_s", "value": "120"}
    ]
    cases.append(case("gcs-ft-legacy-annotation", c))

    for storage in (
        {},
        {
            "size": "10Gi",
            "storageClassName": "fast",
            "accessModes": ["ReadWriteMany"],
            "subPath": "gcs",
            "deletionPolicy": "Retain",
        },
        {"claimName": "existing"},
    ):
        c = variant()
        c["spec"]["gcsFaultToleranceOptions"] = {"backend": "rocksdb"}
        if storage:
            c["spec"]["gcsFaultToleranceOptions"]["storage"] = storage
        cases.append(case("gcs-ft-embedded:" + json.dumps(storage, sort_keys=True), c))

    c = variant()
    c["spec"]["tlsOptions"] = {"enabled": True}
    c["spec"]["enableInTreeAutoscaling"] = True
    head_container(c).update(securityContext={"runAsUser": 1000}, imagePullPolicy="Always")
    c["spec"]["gcsFaultToleranceOptions"] = {"redisAddress": "redis:6379"}
    cases.append(case("mtls", c))

    c = variant()
    c["metadata"]["annotations"] = {
        "kubernetes.io/ingress.class": "nginx",
        "foo": "bar",
        "ray.io/enable-serve-service": "true",
    }
    head = c["spec"]["headGroupSpec"]
    head["enableIngress"] = True
    head["ingressOptions"] = {
        "host": "ray.example.com",
        "path": "/ray",
        "pathType": "Exact",
        "tls": [{"hosts": ["ray.example.com"], "secretName": "tls"}],
    }
    head["serviceType"] = "LoadBalancer"
    c["spec"]["headServiceAnnotations"] = {"a": "b"}
    head_container(c)["ports"] += [
        {"name": "serve-grpc", "containerPort": 9000},
        {"containerPort": 1234},
    ]
    cases.append(case("ingress-serve-svc", c))

    c = variant()
    c["spec"]["headGroupSpec"]["headService"] = {
        "metadata": {
            "name": "my-head",
            "namespace": "other",
            "labels": {"ray.io/cluster": "x", "custom": "y"},
            "annotations": {"a": "user", "c": "d"},
        },
        "spec": {
            "type": "NodePort",
            "selector": {"x": "y"},
            "clusterIP": "10.0.0.5",
            "ports": [{"name": "extra", "port": 9999}],
        },
    }
    c["spec"]["headServiceAnnotations"] = {"a": "b"}
    c["spec"]["headGroupSpec"]["template"]["metadata"] = {
        "labels": {"app.kubernetes.io/name": "myapp"}
    }
    head_container(c)["ports"] = [{"name": "dashboard", "containerPort": 8266}]
    cases.append(case("custom-head-service", c))

    c = variant()
    c["spec"]["headGroupSpec"]["headService"] = {"spec": {}}
    cases.append(case("custom-head-service-empty", c))

    c = variant()
    c["metadata"]["name"] = "r" * 53
    c["metadata"]["annotations"] = {"ray.io/enable-serve-service": "true"}
    c["spec"]["enableInTreeAutoscaling"] = True
    c["spec"]["headGroupSpec"]["enableIngress"] = True
    worker_group(c)["numOfHosts"] = 4
    worker_group(c)["groupName"] = "multi-host-group-with-a-long-name"
    c["spec"]["gcsFaultToleranceOptions"] = {"redisAddress": "redis:6379"}
    cases.append(case("long-name", c))

    c = variant()
    c["metadata"]["name"] = "1-" + "a" * 60 + ".Cluster"
    cases.append(case("weird-name", c))

    c = variant()
    worker_group(c)["numOfHosts"] = 2
    cases.append(case("multi-host-gate-off", c, features={"RayMultiHostIndexing": False}))
    cases.append(case("multi-host-gate-on", copy.deepcopy(c)))

    c = variant()
    c["spec"]["headGroupSpec"]["template"]["spec"]["initContainers"] = [
        {"name": "user-init", "image": "busybox", "env": [{"name": "A", "value": "b"}]}
    ]
    worker_group(c)["template"]["spec"]["initContainers"] = [
        {"name": "user-init", "image": "busybox"}
    ]
    worker_container(c).update(
        env=[
            {"name": "RAY_ADDRESS", "value": "custom:1"},
            {"name": "RAY_PORT", "value": "1"},
            {"name": "RAY_USAGE_STATS_KUBERAY_IN_USE", "value": "0"},
            {"name": "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", "value": "0"},
        ],
        volumeMounts=[{"name": "data", "mountPath": "/data"}],
        securityContext={"privileged": True},
        imagePullPolicy="IfNotPresent",
    )
    cases.append(case("init-containers-user-env", c))
    return cases


def main(samples: str, output: str) -> None:
    cases = sample_cases(Path(samples)) + crafted_cases()
    Path(output).write_text(json.dumps(cases, indent=0))
    print(len(cases), "cases")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
