"""Pure builders of the NetworkPolicies KubeRay makes for a RayCluster (``spec.networkPolicy``).

One policy for the head, ``<cluster>-head``, and one per worker group,
``<cluster>-workers-<group>``. Every policy lets the pods of the same cluster in (all ports)
and out (all ports); the mode picks which directions are restricted:

* ``DenyAll`` (the default when ``mode`` is unset): ingress and egress;
* ``DenyAllIngress``: ingress only (no ``egress`` rules, ``policyTypes: [Ingress]``);
* ``DenyAllEgress``: egress only.

The head's ingress also admits the K8sJobMode submitter pod of the RayJob that controls the
cluster (TCP, dashboard port). Custom rules are appended after the base ones: ``head`` for the
head, ``workerGroups[<group>]`` (which replaces, not merges) else ``worker`` for a group.
No DNS rule is added (KubeRay leaves it to the user).

:func:`policy_needs_update` is the drift check of an existing, controlled policy.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.controllers.common.objects import as_list, as_map, as_str, metadata, spec, str_map
from kuberay.gocompat.gojson import marshal
from kuberay.gocompat.goutil import go_parse_int

__all__ = [
    "DENY_ALL",
    "DENY_ALL_EGRESS",
    "DENY_ALL_INGRESS",
    "NETWORK_POLICY_API_VERSION",
    "NETWORK_POLICY_KIND",
    "build_head_policy",
    "build_network_policies",
    "build_worker_group_policy",
    "head_policy_name",
    "normalize_ports",
    "policy_mode",
    "policy_needs_update",
    "worker_group_policy_name",
]

NETWORK_POLICY_API_VERSION = "networking.k8s.io/v1"
NETWORK_POLICY_KIND = "NetworkPolicy"
DENY_ALL = "DenyAll"
DENY_ALL_INGRESS = "DenyAllIngress"
DENY_ALL_EGRESS = "DenyAllEgress"
_DASHBOARD_PORT_PARAM = "dashboard-port"


def head_policy_name(cluster_name: str) -> str:
    """``<cluster>-head``."""
    return f"{cluster_name}-head"


def worker_group_policy_name(cluster_name: str, group_name: str) -> str:
    """``<cluster>-workers-<group>``."""
    return f"{cluster_name}-workers-{group_name}"


def policy_mode(cluster: Mapping[str, Any]) -> str:
    """``spec.networkPolicy.mode``, ``DenyAll`` when unset."""
    mode = as_map(spec(cluster).get("networkPolicy")).get("mode")
    return mode if isinstance(mode, str) else DENY_ALL


def _restricts_ingress(mode: str) -> bool:
    return mode in (DENY_ALL, DENY_ALL_INGRESS)


def _restricts_egress(mode: str) -> bool:
    return mode in (DENY_ALL, DENY_ALL_EGRESS)


def _labels(cluster_name: str, group: str) -> dict[str, str]:
    return {
        c.RAY_CLUSTER_LABEL_KEY: cluster_name,
        c.RAY_NODE_GROUP_LABEL_KEY: group,
        c.KUBERNETES_APPLICATION_NAME_LABEL_KEY: c.APPLICATION_NAME,
        c.KUBERNETES_CREATED_BY_LABEL_KEY: c.COMPONENT_NAME,
    }


def _same_cluster_peer(cluster_name: str) -> list[dict[str, Any]]:
    return [{"podSelector": {"matchLabels": {c.RAY_CLUSTER_LABEL_KEY: cluster_name}}}]


def _base_ingress(cluster_name: str) -> list[dict[str, Any]]:
    return [{"from": _same_cluster_peer(cluster_name)}]


def _base_egress(cluster_name: str) -> list[dict[str, Any]]:
    return [{"to": _same_cluster_peer(cluster_name)}]


def _dashboard_port(cluster: Mapping[str, Any]) -> int:
    """``rayStartParams["dashboard-port"]`` when Go's ``ParseInt(s, 10, 32)`` accepts it,
    else 8265."""
    params = as_map(as_map(spec(cluster).get("headGroupSpec")).get("rayStartParams"))
    raw = params.get(_DASHBOARD_PORT_PARAM)
    if isinstance(raw, str):
        with contextlib.suppress(ValueError):
            return go_parse_int(raw, 32)
    return c.DEFAULT_DASHBOARD_PORT


def _submitter_peer(cluster: Mapping[str, Any]) -> dict[str, Any] | None:
    """The K8sJobMode submitter pods of the controlling ``ray.io`` RayJob, or None."""
    meta = metadata(cluster)
    if str_map(meta.get("labels")).get(c.RAY_JOB_SUBMISSION_MODE_LABEL_KEY) != (
        JobSubmissionMode.K8S_JOB_MODE
    ):
        return None
    for ref in as_list(meta.get("ownerReferences")):
        ref = as_map(ref)
        if (
            ref.get("kind") == c.KIND_RAYJOB
            and ref.get("controller") is True
            and as_str(ref.get("apiVersion")).startswith(f"{c.GROUP}/")
        ):
            return {
                "podSelector": {
                    "matchLabels": {
                        c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: as_str(ref.get("name")),
                        c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: c.KIND_RAYJOB,
                    }
                }
            }
    return None


def _rules(rules: object, key: str) -> list[dict[str, Any]]:
    return [copy.deepcopy(dict(as_map(r))) for r in as_list(as_map(rules).get(key))]


def _worker_custom_rules(config: Mapping[str, Any], group: str) -> Mapping[str, Any] | None:
    """The ``workerGroups`` entry of ``group`` (replaces), else ``worker`` (None if unset)."""
    for entry in as_list(config.get("workerGroups")):
        if as_map(entry).get("groupName") == group:
            return as_map(entry)
    worker = config.get("worker")
    return as_map(worker) if worker is not None else None


def _policy(
    cluster: Mapping[str, Any],
    name: str,
    group_label: str,
    selector: dict[str, str],
    ingress: list[dict[str, Any]] | None,
    egress: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    meta = metadata(cluster)
    policy_types = []
    body: dict[str, Any] = {"podSelector": {"matchLabels": selector}}
    if ingress is not None:
        policy_types.append("Ingress")
    if egress is not None:
        policy_types.append("Egress")
    body["policyTypes"] = policy_types
    if ingress:
        body["ingress"] = ingress
    if egress:
        body["egress"] = egress
    return {
        "apiVersion": NETWORK_POLICY_API_VERSION,
        "kind": NETWORK_POLICY_KIND,
        "metadata": {
            "name": name,
            "namespace": as_str(meta.get("namespace")),
            "labels": _labels(as_str(meta.get("name")), group_label),
            "ownerReferences": [controller_owner_reference(cluster)],
        },
        "spec": body,
    }


def build_head_policy(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """KubeRay ``buildHeadNetworkPolicy`` plus the controller owner reference."""
    name = as_str(metadata(cluster).get("name"))
    config = as_map(spec(cluster).get("networkPolicy"))
    head_rules = config.get("head")
    mode = policy_mode(cluster)
    ingress = egress = None
    if _restricts_ingress(mode):
        ingress = _base_ingress(name)
        peer = _submitter_peer(cluster)
        if peer is not None:
            port = {"protocol": "TCP", "port": _dashboard_port(cluster)}
            ingress.append({"ports": [port], "from": [peer]})
        ingress += _rules(head_rules, "ingressRules")
    if _restricts_egress(mode):
        egress = _base_egress(name) + _rules(head_rules, "egressRules")
    selector = {c.RAY_CLUSTER_LABEL_KEY: name, c.RAY_NODE_TYPE_LABEL_KEY: c.HEAD_NODE}
    return _policy(
        cluster,
        head_policy_name(name),
        c.RAY_NODE_HEAD_GROUP_LABEL_VALUE,
        selector,
        ingress,
        egress,
    )


def build_worker_group_policy(cluster: Mapping[str, Any], group: str) -> dict[str, Any]:
    """KubeRay ``buildWorkerGroupNetworkPolicy`` for ``group`` plus the owner reference."""
    name = as_str(metadata(cluster).get("name"))
    custom = _worker_custom_rules(as_map(spec(cluster).get("networkPolicy")), group)
    mode = policy_mode(cluster)
    ingress = egress = None
    if _restricts_ingress(mode):
        ingress = _base_ingress(name) + _rules(custom, "ingressRules")
    if _restricts_egress(mode):
        egress = _base_egress(name) + _rules(custom, "egressRules")
    selector = {
        c.RAY_CLUSTER_LABEL_KEY: name,
        c.RAY_NODE_TYPE_LABEL_KEY: c.WORKER_NODE,
        c.RAY_NODE_GROUP_LABEL_KEY: group,
    }
    return _policy(cluster, worker_group_policy_name(name, group), group, selector, ingress, egress)


def build_network_policies(cluster: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The head policy, then one per worker group in spec order."""
    groups = [
        as_str(as_map(g).get("groupName")) for g in as_list(spec(cluster).get("workerGroupSpecs"))
    ]
    return [build_head_policy(cluster)] + [build_worker_group_policy(cluster, g) for g in groups]


