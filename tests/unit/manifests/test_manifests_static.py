"""The install manifests (manifests/rbac, manifests/operator) and the chart's static parts,
checked without a cluster or helm: RBAC rules equal KubeRay's (plus our documented additions),
the Deployment's arguments are KubeRay's chart defaults and our operator accepts them, the
chart keeps KubeRay's value names."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from manifests_expected import (
    CHART_DIR,
    DEFAULT_ARGS,
    KUBERAY_RULES,
    KUBERAY_VALUE_PATHS,
    LEADER_ELECTION_RULES,
    NAMESPACED_RULES,
    OPERATOR_DIR,
    OPERATOR_RULES,
    OUR_ADDITIONS,
    RBAC_DIR,
    find,
    load_yaml_dir,
    normalized,
    rules_of,
)

from kuberay.cmd.config import parse_config
from kuberay.controllers.nodeevents.setup import NODE_EVENT_SCOPE
from kuberay.featuregates.kuberay_gates import new_feature_gate

NAMESPACE = "ray-system"
SA = {"kind": "ServiceAccount", "name": "kuberay-operator", "namespace": NAMESPACE}


@pytest.fixture(scope="module")
def rbac() -> list[dict[str, Any]]:
    return [doc for docs in load_yaml_dir(RBAC_DIR).values() for doc in docs]


@pytest.fixture(scope="module")
def operator() -> list[dict[str, Any]]:
    return [doc for docs in load_yaml_dir(OPERATOR_DIR).values() for doc in docs]


def test_expected_lists_are_consistent() -> None:
    assert normalized(KUBERAY_RULES) == KUBERAY_RULES  # written sorted, as KubeRay's
    assert len(KUBERAY_RULES) == 25
    assert not set(OUR_ADDITIONS) & set(KUBERAY_RULES)


def test_cluster_role_is_kuberays_plus_our_additions(rbac: list[dict[str, Any]]) -> None:
    role = find(rbac, "ClusterRole", "kuberay-operator")
    assert rules_of(role) == OPERATOR_RULES


def test_namespaced_role_has_the_same_rules() -> None:
    docs = [d for ds in load_yaml_dir(RBAC_DIR / "namespaced").values() for d in ds]
    role = find(docs, "Role", "kuberay-operator")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert rules_of(role) == NAMESPACED_RULES
    binding = find(docs, "RoleBinding", "kuberay-operator")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "kuberay-operator",
    }
    assert binding["subjects"] == [SA]


def test_node_event_forwarder_reads_events_where_it_watches_them() -> None:
    """The opt-in forwarder's RBAC: get/list/watch core Events in each namespace its cache
    watches, nothing more, bound to the operator's ServiceAccount."""
    docs = [d for ds in load_yaml_dir(RBAC_DIR / "node_event_forwarder").values() for d in ds]
    name = "kuberay-operator-node-event-forwarder"
    roles = {d["metadata"]["namespace"]: rules_of(d) for d in docs if d["kind"] == "Role"}
    assert set(roles) == set(NODE_EVENT_SCOPE.namespaces or ())
    assert all(r == [(("",), ("events",), ("get", "list", "watch"))] for r in roles.values())
    bindings = [d for d in docs if d["kind"] == "RoleBinding"]
    assert {b["metadata"]["namespace"] for b in bindings} == set(roles)
    for binding in bindings:
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": name,
        }
        assert binding["subjects"] == [SA]


def test_bindings_and_service_account(rbac: list[dict[str, Any]]) -> None:
    sa = find(rbac, "ServiceAccount", "kuberay-operator")
    assert sa["metadata"]["namespace"] == NAMESPACE
    crb = find(rbac, "ClusterRoleBinding", "kuberay-operator")
    assert crb["roleRef"]["kind"] == "ClusterRole"
    assert crb["roleRef"]["name"] == "kuberay-operator"
    assert crb["subjects"] == [SA]
    le = find(rbac, "Role", "kuberay-operator-leader-election")
    assert le["metadata"]["namespace"] == NAMESPACE
    assert rules_of(le) == LEADER_ELECTION_RULES
    leb = find(rbac, "RoleBinding", "kuberay-operator-leader-election")
    assert leb["roleRef"]["name"] == "kuberay-operator-leader-election"
    assert leb["subjects"] == [SA]


@pytest.mark.parametrize("kind", ["raycluster", "rayjob", "rayservice", "raycronjob"])
def test_editor_and_viewer_roles(rbac: list[dict[str, Any]], kind: str) -> None:
    editor = find(rbac, "ClusterRole", f"{kind}-editor-role")
    assert rules_of(editor) == [
        (
            ("ray.io",),
            (f"{kind}s",),
            ("create", "delete", "get", "list", "patch", "update", "watch"),
        ),
        (("ray.io",), (f"{kind}s/status",), ("get",)),
    ]
    viewer = find(rbac, "ClusterRole", f"{kind}-viewer-role")
    assert rules_of(viewer) == [
        (("ray.io",), (f"{kind}s",), ("get", "list", "watch")),
        (("ray.io",), (f"{kind}s/status",), ("get",)),
    ]


