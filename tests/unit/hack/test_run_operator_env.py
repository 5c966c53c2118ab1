"""``make run REAL_NODES=1``: the operator it starts may dial the real node's dashboards."""

from __future__ import annotations

from types import ModuleType


def _run_module() -> ModuleType:
    """``hack.cluster.run`` (``make run``'s script), imported on first use."""
    from hack.cluster import run

    return run


def test_real_nodes_allow_loopback_and_the_pod_network() -> None:
    run = _run_module()
    realnode = run._cp._load_realnode()
    env = run.operator_env({}, real_nodes=1)
    assert env == {"KUBERAY_DASHBOARD_ALLOWED_NETWORKS": f"127.0.0.0/8,{realnode.POD_CIDR}"}


def test_no_real_node_or_an_explicit_choice_leaves_the_env_alone() -> None:
    run = _run_module()
    assert run.operator_env({}, real_nodes=0) == {}
    chosen = {"KUBERAY_DASHBOARD_ALLOWED_NETWORKS": "127.0.0.1/32"}
    assert run.operator_env(chosen, real_nodes=1) == {}
