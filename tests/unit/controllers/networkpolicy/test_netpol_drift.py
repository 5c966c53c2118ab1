"""The drift check of an existing, controlled NetworkPolicy (``policy_needs_update``):
what the apiserver hands back for what we created is "in sync"; a real difference is not."""

from __future__ import annotations

import copy
from typing import Any

from kuberay.controllers.networkpolicy.builders import build_head_policy, policy_needs_update


def _cluster(**np: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "c", "namespace": "ns", "uid": "u"},
        "spec": {"networkPolicy": np, "headGroupSpec": {"rayStartParams": {}}},
    }


def _as_served(policy: dict[str, Any]) -> dict[str, Any]:
    """What the apiserver returns: protocol defaulted to TCP, server metadata added."""
    live = copy.deepcopy(policy)
    live["metadata"].update(resourceVersion="7", uid="np-uid", generation=1)
    for key in ("ingress", "egress"):
        for rule in live["spec"].get(key) or []:
            for port in rule.get("ports") or []:
                port.setdefault("protocol", "TCP")
    return live


RULE = {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 443}]}


def test_served_copy_of_a_rule_without_protocol_is_in_sync() -> None:
    desired = build_head_policy(_cluster(head={"egressRules": [RULE]}))
    assert policy_needs_update(_as_served(desired), desired) is None


def test_empty_lists_and_absent_fields_are_the_same() -> None:
    desired = build_head_policy(_cluster(head={"egressRules": [{**RULE, "to": []}]}))
    live = _as_served(desired)
    del live["spec"]["egress"][1]["to"]
    assert policy_needs_update(live, desired) is None


def test_a_changed_port_is_written_back_with_the_desired_spec() -> None:
    desired = build_head_policy(_cluster(head={"egressRules": [RULE]}))
    live = _as_served(desired)
    live["spec"]["egress"][1]["ports"][0]["port"] = 444
    updated = policy_needs_update(live, desired)
    assert updated is not None
    assert updated["spec"]["egress"][1]["ports"] == [{"port": 443, "protocol": "TCP"}]
    assert updated["metadata"]["resourceVersion"] == "7"  # an update of the live object


def test_named_port_is_not_the_same_as_a_number() -> None:
    desired = build_head_policy(_cluster(head={"egressRules": [RULE]}))
    live = _as_served(desired)
    live["spec"]["egress"][1]["ports"][0]["port"] = "443"
    assert policy_needs_update(live, desired) is not None


def test_a_label_removed_by_hand_is_restored() -> None:
    desired = build_head_policy(_cluster())
    live = _as_served(desired)
    del live["metadata"]["labels"]["ray.io/group"]
    live["metadata"]["labels"]["extra"] = "x"
    updated = policy_needs_update(live, desired)
    assert updated is not None
    assert updated["metadata"]["labels"] == desired["metadata"]["labels"]


def test_mode_change_drops_the_egress_side() -> None:
    before = build_head_policy(_cluster(mode="DenyAll"))
    after = build_head_policy(_cluster(mode="DenyAllIngress"))
    updated = policy_needs_update(_as_served(before), after)
    assert updated is not None
    assert updated["spec"]["policyTypes"] == ["Ingress"]
    assert "egress" not in updated["spec"]
