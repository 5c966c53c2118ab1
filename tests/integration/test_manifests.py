"""Install manifests on a real kube-apiserver.

* manifests/rbac (cluster-wide and namespaced variants) and manifests/operator are applied
  with a server-side dry run (``dryRun=All``: fully validated and admitted, nothing stored);
* the Helm chart (manifests/helm/kuberay-operator) is rendered with ``helm template`` for the
  default values and a set of interesting ones; each rendering is checked (objects, RBAC
  rules against KubeRay's, operator arguments accepted by our own flag/config parser, webhook
  configuration equal to the one :mod:`kuberay.webhooks` builds) and dry-run applied.

Namespaced objects are moved into fresh namespaces; cluster-scoped ones are never stored, so
the shared apiserver is left as it was. Kinds the bare apiserver does not serve
(cert-manager's Issuer/Certificate, prometheus-operator's ServiceMonitor) are only rendered.

The chart tests need a helm binary built by ``python hack/build/build_helm.py`` (about 4.5 minutes
on a cold Go cache); without it they are skipped.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from hack.build import build_helm
from kuberay.cmd.config import OperatorConfig, load_config_file, parse_config
from kuberay.featuregates.kuberay_gates import new_feature_gate
from kuberay.kube import Client, NotFound
from kuberay.testing.crds import install_crds
from kuberay.webhooks import validating_webhook_configuration
from tests.unit.manifests.manifests_expected import (
    CHART_DIR,
    DEFAULT_ARGS,
    DEFAULT_FEATURE_GATES_ARG,
    KUBERNETES_WAS_RULE,
    LEADER_ELECTION_RULES,
    MANIFESTS,
    NAMESPACED_RULES,
    OPERATOR_DIR,
    OPERATOR_RULES,
    RBAC_DIR,
    SCHEDULER_PLUGINS_RULE,
    VOLCANO_RULE,
    find,
    load_yaml_dir,
    rules_of,
)

HELM = build_helm.binary_path()
needs_helm = pytest.mark.skipif(
    not HELM.exists(), reason=f"no helm binary at {HELM}: run `python hack/build/build_helm.py`"
)
FIELD_MANAGER = "kuberay-tests"
RELEASE = "kuberay"
USER_ROLES = {
    f"{kind}-{role}-role"
    for kind in ("raycluster", "rayjob", "rayservice", "raycronjob")
    for role in ("editor", "viewer")
}
CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n"


# --- fixtures -------------------------------------------------------------------------------
@pytest.fixture
async def namespaces(kclient: Client) -> AsyncIterator[Callable[[], Any]]:
    """``await new()`` makes a fresh namespace; all are deleted (not awaited) afterwards."""
    made: list[str] = []

    async def new() -> str:
        name = f"t-mf-{uuid.uuid4().hex[:8]}"
        await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        made.append(name)
        return name

    yield new
    for name in made:
        with contextlib.suppress(Exception):
            await kclient.delete("v1", "Namespace", name)


async def dry_run_apply(client: Client, obj: dict[str, Any]) -> dict[str, Any] | None:
    """Server-side apply ``obj`` with ``dryRun=All``; None if its kind is not served here."""
    try:
        info = await client.resource(obj["apiVersion"], obj["kind"])
    except NotFound:
        return None
    meta = obj["metadata"]
    namespace = meta.get("namespace") if info.namespaced else None
    if info.namespaced:
        assert namespace, f"{obj['kind']} {meta['name']} has no namespace"
    result: dict[str, Any] = await client.request(
        "PATCH",
        info.path(namespace, meta["name"]),
        verb="patch",
        params={"dryRun": "All", "fieldManager": FIELD_MANAGER, "force": "true"},
        body=orjson.dumps(obj),
        content_type="application/apply-patch+yaml",
    )
    assert result["kind"] == obj["kind"]
    assert result["metadata"]["name"] == meta["name"]
    return result


async def dry_run_all(client: Client, objs: list[dict[str, Any]]) -> set[str]:
    """Dry-run apply every object; the kinds that were applied."""
    applied: set[str] = set()
    for obj in objs:
        if await dry_run_apply(client, obj) is not None:
            applied.add(obj["kind"])
    return applied


def _move(
    objs: list[dict[str, Any]], namespace: str, old: str = "ray-system"
) -> list[dict[str, Any]]:
    """A copy of ``objs`` living in ``namespace`` instead of ``old``."""
    moved = copy.deepcopy(objs)
    for obj in moved:
        meta = obj["metadata"]
        if meta.get("namespace") == old:
            meta["namespace"] = namespace
        if obj["kind"] == "Namespace" and meta["name"] == old:
            meta["name"] = namespace
        for subject in obj.get("subjects") or ():
            if subject.get("namespace") == old:
                subject["namespace"] = namespace
    return moved


# --- plain manifests ------------------------------------------------------------------------
async def test_rbac_and_operator_manifests_dry_run(
    kclient: Client, namespaces: Callable[[], Any]
) -> None:
    ns = await namespaces()
    rbac = [d for ds in load_yaml_dir(RBAC_DIR).values() for d in ds]
    operator = [d for ds in load_yaml_dir(OPERATOR_DIR).values() for d in ds]
    applied = await dry_run_all(kclient, _move(rbac + operator, ns))
    assert applied == {
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Namespace",
        "Deployment",
        "Service",
    }
    # what the apiserver would store for the ClusterRole: exactly the rules we wrote
    stored = await dry_run_apply(kclient, find(rbac, "ClusterRole", "kuberay-operator"))
    assert stored is not None
    assert rules_of(stored) == OPERATOR_RULES


async def test_namespaced_rbac_dry_run(kclient: Client, namespaces: Callable[[], Any]) -> None:
    ns = await namespaces()
    namespaced = [d for ds in load_yaml_dir(RBAC_DIR / "namespaced").values() for d in ds]
    shared = (
        "service_account.yaml",
        "leader_election_role.yaml",
        "leader_election_role_binding.yaml",
    )
    base = [d for name, ds in load_yaml_dir(RBAC_DIR).items() if name in shared for d in ds]
    applied = await dry_run_all(kclient, _move(namespaced + base, ns))
    assert applied == {"ServiceAccount", "Role", "RoleBinding"}


# --- helm -----------------------------------------------------------------------------------
def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=120)


def render(
    values: dict[str, Any], namespace: str, tmp_path: Path, *extra: str
) -> list[dict[str, Any]]:
    values_file = tmp_path / f"values-{uuid.uuid4().hex[:6]}.yaml"
    values_file.write_text(json.dumps(values))
    proc = helm(
        "template",
        RELEASE,
        str(CHART_DIR),
        "--namespace",
        namespace,
        "-f",
        str(values_file),
        *extra,
    )
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _names(objs: list[dict[str, Any]], kind: str) -> set[str]:
    return {o["metadata"]["name"] for o in objs if o["kind"] == kind}


def _container(objs: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = find(objs, "Deployment", "kuberay-operator")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    result: dict[str, Any] = container
    return result


def _parse_args(args: list[str], tmp_path: Path, objs: list[dict[str, Any]]) -> OperatorConfig:
    """Run the rendered arguments through the operator's own parser (a --config file is taken
    from the rendered ConfigMap)."""
    if "--config" in args:
        config_map = find(objs, "ConfigMap", "kuberay-operator-config")
        path = tmp_path / "config.yaml"
        path.write_text(config_map["data"]["config.yaml"])
        args = [str(path) if a == "/etc/kuberay/config.yaml" else a for a in args]
    cfg, warnings = parse_config(args, new_feature_gate())
    assert warnings == []
    return cfg


@needs_helm
def test_helm_lint() -> None:
    for extra in ([], ["--set", "webhook.enabled=true", "--set", "webhook.caBundle=QUJD"]):
        proc = helm("lint", "--strict", str(CHART_DIR), *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_helm
def test_helm_crds_are_the_generated_ones(tmp_path: Path) -> None:
    objs = render({}, "default", tmp_path, "--include-crds")
    crds = {o["metadata"]["name"]: o for o in objs if o["kind"] == "CustomResourceDefinition"}
    generated = {}
    for path in (MANIFESTS / "crds").glob("ray.io_*.yaml"):  # not kustomization.yaml
        doc = yaml.safe_load(path.read_text())
        generated[doc["metadata"]["name"]] = doc
    assert crds == generated


@needs_helm
async def test_helm_default_values(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path
) -> None:
    ns = await namespaces()
    objs = render({}, ns, tmp_path)
    kinds = sorted({o["kind"] for o in objs})
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "Role",
        "RoleBinding",
        "Service",
        "ServiceAccount",
    ]
    assert _names(objs, "ClusterRole") == {"kuberay-operator"} | USER_ROLES
    assert rules_of(find(objs, "ClusterRole", "kuberay-operator")) == OPERATOR_RULES
    leader = find(objs, "Role", "kuberay-operator-leader-election")
    assert leader["metadata"]["namespace"] == ns
    assert rules_of(leader) == LEADER_ELECTION_RULES
    binding = find(objs, "ClusterRoleBinding", "kuberay-operator")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "kuberay-operator", "namespace": ns}
    ]
    container = _container(objs)
    assert container["args"] == DEFAULT_ARGS
    assert container["command"] == ["kuberay-operator"]
    assert "env" not in container
    cfg = _parse_args(container["args"], tmp_path, objs)
    assert cfg.watch_namespaces == []
    service = find(objs, "Service", "kuberay-operator")
    labels = find(objs, "Deployment", "kuberay-operator")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert await dry_run_all(kclient, objs) == set(kinds)


@needs_helm
@pytest.mark.parametrize("watch", [None, 2], ids=["release-namespace", "two-namespaces"])
async def test_helm_single_namespace_install(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path, watch: int | None
) -> None:
    ns = await namespaces()
    values: dict[str, Any] = {"singleNamespaceInstall": True}
    watched = [ns]
    if watch:
        watched = [await namespaces() for _ in range(watch)]
        values["watchNamespace"] = watched
    objs = render(values, ns, tmp_path)
    assert _names(objs, "ClusterRole") == set()
    assert _names(objs, "ClusterRoleBinding") == set()
    roles = [o for o in objs if o["kind"] == "Role" and o["metadata"]["name"] == "kuberay-operator"]
    assert sorted(r["metadata"]["namespace"] for r in roles) == sorted(watched)
    for role in roles:
        assert rules_of(role) == NAMESPACED_RULES
    bindings = [
        o
        for o in objs
        if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "kuberay-operator"
    ]
    assert sorted(b["metadata"]["namespace"] for b in bindings) == sorted(watched)
    for binding in bindings:
        assert binding["subjects"][0]["namespace"] == ns
    assert find(objs, "Role", "kuberay-operator-leader-election")["metadata"]["namespace"] == ns
    args = _container(objs)["args"]
    assert args[:2] == ["--watch-namespace", ",".join(watched)]
    assert _parse_args(args, tmp_path, objs).watch_namespaces == watched
    await dry_run_all(kclient, objs)
    # crNamespacedRbacEnable=false: only the leader election Role remains
    objs = render({**values, "crNamespacedRbacEnable": False}, ns, tmp_path)
    assert _names(objs, "Role") == {"kuberay-operator-leader-election"}


@needs_helm
async def test_helm_feature_gates(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path
) -> None:
    ns = await namespaces()
    gates = [
        {"name": "RayCronJob", "enabled": True},
        {"name": "RayClusterNetworkPolicy", "enabled": True},
        {"name": "KubernetesWAS", "enabled": True},
    ]
    objs = render({"featureGates": gates}, ns, tmp_path)
    args = _container(objs)["args"]
    assert (
        args[-1]
        == "--feature-gates=RayCronJob=true,RayClusterNetworkPolicy=true,KubernetesWAS=true"
    )
    gate = new_feature_gate()
    parse_config(args, gate)
    assert gate.enabled("RayCronJob") and gate.enabled("KubernetesWAS")
    rules = rules_of(find(objs, "ClusterRole", "kuberay-operator"))
    assert rules == [*OPERATOR_RULES, KUBERNETES_WAS_RULE]
    await dry_run_all(kclient, objs)
    # no gates at all: no --feature-gates argument
    assert not any(
        a.startswith("--feature-gates")
        for a in _container(render({"featureGates": []}, ns, tmp_path))["args"]
    )


@needs_helm
@pytest.mark.parametrize(
    ("batch", "arg", "extra_rules"),
    [
        ({"name": "volcano"}, "--batch-scheduler=volcano", [VOLCANO_RULE]),
        (
            {"name": "scheduler-plugins"},
            "--batch-scheduler=scheduler-plugins",
            [SCHEDULER_PLUGINS_RULE],
        ),
        ({"name": "yunikorn"}, "--batch-scheduler=yunikorn", []),
        # the deprecated switch means volcano; KubeRay's chart then adds both PodGroup rules
        ({"enabled": True}, "--enable-batch-scheduler", [VOLCANO_RULE, SCHEDULER_PLUGINS_RULE]),
    ],
    ids=["volcano", "scheduler-plugins", "yunikorn", "deprecated-enabled"],
)
async def test_helm_batch_scheduler(
    kclient: Client,
    namespaces: Callable[[], Any],
    tmp_path: Path,
    batch: dict[str, Any],
    arg: str,
    extra_rules: list[Any],
) -> None:
    ns = await namespaces()
    objs = render({"batchScheduler": batch}, ns, tmp_path)
    args = _container(objs)["args"]
    assert args[0] == arg
    cfg = _parse_args(args, tmp_path, objs)
    assert cfg.batch_scheduler == batch.get("name", "volcano")
    assert rules_of(find(objs, "ClusterRole", "kuberay-operator")) == OPERATOR_RULES + extra_rules
    await dry_run_all(kclient, objs)


@needs_helm
async def test_helm_configuration_file(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path
) -> None:
    ns = await namespaces()
    values = {
        "configuration": {
            "enabled": True,
            "defaultContainerEnvs": [{"name": "RAY_enable_open_telemetry", "value": "true"}],
            "defaultPodAnnotations": {"prometheus.io/scrape": "true"},
            "defaultPodLabels": {"team": "ml"},
            "headSidecarContainers": [{"name": "fluentbit", "image": "fluent/fluent-bit:1.9"}],
        },
        "watchNamespace": ["ns-a", "ns-b"],
        "batchScheduler": {"name": "yunikorn"},
        "kubeClient": {"qps": 50.5, "burst": 80},
        "reconcileConcurrency": 3,
        "useKubernetesProxy": True,
        "logging": {"baseDir": "/var/log/kuberay", "fileName": "operator.log"},
    }
    objs = render(values, ns, tmp_path)
    container = _container(objs)
    assert container["args"] == ["--config", "/etc/kuberay/config.yaml", DEFAULT_FEATURE_GATES_ARG]
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["operator-config"] == {
        "name": "operator-config",
        "mountPath": "/etc/kuberay",
        "readOnly": True,
    }
    assert mounts["kuberay-logs"]["mountPath"] == "/var/log/kuberay"
    volumes = {
        v["name"]: v
        for v in find(objs, "Deployment", "kuberay-operator")["spec"]["template"]["spec"]["volumes"]
    }
    assert volumes["operator-config"]["configMap"] == {"name": "kuberay-operator-config"}
    assert volumes["kuberay-logs"]["emptyDir"] == {}
    path = tmp_path / "config.yaml"
    path.write_text(find(objs, "ConfigMap", "kuberay-operator-config")["data"]["config.yaml"])
    cfg, warnings = load_config_file(str(path))
    assert warnings == []
    assert cfg.watch_namespaces == ["ns-a", "ns-b"]
    assert (cfg.qps, cfg.burst, cfg.reconcile_concurrency) == (50.5, 80, 3)
    assert cfg.use_kubernetes_proxy is True
    assert cfg.batch_scheduler == "yunikorn"
    assert cfg.log_file_path == "/var/log/kuberay/operator.log"
    assert cfg.enable_leader_election is True and cfg.enable_metrics is True
    assert cfg.default_container_envs == values["configuration"]["defaultContainerEnvs"]
    assert cfg.default_pod_annotations == {"prometheus.io/scrape": "true"}
    assert cfg.default_pod_labels == {"team": "ml"}
    assert cfg.head_sidecar_containers == values["configuration"]["headSidecarContainers"]
    _parse_args(container["args"], tmp_path, objs)
    assert "ConfigMap" in await dry_run_all(kclient, objs)


@needs_helm
async def test_helm_webhook_with_ca_bundle(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path
) -> None:
    ns = await namespaces()
    ca = base64.b64encode(CA_PEM).decode()
    values = {
        "webhook": {
            "enabled": True,
            "caBundle": ca,
            "namespaceSelector": {"matchLabels": {"ray": "yes"}},
        },
        "env": [{"name": "ENABLE_PROBES_INJECTION", "value": "false"}],
    }
    objs = render(values, ns, tmp_path)
    container = _container(objs)
    assert container["env"] == [
        {"name": "ENABLE_PROBES_INJECTION", "value": "false"},
        {"name": "ENABLE_WEBHOOKS", "value": "true"},
    ]
    assert {"name": "webhook", "containerPort": 9443, "protocol": "TCP"} in container["ports"]
    assert container["volumeMounts"] == [
        {
            "name": "webhook-certs",
            "mountPath": "/tmp/k8s-webhook-server/serving-certs",
            "readOnly": True,
        }
    ]
    pod = find(objs, "Deployment", "kuberay-operator")["spec"]["template"]["spec"]
    assert pod["volumes"] == [
        {"name": "webhook-certs", "secret": {"secretName": "kuberay-operator-webhook-cert"}}
    ]
    service = find(objs, "Service", "kuberay-operator-webhook")
    assert service["spec"]["ports"] == [
        {"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
    ]
    vwc = find(objs, "ValidatingWebhookConfiguration", "kuberay-operator-validating-webhook")
    expected = validating_webhook_configuration(
        "kuberay-operator-webhook",
        ns,
        CA_PEM,
        timeout_seconds=10,
        namespace_selector={"matchLabels": {"ray": "yes"}},
    )
    assert vwc["webhooks"] == expected["webhooks"]
    applied = await dry_run_all(kclient, objs)
    assert {"ValidatingWebhookConfiguration", "Service", "Deployment"} <= applied


@needs_helm
async def test_helm_webhook_with_cert_manager(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path
) -> None:
    ns = await namespaces()
    values = {"webhook": {"enabled": True, "certManager": {"enabled": True}}}
    objs = render(values, ns, tmp_path)
    vwc = find(objs, "ValidatingWebhookConfiguration", "kuberay-operator-validating-webhook")
    assert vwc["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": f"{ns}/kuberay-operator-serving-cert"
    }
    assert all("caBundle" not in w["clientConfig"] for w in vwc["webhooks"])
    certificate = find(objs, "Certificate", "kuberay-operator-serving-cert")
    assert certificate["spec"]["secretName"] == "kuberay-operator-webhook-cert"
    assert certificate["spec"]["dnsNames"][0] == f"kuberay-operator-webhook.{ns}.svc"
    assert certificate["spec"]["issuerRef"]["name"] == "kuberay-operator-selfsigned-issuer"
    assert find(objs, "Issuer", "kuberay-operator-selfsigned-issuer")["spec"] == {"selfSigned": {}}
    # cert-manager's own CRDs (from its Go module): its Certificate and Issuer schemas judge
    # the chart's objects (server-side dry run), whatever other tests installed before.
    await install_crds(kclient, directory=_cert_manager_crd_dir())
    applied = await dry_run_all(kclient, objs)
    assert {"ValidatingWebhookConfiguration", "Certificate", "Issuer"} <= applied


def _cert_manager_crd_dir() -> Path:
    from hack.build import fetch_crds

    return Path(fetch_crds.fetch("cert-manager"))


@needs_helm
async def test_helm_without_rbac_and_with_extras(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path
) -> None:
    ns = await namespaces()
    values = {
        "rbacEnable": False,
        "serviceAccount": {"create": False, "name": "my-operator"},
        "logging": {"baseDir": "/logs", "fileName": "op.log", "sizeLimit": "1Gi"},
        "metrics": {"enabled": False, "serviceMonitor": {"enabled": True}},
        "leaderElectionEnabled": False,
        "labels": {"team": "ml"},
        "annotations": {"a": "b"},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "priorityClassName": "system-cluster-critical",
        "imagePullSecrets": [{"name": "regcred"}],
        "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "500m", "memory": "256Mi"}},
    }
    objs = render(values, ns, tmp_path)
    assert sorted({o["kind"] for o in objs}) == ["Deployment", "Service", "ServiceMonitor"]
    deployment = find(objs, "Deployment", "kuberay-operator")
    assert deployment["metadata"]["labels"]["team"] == "ml"
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["labels"]["team"] == "ml"
    assert pod["metadata"]["annotations"] == {"a": "b"}
    assert pod["spec"]["serviceAccountName"] == "my-operator"
    assert pod["spec"]["volumes"] == [{"name": "kuberay-logs", "emptyDir": {"sizeLimit": "1Gi"}}]
    assert pod["spec"]["priorityClassName"] == "system-cluster-critical"
    args = _container(objs)["args"]
    assert args[:2] == ["--log-file-path", "/logs/op.log"]
    assert "--enable-leader-election=false" in args and "--enable-metrics=false" in args
    cfg = _parse_args(args, tmp_path, objs)
    assert cfg.log_file_path == "/logs/op.log"
    assert cfg.enable_leader_election is False
    assert await dry_run_all(kclient, objs) == {"Deployment", "Service"}


@needs_helm
@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"reconcileConcurrency": 0}, "reconcileConcurrency must be a positive integer"),
        ({"kubeClient": {"qps": "fast"}}, "kubeClient.qps"),
        ({"kubeClient": {"burst": -1}}, "kubeClient.burst"),
        ({"webhook": {"enabled": True}}, "webhook.caBundle"),
    ],
    ids=["concurrency", "qps", "burst", "webhook-without-ca"],
)
def test_helm_rejects_bad_values(tmp_path: Path, values: dict[str, Any], needle: str) -> None:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(json.dumps(values))
    proc = helm("template", RELEASE, str(CHART_DIR), "-f", str(values_file))
    assert proc.returncode != 0
    assert needle in proc.stderr
