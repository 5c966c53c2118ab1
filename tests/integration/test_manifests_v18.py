"""KubeRay v1.8's chart values (``configuration.allowedNodeLabels``, ``nodeEventForwarder.*``)
and node label delivery's MutatingWebhookConfiguration, rendered by helm, read back by the
operator's own parser and dry-run applied on the apiserver."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client
from kuberay.webhooks.config import mutating_webhook_configuration
from tests.integration.test_manifests import (
    CA_PEM,
    _container,
    _parse_args,
    dry_run_all,
    helm,
    namespaces,
    needs_helm,
    render,
)
from tests.unit.manifests.manifests_expected import CHART_DIR, find, rules_of

__all__ = ["namespaces"]  # the fixture, shared with test_manifests.py

KIND_MWC = "MutatingWebhookConfiguration"
ZONE = "topology.kubernetes.io/zone"
VALUES: dict[str, Any] = {
    "configuration": {"allowedNodeLabels": [ZONE, "nvidia.com/gpu.clique"]},
    "nodeEventForwarder": {"enabled": True, "reasons": ["XIDError"], "types": ["Warning"]},
}


def _forwarder_roles(objs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        o["metadata"]["namespace"]: o["rules"]
        for o in objs
        if o["kind"] == "Role" and o["metadata"]["name"] == "kuberay-operator-node-event-forwarder"
    }


@needs_helm
async def test_v18_values_as_flags_and_as_configuration(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path
) -> None:
    ns = await namespaces()
    for configuration in (False, True):
        values = {**VALUES, "configuration": {**VALUES["configuration"], "enabled": configuration}}
        objs = render(values, ns, tmp_path)
        args = _container(objs)["args"]
        if not configuration:
            assert f"--allowed-node-labels={ZONE},nvidia.com/gpu.clique" in args
            assert "--enable-node-event-forwarder" in args
            assert "--node-event-forwarder-reasons=XIDError" in args
        cfg = _parse_args(args, tmp_path, objs)
        assert cfg.allowed_node_labels == [ZONE, "nvidia.com/gpu.clique"]
        only = cfg.controller_config().node_event_forwarder
        assert only is not None and only.reasons == {"XIDError"} and only.types == {"Warning"}
        rules = [{"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]}]
        assert _forwarder_roles(objs) == {"default": rules, "kube-system": rules}
    assert _forwarder_roles(render({}, ns, tmp_path)) == {}
    assert "Role" in await dry_run_all(kclient, objs)


@needs_helm
async def test_webhook_values_render_the_mutating_configuration(
    kclient: Client, namespaces: Callable[[], Any], tmp_path: Path
) -> None:
    ns = await namespaces()
    selector = {"matchLabels": {"ray": "yes"}}
    values: dict[str, Any] = {
        "webhook": {
            "enabled": True,
            "caBundle": base64.b64encode(CA_PEM).decode(),
            "namespaceSelector": selector,
        }
    }
    # gate off (the default): no pod webhook stands between the apiserver and every worker pod
    assert not [o for o in render(values, ns, tmp_path) if o["kind"] == KIND_MWC]
    values["featureGates"] = [{"name": "NodeLabelDelivery", "enabled": True}]
    objs = render(values, ns, tmp_path)
    mwc = find(objs, KIND_MWC, "kuberay-operator-mutating-webhook")
    expected = mutating_webhook_configuration(
        "kuberay-operator-webhook", ns, CA_PEM, namespace_selector=selector
    )
    assert mwc["webhooks"] == expected["webhooks"]
    assert [(w["name"], w["failurePolicy"], w["sideEffects"]) for w in mwc["webhooks"]] == [
        ("mpod.kb.io", "Fail", "None"),
        ("mpodbinding.kb.io", "Ignore", "NoneOnDryRun"),
    ]
    assert KIND_MWC in await dry_run_all(kclient, objs)
    rules = rules_of(find(objs, "ClusterRole", "kuberay-operator"))
    assert rules[0] == (("",), ("nodes",), ("get",))


@needs_helm
@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"nodeEventForwarder": {"enabled": True}}, "nodeEventForwarder is not supported"),
        (
            {
                "webhook": {"enabled": True, "caBundle": "QUJD"},
                "featureGates": [{"name": "NodeLabelDelivery", "enabled": True}],
            },
            "NodeLabelDelivery's webhooks are not supported",
        ),
    ],
    ids=["forwarder", "node-label-delivery"],
)
def test_single_namespace_install_refuses_what_needs_cluster_reads(
    tmp_path: Path, values: dict[str, Any], needle: str
) -> None:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(json.dumps({**values, "singleNamespaceInstall": True}))
    proc = helm("template", "kuberay-operator", str(CHART_DIR), "-f", str(values_file))
    assert proc.returncode != 0
    assert needle in proc.stderr


@needs_helm
def test_schema_refuses_a_forwarder_type_the_operator_would() -> None:
    """``types`` other than Warning/Normal stop the operator at start-up: the chart says so
    at install time."""
    proc = helm(
        "template", "kuberay-operator", str(CHART_DIR), "--set", "nodeEventForwarder.types={Info}"
    )
    assert proc.returncode != 0
    assert "/nodeEventForwarder/types/0" in proc.stderr
