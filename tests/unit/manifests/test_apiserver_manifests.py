"""The API server's install manifests (manifests/apiserver, kustomize) and its chart
(manifests/helm/kuberay-apiserver): names, labels and selectors, the server accepting the
rendered flags, RBAC (none in caller mode; KubeRay's rules in service-account mode), TLS on
the listener, and KubeRay's values files still rendering. The chart cases need the helm
binary ``hack/build/build_helm.py`` builds; tests/integration/apiserver applies both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay import __version__
from kuberay.apiserver.options import CALLER, SERVICE_ACCOUNT, parse_options
from tests.unit.manifests.manifests_expected import (
    APISERVER_CHART_DIR,
    APISERVER_DIR,
    APISERVER_RULES,
    APISERVER_SERVICE_ACCESS_RULES,
    APISERVER_VALUE_PATHS,
    find,
    load_yaml_dir,
    rules_of,
)
from tests.unit.manifests.ray_cluster_chart_cases import helm, needs_helm

IMAGE = f"localhost/kuberay-python/apiserver:{__version__}"
NAMESPACE = "ray-system"
#: what the server's Service proxy route serves: never the server's own Service
KUBERAY_SERVICE_LABEL = ("app.kubernetes.io/name", "kuberay")
SERVER = "kuberay-apiserver"  # the Deployment's name (KubeRay's `name` value)
RBAC_KINDS = {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}


def _docs(directory: Path) -> list[dict[str, Any]]:
    return [d for ds in load_yaml_dir(directory).values() for d in ds]


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    result: dict[str, Any] = container
    return result


def check_server_pod(deployment: dict[str, Any], service: dict[str, Any]) -> None:
    """What the kustomize Deployment and the chart's must both hold."""
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    service_labels = service["metadata"].get("labels") or {}
    assert KUBERAY_SERVICE_LABEL not in service_labels.items()
    container = _container(deployment)
    assert "command" not in container  # the image's entrypoint is kuberay-apiserver
    [http] = [p for p in container["ports"] if p["name"] == "http"]
    assert http["containerPort"] == 8888
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
        assert container[probe]["httpGet"]["port"] == "http"
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["tmp"] == "/tmp"  # a read-only root file system keeps a writable /tmp


# --- kustomize ------------------------------------------------------------------------------
@pytest.mark.parametrize("sub", ["base", "service_account_mode"])
def test_kustomizations_list_their_files(sub: str) -> None:
    directory = APISERVER_DIR / sub
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    files = {r for r in kustomization["resources"] if r.endswith(".yaml")}
    assert files == set(load_yaml_dir(directory))
    top = yaml.safe_load((APISERVER_DIR / "kustomization.yaml").read_text())
    assert top["resources"] == ["base"]


def test_base_is_caller_mode_with_no_rights() -> None:
    docs = _docs(APISERVER_DIR / "base")
    assert sorted(d["kind"] for d in docs) == ["Deployment", "Service", "ServiceAccount"]
    for doc in docs:
        assert doc["metadata"]["name"] == "kuberay-apiserver"
        assert doc["metadata"]["namespace"] == NAMESPACE
    deployment = find(docs, "Deployment", "kuberay-apiserver")
    check_server_pod(deployment, find(docs, "Service", "kuberay-apiserver"))
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "kuberay-apiserver"
    container = _container(deployment)
    assert container["image"] == IMAGE
    options = parse_options(container["args"])
    assert (options.http_port, options.auth_mode, options.enable_v2) == (8888, CALLER, True)
    kustomization = yaml.safe_load((APISERVER_DIR / "base" / "kustomization.yaml").read_text())
    [image] = kustomization["images"]
    assert f"{image['newName']}:{image['newTag']}" == IMAGE