def normalize_ports(policy_spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``policy_spec`` whose rule ports without a protocol say ``TCP`` (what the
    apiserver defaults), so a user rule without a protocol is not an endless update."""
    out = copy.deepcopy(dict(policy_spec))
    for key in ("ingress", "egress"):
        for rule in as_list(out.get(key)):
            for port in as_list(as_map(rule).get("ports")):
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    return out


def _spec_bytes(policy_spec: Mapping[str, Any]) -> tuple[bytes, ...]:
    """The spec as Go's typed ``NetworkPolicySpec`` holds it (unknown keys dropped, empty
    lists and absent fields alike), one JSON text per part."""
    ingress: Sequence[Any] = as_list(policy_spec.get("ingress"))
    egress: Sequence[Any] = as_list(policy_spec.get("egress"))
    return (
        marshal(as_map(policy_spec.get("podSelector")), "meta/v1.LabelSelector"),
        repr([as_str(t) for t in as_list(policy_spec.get("policyTypes"))]).encode(),
        *(b"I" + marshal(as_map(r), "networking/v1.NetworkPolicyIngressRule") for r in ingress),
        *(b"E" + marshal(as_map(r), "networking/v1.NetworkPolicyEgressRule") for r in egress),
    )


def policy_needs_update(
    existing: Mapping[str, Any], desired: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The existing policy with the desired spec and labels, or None when both already match
    (ports without a protocol count as TCP; ``null`` and empty lists are the same)."""
    want_spec = normalize_ports(spec(desired))
    want_labels = str_map(metadata(desired).get("labels"))
    live_labels = str_map(metadata(existing).get("labels"))
    if _spec_bytes(spec(existing)) == _spec_bytes(want_spec) and live_labels == want_labels:
        return None
    updated = copy.deepcopy(dict(existing))
    updated["spec"] = want_spec
    updated.setdefault("metadata", {})["labels"] = want_labels
    return updated
