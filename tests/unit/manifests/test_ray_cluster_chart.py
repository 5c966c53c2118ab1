"""The ray-cluster chart renders, for KubeRay's values, the RayCluster KubeRay's ray-cluster
chart renders, and what only it has (auth, TLS, upgrade strategy, network policy, labels and
annotations on every object, extra objects) only when set."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.unit.manifests.ray_cluster_chart_cases import (
    CASES,
    CASES_DIR,
    KUBERAY_ONLY_CASES,
    RAY_CLUSTER_CHART,
    expected,
    helm,
    needs_helm,
    render_case,
)

ADDITIONS = ("authOptions", "tlsOptions", "upgradeStrategy", "networkPolicy")
CHART_LABELS = {
    "app.kubernetes.io/instance": "raycluster",
    "app.kubernetes.io/managed-by": "Helm",
    "helm.sh/chart": "ray-cluster-1.7.0",
}


def _pod_templates(cluster: dict[str, Any]) -> list[dict[str, Any]]:
    spec = cluster["spec"]
    return [spec["headGroupSpec"]["template"]] + [
        g["template"] for g in spec.get("workerGroupSpecs") or ()
    ]


@needs_helm
@pytest.mark.parametrize("case", CASES)
def test_renders_the_committed_objects(case: str) -> None:
    assert render_case(case) == expected(case)


@needs_helm
@pytest.mark.parametrize("case", KUBERAY_ONLY_CASES)
def test_kuberay_values_render_nothing_of_ours(case: str) -> None:
    """With KubeRay's values alone: one RayCluster, none of the added fields, only KubeRay's
    chart labels on it."""
    [cluster] = render_case(case)
    assert cluster["kind"] == "RayCluster"
    assert not set(ADDITIONS) & set(cluster["spec"])
    assert cluster["metadata"]["labels"] == CHART_LABELS


@needs_helm
def test_defaults_are_kuberays() -> None:
    """The defaults users of KubeRay's chart rely on: name <release>-kuberay, Ray 2.52.0, a
    5Gi head, one worker group of 1..5 replicas (1 CPU / 1Gi), logs on an emptyDir."""
    [cluster] = render_case("default")
    assert cluster["metadata"]["name"] == "raycluster-kuberay"
    head = cluster["spec"]["headGroupSpec"]
    assert head["serviceType"] == "ClusterIP"
    [ray_head] = head["template"]["spec"]["containers"]
    assert ray_head["image"] == "rayproject/ray:2.52.0"
    assert ray_head["resources"]["limits"] == {"cpu": "1", "memory": "5Gi"}
    [group] = cluster["spec"]["workerGroupSpecs"]
    assert (group["groupName"], group["replicas"], group["minReplicas"]) == ("workergroup", 1, 1)
    assert group["maxReplicas"] == 5
    assert group["template"]["spec"]["volumes"] == [{"name": "log-volume", "emptyDir": {}}]


@needs_helm
def test_additions_when_set() -> None:
    objs = render_case("extensions")
    [cluster] = [o for o in objs if o["kind"] == "RayCluster"]
    spec = cluster["spec"]
    assert spec["authOptions"] == {"mode": "token"}
    assert spec["tlsOptions"] == {"enabled": True}
    assert spec["upgradeStrategy"] == {"type": "Recreate"}
    assert spec["networkPolicy"]["head"]["ingressRules"][0]["ports"] == [
        {"port": 8080, "protocol": "TCP"}
    ]
    # `labels` on every object (the RayCluster, each pod template, each extra object);
    # `annotations` on the RayCluster and the extra objects
    for meta in [o["metadata"] for o in objs] + [t["metadata"] for t in _pod_templates(cluster)]:
        assert meta["labels"]["team"] == "ml" and meta["labels"]["cost-center"] == "42"
        assert CHART_LABELS.items() <= meta["labels"].items()
    for obj in objs:
        assert obj["metadata"]["annotations"] == {"owner": "ml-platform"}
    # extra objects: a map and a string, both through tpl, their own labels kept
    config_map = next(o for o in objs if o["kind"] == "ConfigMap")
    assert config_map["metadata"]["name"] == "raycluster-runtime-env"
    assert config_map["metadata"]["labels"]["app"] == "runtime-env"
    assert any(
        o["kind"] == "ServiceAccount" and o["metadata"]["name"] == "raycluster-ray" for o in objs
    )


@needs_helm
def test_additional_group_without_resources_gets_kuberays_fallback() -> None:
    [cluster] = render_case("groups")
    groups = {g["groupName"]: g for g in cluster["spec"]["workerGroupSpecs"]}
    assert sorted(groups) == ["gpu", "tiny"]  # worker disabled, smallGroup disabled
    [tiny] = groups["tiny"]["template"]["spec"]["containers"]
    one = {"cpu": "1", "memory": "1Gi"}
    assert tiny["resources"] == {"limits": one, "requests": one}
    assert groups["tiny"]["maxReplicas"] == 2147483647
    assert groups["gpu"]["numOfHosts"] == 2
    assert groups["gpu"]["rayStartParams"] == {"num-gpus": "1"}


@needs_helm
def test_lint_strict() -> None:
    for case in CASES:
        proc = helm(
            "lint", "--strict", str(RAY_CLUSTER_CHART), "-f", str(CASES_DIR / f"{case}.values.yaml")
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_values_keep_kuberays_keys() -> None:
    """Every top-level key of KubeRay v1.7's values.yaml, with its default."""
    values = yaml.safe_load((RAY_CLUSTER_CHART / "values.yaml").read_text())
    assert values["image"] == {
        "repository": "rayproject/ray",
        "tag": "2.52.0",
        "pullPolicy": "IfNotPresent",
    }
    assert (values["nameOverride"], values["fullnameOverride"]) == ("kuberay", "")
    assert values["gcsFaultTolerance"] == {"enabled": False}
    assert values["common"] == {"containerEnv": []}
    assert values["service"] == {"type": "ClusterIP"}
    assert values["additionalWorkerGroups"]["smallGroup"]["disabled"] is True
    assert values["worker"]["groupName"] == "workergroup"
    for key in ADDITIONS:
        assert values[key] == {}
    assert values["extraObjects"] == []