@pytest.mark.parametrize(
    "directory",
    [RBAC_DIR, RBAC_DIR / "namespaced", RBAC_DIR / "node_event_forwarder", OPERATOR_DIR],
)
def test_kustomizations_list_their_files(directory: Any) -> None:
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    resources = kustomization["resources"]
    files = {r for r in resources if r.endswith(".yaml")}
    assert files == set(load_yaml_dir(directory)), "every manifest listed, nothing missing"
    for resource in resources:
        target = directory / resource
        assert target.exists(), resource
        if target.is_dir():
            assert (target / "kustomization.yaml").exists(), resource


def test_deployment(operator: list[dict[str, Any]]) -> None:
    deployment = find(operator, "Deployment", "kuberay-operator")
    assert deployment["metadata"]["namespace"] == NAMESPACE
    spec = deployment["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "Recreate"}
    pod = spec["template"]
    assert spec["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert pod["spec"]["serviceAccountName"] == "kuberay-operator"
    [container] = pod["spec"]["containers"]
    assert container["command"] == ["kuberay-operator"]
    assert container["args"] == DEFAULT_ARGS
    assert container["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe] == {
            "httpGet": {"path": "/metrics", "port": "http"},
            "initialDelaySeconds": 10,
            "periodSeconds": 5,
            "failureThreshold": 5,
        }
    assert container["resources"]["limits"] == {"cpu": "100m", "memory": "512Mi"}
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["runAsNonRoot"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}


def test_operator_accepts_the_deployment_args(operator: list[dict[str, Any]]) -> None:
    deployment = find(operator, "Deployment", "kuberay-operator")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    gates = new_feature_gate()
    cfg, warnings = parse_config(args, gates)
    assert warnings == []
    assert cfg.enable_leader_election is True
    assert cfg.enable_metrics is True
    assert (cfg.qps, cfg.burst, cfg.reconcile_concurrency) == (100.0, 200, 4)
    assert gates.enabled("RayClusterStatusConditions") is True
    assert gates.enabled("RayCronJob") is False


def test_metrics_service_selects_the_operator(operator: list[dict[str, Any]]) -> None:
    deployment = find(operator, "Deployment", "kuberay-operator")
    service = find(operator, "Service", "kuberay-operator")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["port"] == 8080
    namespace = find(operator, "Namespace", NAMESPACE)
    assert namespace["metadata"]["name"] == NAMESPACE


# --- the chart, statically ------------------------------------------------------------------
def _has_path(values: dict[str, Any], dotted: str) -> bool:
    node: Any = values
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def test_chart_keeps_kuberay_value_names() -> None:
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    missing = [p for p in KUBERAY_VALUE_PATHS if not _has_path(values, p)]
    assert missing == []
    gates = {g["name"]: g["enabled"] for g in values["featureGates"]}
    assert DEFAULT_ARGS[-1] == "--feature-gates=" + ",".join(
        f"{k}={str(v).lower()}" for k, v in gates.items()
    )
    assert values["webhook"]["enabled"] is False
    assert values["operatorCommand"] == "kuberay-operator"


def test_chart_rules_block_is_kuberays_plus_our_additions() -> None:
    """The unconditional part of the chart's rules template (shared by the ClusterRole and
    the per-namespace Roles), parsed as YAML (the full rendering is checked with helm in
    tests/integration/test_manifests.py)."""
    text = (CHART_DIR / "templates" / "_helpers.tpl").read_text()
    match = re.search(r'define "kuberay-operator\.rules" -\}\}\n(.*?)\{\{-', text, flags=re.DOTALL)
    assert match is not None
    rules = yaml.safe_load(match.group(1))
    assert rules_of({"rules": rules}) == NAMESPACED_RULES


def test_chart_crds_are_the_generated_ones() -> None:
    """Real files (a copied or packaged chart keeps them), equal to manifests/crds
    (``python hack/docs/gen_crds.py`` writes both)."""
    crds = CHART_DIR / "crds"
    assert not any(p.is_symlink() for p in crds.iterdir())
    names = sorted(p.name for p in crds.glob("*.yaml"))
    generated = CHART_DIR.parents[1] / "crds"
    assert names == sorted(p.name for p in generated.glob("ray.io_*.yaml"))
    for name in names:
        assert (crds / name).read_text() == (CHART_DIR.parents[1] / "crds" / name).read_text()
