"""``make run REAL_NODES=1``: the operator it starts may dial the real node's dashboards."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def _run_module() -> ModuleType:
    name = "kuberay_hack_run"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "hack" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


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