def test_service_account_mode_grants_kuberay_s_rules() -> None:
    docs = _docs(APISERVER_DIR / "service_account_mode")
    assert rules_of(find(docs, "ClusterRole", "kuberay-apiserver")) == APISERVER_RULES
    access = find(docs, "ClusterRole", "kuberay-apiserver-service-access")
    assert rules_of(access) == APISERVER_SERVICE_ACCESS_RULES
    for name in ("kuberay-apiserver", "kuberay-apiserver-service-access"):
        binding = find(docs, "ClusterRoleBinding", name)
        assert binding["roleRef"]["name"] == name
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "kuberay-apiserver", "namespace": NAMESPACE}
        ]
    # the patch turns the base's --auth-mode=caller (checked by its `test` op) around
    kustomization = yaml.safe_load(
        (APISERVER_DIR / "service_account_mode" / "kustomization.yaml").read_text()
    )
    [patch] = kustomization["patches"]
    ops = yaml.safe_load(patch["patch"])
    base = find(_docs(APISERVER_DIR / "base"), "Deployment", "kuberay-apiserver")
    index = int(ops[0]["path"].rsplit("/", 1)[1])
    assert _container(base)["args"][index] == ops[0]["value"] == "--auth-mode=caller"
    args = list(_container(base)["args"])
    args[index] = ops[1]["value"]
    assert parse_options(args).auth_mode == SERVICE_ACCOUNT


# --- the chart's values ---------------------------------------------------------------------
def _values() -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load((APISERVER_CHART_DIR / "values.yaml").read_text())
    return values


def test_chart_keeps_kuberay_s_value_names() -> None:
    values = _values()
    for path in APISERVER_VALUE_PATHS:
        node: Any = values
        for part in path.split("."):
            assert isinstance(node, dict) and part in node, path
            node = node[part]
    assert "security" not in values  # documented, unset: no proxy sidecar
    readme = (APISERVER_CHART_DIR / "README.md").read_text()
    assert "| security |  | `unset` |" in readme


def test_chart_defaults() -> None:
    values = _values()
    assert values["authMode"] == CALLER
    assert values["image"] == {
        "repository": "localhost/kuberay-python/apiserver",
        "tag": "",
        "pullPolicy": "IfNotPresent",
    }
    chart = yaml.safe_load((APISERVER_CHART_DIR / "Chart.yaml").read_text())
    assert chart["appVersion"] == __version__
    assert values["tls"] == {"enabled": False, "secretName": ""}


# --- the chart, rendered --------------------------------------------------------------------
def render(values: dict[str, Any], tmp_path: Path, namespace: str = "ops") -> list[dict[str, Any]]:
    """The chart's objects for ``values`` (release ``kuberay-apiserver``)."""
    values_file = tmp_path / "values.json"
    values_file.write_text(json.dumps(values))
    proc = helm(
        "template", "kuberay-apiserver", str(APISERVER_CHART_DIR),
        "-n", namespace, "-f", str(values_file),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def refused(values: dict[str, Any], tmp_path: Path) -> str:
    """helm's error for ``values`` (which must fail to render)."""
    values_file = tmp_path / "bad.json"
    values_file.write_text(json.dumps(values))
    proc = helm("template", "x", str(APISERVER_CHART_DIR), "-f", str(values_file))
    assert proc.returncode != 0
    return proc.stderr


@needs_helm
def test_chart_default_is_caller_mode_without_rbac(tmp_path: Path) -> None:
    objs = render({}, tmp_path)
    assert sorted(o["kind"] for o in objs) == ["Deployment", "Service", "ServiceAccount"]
    deployment = find(objs, "Deployment", "kuberay-apiserver")
    service = find(objs, "Service", "kuberay-apiserver-service")
    check_server_pod(deployment, service)
    # KubeRay's selector, so `helm upgrade` from KubeRay's chart keeps the Deployment
    assert deployment["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/component": "kuberay-apiserver",
        "app.kubernetes.io/name": "kuberay-apiserver",
    }
    container = _container(deployment)
    assert container["image"] == IMAGE
    assert container["name"] == "kuberay-apiserver-container"
    options = parse_options(container["args"])
    assert (options.http_port, options.auth_mode, options.tls_cert_file) == (8888, CALLER, "")
    assert service["metadata"]["annotations"]["prometheus.io/port"] == "8888"
    sa = find(objs, "ServiceAccount", "kuberay-apiserver")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == sa["metadata"]["name"]
    # rbacEnable (true) changes nothing in caller mode
    assert not [o for o in render({"rbacEnable": True}, tmp_path) if o["kind"] in RBAC_KINDS]


@needs_helm
@pytest.mark.parametrize("v2", [True, False], ids=["v2", "no-v2"])
def test_chart_service_account_mode_cluster_roles(tmp_path: Path, v2: bool) -> None:
    objs = render({"authMode": SERVICE_ACCOUNT, "enableAPIServerV2": v2}, tmp_path)
    expected = {"kuberay-apiserver": APISERVER_RULES}
    if v2:
        expected["kuberay-apiserver-service-access"] = APISERVER_SERVICE_ACCESS_RULES
    roles = {o["metadata"]["name"]: rules_of(o) for o in objs if o["kind"] == "ClusterRole"}
    assert roles == expected
    bindings = [o for o in objs if o["kind"] == "ClusterRoleBinding"]
    assert sorted(b["roleRef"]["name"] for b in bindings) == sorted(expected)
    for binding in bindings:
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "kuberay-apiserver", "namespace": "ops"}
        ]
    assert not [o for o in objs if o["kind"] in ("Role", "RoleBinding")]
    args = _container(find(objs, "Deployment", "kuberay-apiserver"))["args"]
    options = parse_options(args)
    assert (options.auth_mode, options.enable_v2) == (SERVICE_ACCOUNT, v2)
    off = render({"authMode": SERVICE_ACCOUNT, "rbacEnable": False}, tmp_path)
    assert not [o for o in off if o["kind"] in RBAC_KINDS]


