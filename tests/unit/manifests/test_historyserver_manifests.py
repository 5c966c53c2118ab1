"""The history server's install manifests (manifests/historyserver, plain YAML) and the
chart's ``historyServer`` block: KubeRay's object names, labels and selectors, ports and
probes, RBAC verbs, the server accepting the Deployment's flags, and (with the helm binary
``hack/build/build_helm.py`` builds) the chart rendering them only when
``historyServer.enabled``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from manifests_expected import CHART_DIR, MANIFESTS, find, load_yaml_dir, rules_of

from hack.build import build_helm
from kuberay import __version__
from kuberay.historyserver.server.config import parse_options

HS_DIR = MANIFESTS / "historyserver"
NAMESPACE = "ray-system"
SA = {"kind": "ServiceAccount", "name": "historyserver", "namespace": NAMESPACE}
READ_RAYCLUSTERS = [
    (("ray.io",), ("rayclusters",), ("get", "list", "watch")),
    (("",), ("services",), ("get",)),
    (("discovery.k8s.io",), ("endpointslices",), ("list",)),
]
READ_SECRETS = [(("",), ("secrets",), ("get",))]
HELM = build_helm.binary_path()
needs_helm = pytest.mark.skipif(not HELM.exists(), reason=f"no helm binary at {HELM}")


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    return [doc for ds in load_yaml_dir(HS_DIR).values() for doc in ds]


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    result: dict[str, Any] = container
    return result


def check_server_pod(deployment: dict[str, Any], service: dict[str, Any], sa: str) -> None:
    """What both the plain Deployment and the chart's must hold."""
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert labels["app.kubernetes.io/name"] == "kuberay-history-server"
    assert labels["app"] == "historyserver"
    assert service["spec"]["selector"].items() <= labels.items()
    assert pod["spec"]["serviceAccountName"] == sa
    container = _container(deployment)
    assert container["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "http"}
    assert "command" not in container  # the image's entrypoint is kuberay-history-server
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    [port] = service["spec"]["ports"]
    assert port["targetPort"] == "http" and port["port"] == 30080
    # the server accepts the flags as they are, with storage from the env
    options = parse_options(container["args"], {"STORAGE_BACKEND": "s3"})
    assert (options.listen_host, options.listen_port) == ("0.0.0.0", 8080)
    assert options.session_cache_size == 100
    assert options.session_cache_max_memory == 2 * 2**30


def test_kustomization_lists_the_server_s_objects() -> None:
    kustomization = yaml.safe_load((HS_DIR / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    assert listed == set(load_yaml_dir(HS_DIR)) - {"storage.example.yaml"}
    auth = yaml.safe_load((HS_DIR / "auth_token_mode" / "kustomization.yaml").read_text())
    assert set(auth["resources"]) == set(load_yaml_dir(HS_DIR / "auth_token_mode"))


def test_kuberay_s_names_and_rbac(docs: list[dict[str, Any]]) -> None:
    sa = find(docs, "ServiceAccount", "historyserver")
    assert sa["metadata"]["namespace"] == NAMESPACE
    role = find(docs, "ClusterRole", "raycluster-reader")
    assert rules_of(role) == READ_RAYCLUSTERS
    binding = find(docs, "ClusterRoleBinding", "raycluster-reader")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "raycluster-reader",
    }
    assert binding["subjects"] == [SA]
    for doc in docs:
        if doc["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
            assert doc["metadata"]["namespace"] == NAMESPACE, doc["metadata"]["name"]


def test_deployment_and_service(docs: list[dict[str, Any]]) -> None:
    deployment = find(docs, "Deployment", "historyserver-demo")
    service = find(docs, "Service", "kuberay-history-server")
    check_server_pod(deployment, service, "historyserver")
    container = _container(deployment)
    assert container["image"] == f"localhost/kuberay-python/history-server:{__version__}"
    assert container["envFrom"] == [
        {"configMapRef": {"name": "historyserver-storage"}},
        {"secretRef": {"name": "historyserver-storage", "optional": True}},
    ]


def test_storage_example_holds_kuberay_s_variables() -> None:
    docs = list(yaml.safe_load_all((HS_DIR / "storage.example.yaml").read_text()))
    config = find(docs, "ConfigMap", "historyserver-storage")["data"]
    secret = find(docs, "Secret", "historyserver-storage")["stringData"]
    assert config["STORAGE_BACKEND"] == "s3" and config["S3_BUCKET"] == "ray-historyserver"
    assert set(secret) == {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
    options = parse_options([], {**config, **secret})
    assert options.storage_backend == "s3"


def test_auth_token_mode_role_reads_secrets_only() -> None:
    docs = [d for ds in load_yaml_dir(HS_DIR / "auth_token_mode").values() for d in ds]
    role = find(docs, "Role", "historyserver-secret-reader")
    assert "namespace" not in role["metadata"]  # `kubectl apply -n <ns>` places it
    assert rules_of(role) == READ_SECRETS
    binding = find(docs, "RoleBinding", "historyserver-secret-reader")
    assert binding["roleRef"]["kind"] == "Role"
    assert binding["subjects"] == [SA]


def test_chart_values_are_off_by_default() -> None:
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    hs = values["historyServer"]
    assert hs["enabled"] is False
    assert hs["name"] == "kuberay-history-server"
    assert hs["image"] == {
        "repository": "localhost/kuberay-python/history-server",
        "tag": "",
        "pullPolicy": "IfNotPresent",
    }


# --- the chart, rendered --------------------------------------------------------------------
def render(values: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    values_file = tmp_path / "values.json"
    values_file.write_text(json.dumps(values))
    proc = subprocess.run(
        [str(HELM), "template", "kuberay", str(CHART_DIR), "-n", "ops", "-f", str(values_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _history_objects(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        o
        for o in objs
        if (o["metadata"].get("labels") or {}).get("app.kubernetes.io/component")
        == "history-server"
    ]


@needs_helm
def test_chart_renders_nothing_by_default(tmp_path: Path) -> None:
    objs = render({}, tmp_path)
    assert objs and _history_objects(objs) == []
    assert not [o for o in objs if "historyserver" in json.dumps(o)]


@needs_helm
def test_chart_renders_the_server_when_enabled(tmp_path: Path) -> None:
    values = {
        "historyServer": {
            "enabled": True,
            "storage": {"envFrom": [{"secretRef": {"name": "hs-storage"}}]},
            "extraArgs": ["--cluster-list-ttl=30s"],
        }
    }
    objs = render(values, tmp_path)
    hs = _history_objects(objs)
    assert sorted((o["kind"], o["metadata"]["name"]) for o in hs) == [
        ("ClusterRole", "raycluster-reader"),
        ("ClusterRoleBinding", "raycluster-reader"),
        ("Deployment", "kuberay-history-server"),
        ("Service", "kuberay-history-server"),
        ("ServiceAccount", "historyserver"),
    ]
    deployment = find(hs, "Deployment", "kuberay-history-server")
    check_server_pod(deployment, find(hs, "Service", "kuberay-history-server"), "historyserver")
    container = _container(deployment)
    assert container["image"] == f"localhost/kuberay-python/history-server:{__version__}"
    assert container["envFrom"] == [{"secretRef": {"name": "hs-storage"}}]
    assert container["args"][-1] == "--cluster-list-ttl=30s"
    assert rules_of(find(hs, "ClusterRole", "raycluster-reader")) == READ_RAYCLUSTERS
    binding = find(hs, "ClusterRoleBinding", "raycluster-reader")
    assert binding["subjects"] == [{**SA, "namespace": "ops"}]
    assert find(hs, "ServiceAccount", "historyserver")["metadata"]["namespace"] == "ops"
    # the operator's own objects are unchanged
    assert find(objs, "Deployment", "kuberay-operator")


@needs_helm
def test_chart_auth_token_mode_roles_per_namespace(tmp_path: Path) -> None:
    values = {
        "historyServer": {
            "enabled": True,
            "authTokenMode": {"enabled": True, "namespaces": ["team-a", "team-b"]},
            "serviceAccount": {"create": False, "name": "my-sa"},
            "rbac": {"create": True, "clusterRoleName": "hs-reader"},
        }
    }
    hs = _history_objects(render(values, tmp_path))
    roles = [o for o in hs if o["kind"] == "Role"]
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["team-a", "team-b"]
    for role in roles:
        assert rules_of(role) == READ_SECRETS
    bindings = [o for o in hs if o["kind"] == "RoleBinding"]
    assert len(bindings) == 2
    for binding in bindings:
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "my-sa", "namespace": "ops"}
        ]
    assert not [o for o in hs if o["kind"] == "ServiceAccount"]
    assert rules_of(find(hs, "ClusterRole", "hs-reader")) == READ_RAYCLUSTERS
    deployment = find(hs, "Deployment", "kuberay-history-server")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "my-sa"