@needs_helm
@pytest.mark.parametrize("single", [False, True], ids=["cluster", "one-namespace"])
def test_chart_dashboard_pod_reader_grants_only_pods_list(tmp_path: Path, single: bool) -> None:
    values = {"dashboardPodReader": True, "singleNamespaceInstall": single}
    objs = [o for o in render(values, tmp_path) if o["kind"] in RBAC_KINDS]
    role_kind = "Role" if single else "ClusterRole"
    [role] = [o for o in objs if o["kind"] == role_kind]
    assert rules_of(role) == [(("",), ("pods",), ("list",))]
    [binding] = [o for o in objs if o["kind"] == f"{role_kind}Binding"]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "kuberay-apiserver", "namespace": "ops"}
    ]
    assert len(objs) == 2
    off = {**values, "rbacEnable": False}
    assert not [o for o in render(off, tmp_path) if o["kind"] in RBAC_KINDS]


@needs_helm
def test_chart_single_namespace_install_uses_roles(tmp_path: Path) -> None:
    objs = render({"authMode": SERVICE_ACCOUNT, "singleNamespaceInstall": True}, tmp_path)
    assert not [o for o in objs if o["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    roles = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Role"}
    assert rules_of(roles["kuberay-apiserver"]) == APISERVER_RULES
    assert rules_of(roles["kuberay-apiserver-service-access"]) == APISERVER_SERVICE_ACCESS_RULES
    for obj in objs:
        if obj["kind"] in ("Role", "RoleBinding"):
            assert obj["metadata"]["namespace"] == "ops"
    bindings = [o for o in objs if o["kind"] == "RoleBinding"]
    assert {b["roleRef"]["kind"] for b in bindings} == {"Role"}
    assert len(bindings) == 2


@needs_helm
def test_chart_tls_mounts_the_secret_and_passes_the_files(tmp_path: Path) -> None:
    objs = render({"tls": {"enabled": True, "secretName": "api-cert"}}, tmp_path)
    deployment = find(objs, "Deployment", "kuberay-apiserver")
    container = _container(deployment)
    options = parse_options(container["args"])
    mount = next(m for m in container["volumeMounts"] if m["name"] == "tls")
    assert mount["readOnly"] is True
    assert options.tls_cert_file == f"{mount['mountPath']}/tls.crt"
    assert options.tls_private_key_file == f"{mount['mountPath']}/tls.key"
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["tls"]["secret"] == {"secretName": "api-cert"}
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"]["scheme"] == "HTTPS"
    service = find(objs, "Service", "kuberay-apiserver-service")
    assert service["metadata"]["annotations"]["prometheus.io/scheme"] == "https"
    # no secretName: <fullname>-tls
    deployment = find(render({"tls": {"enabled": True}}, tmp_path), "Deployment", SERVER)
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["tls"]["secret"] == {"secretName": "kuberay-apiserver-tls"}


@needs_helm
def test_chart_flags_from_values(tmp_path: Path) -> None:
    values = {
        "cors": {"allowOrigin": "https://ui.example.com"},
        "historyServerUrl": "http://kuberay-history-server.ray-system:30080/",
        "containerPort": [{"name": "http", "containerPort": 9000, "protocol": "TCP"}],
        "extraArgs": ["--log-format=console"],
    }
    container = _container(find(render(values, tmp_path), "Deployment", "kuberay-apiserver"))
    options = parse_options(container["args"])
    assert options.cors_allow_origin == "https://ui.example.com"
    assert options.history_server_url == "http://kuberay-history-server.ray-system:30080"
    assert options.http_port == 9000
    assert options.log_format == "console"


@needs_helm
def test_a_kuberay_values_file_renders(tmp_path: Path) -> None:
    """KubeRay's chart's values as its users set them: the gRPC port and Service port, CORS,
    the static-token proxy (ignored in caller mode), an Ingress and a Route."""
    values = {
        "image": {"repository": "registry.example.com/kuberay-python/apiserver", "tag": "0.1.0"},
        "cors": {"allowOrigin": "*"},
        "containerPort": [
            {"name": "http", "containerPort": 8888, "protocol": "TCP"},
            {"name": "grpc", "containerPort": 8887, "protocol": "TCP"},
        ],
        "service": {
            "type": "NodePort",
            "ports": [
                {"name": "http", "port": 8888, "targetPort": 8888, "nodePort": 31888},
                {"name": "rpc", "protocol": "TCP", "port": 8887, "targetPort": 8887},
            ],
        },
        "security": {
            "proxy": {"repository": "example/security-proxy", "tag": "nightly"},
            "env": {"HTTP_LOCAL_PORT": 8988, "SECURITY_TOKEN": "12345"},
        },
        "ingress": {
            "enabled": True,
            "className": "nginx",
            "hosts": [{"host": "api.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}],
        },
        "route": {"enabled": True},
        "sidecarContainers": [{"name": "log-shipper", "image": "example/shipper:1"}],
    }
    objs = render(values, tmp_path)
    deployment = find(objs, "Deployment", "kuberay-apiserver")
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["kuberay-apiserver-container", "log-shipper"]
    assert "security-proxy" not in json.dumps(objs)
    assert containers[0]["image"] == "registry.example.com/kuberay-python/apiserver:0.1.0"
    assert parse_options(containers[0]["args"]).cors_allow_origin == "*"
    service = find(objs, "Service", "kuberay-apiserver-service")
    assert service["spec"]["ports"][0]["nodePort"] == 31888
    ingress = find(objs, "Ingress", "kuberay-apiserver")
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "kuberay-apiserver-service", "port": {"number": 8888}}
    route = find(objs, "Route", "kuberay-apiserver")
    assert route["spec"]["to"]["name"] == "kuberay-apiserver-service"


@needs_helm
@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"authMode": "impersonate"}, "/authMode"),
        (
            {"authMode": SERVICE_ACCOUNT, "security": {"env": {"SECURITY_TOKEN": "x"}}},
            "security (KubeRay's static-token proxy sidecar) is not supported",
        ),
        ({"containerPort": [{"name": "web", "containerPort": 80}]}, "an entry named http"),
        ({"image": {"repository": ""}}, "/image/repository"),
    ],
    ids=["auth-mode", "security-with-service-account", "no-http-port", "no-image"],
)
def test_chart_refuses(tmp_path: Path, values: dict[str, Any], needle: str) -> None:
    assert needle in refused(values, tmp_path)


@needs_helm
def test_notes_tell_how_to_call_it() -> None:
    proc = helm(
        "install", "api", str(APISERVER_CHART_DIR), "-n", "team-a", "--dry-run=client",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    notes = proc.stdout.split("NOTES:", 1)[1]
    assert "port-forward service/api-kuberay-apiserver-service 8888:8888" in notes
    assert "kubectl create token" in notes and "Authorization: Bearer" in notes
    assert "set tls.enabled" in notes
    proc = helm(
        "install", "api", str(APISERVER_CHART_DIR), "-n", "team-a", "--dry-run=client",
        "--set", "authMode=service-account",
    )  # fmt: skip
    notes = proc.stdout.split("NOTES:", 1)[1]
    assert "WARNING: authMode service-account" in notes and "kubectl create token" not in notes


@needs_helm
def test_helm_lint() -> None:
    for extra in ([], ["--set", "authMode=service-account", "--set", "tls.enabled=true"]):
        proc = helm("lint", "--strict", str(APISERVER_CHART_DIR), *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
