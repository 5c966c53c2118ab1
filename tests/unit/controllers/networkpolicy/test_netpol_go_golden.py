"""The NetworkPolicy builders against what KubeRay's own Go code built for the same cluster.

``data/kuberay_netpol_go_golden.json.gz`` records what KubeRay ``feeaf72``'s
``buildHeadNetworkPolicy`` / ``buildWorkerGroupNetworkPolicy`` returned (mode defaulted as
``Reconcile`` does, ``SetControllerReference`` applied; see ``data/README.md``) for the
``ray-cluster.network-policy-deny-all.yaml`` sample and variants (each mode, no mode, an empty
config, per-group overrides incl. an empty one, rules without a protocol, named ports,
``namespaceSelector: {}``, RayJob owners in every submission mode, owners that are not a
``ray.io`` RayJob controller, dashboard-port overrides valid and not). Metadata and spec are
compared exactly as JSON (Go's output carries no TypeMeta).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kuberay.controllers.networkpolicy.builders import build_network_policies

DATA = Path(__file__).parents[1] / "data" / "kuberay_netpol_go_golden.json.gz"


def _load() -> list[dict[str, Any]]:
    with gzip.open(DATA, "rt") as fh:
        data: list[dict[str, Any]] = json.load(fh)
    return data


CASES = _load()


def test_golden_data_covers_the_sample_and_every_mode() -> None:
    names = {c["case"]["name"] for c in CASES}
    assert {"sample", "denyallingress", "denyallegress", "no-mode", "rayjob-k8sjobmode"} <= names


@pytest.mark.parametrize("entry", CASES, ids=[c["case"]["name"] for c in CASES])
def test_policies_match_kuberay(entry: dict[str, Any]) -> None:
    ours = build_network_policies(entry["case"]["cluster"])
    assert [p["apiVersion"] for p in ours] == ["networking.k8s.io/v1"] * len(ours)
    assert [p["kind"] for p in ours] == ["NetworkPolicy"] * len(ours)
    got = [{"metadata": p["metadata"], "spec": p["spec"]} for p in ours]
    assert got == entry["expected"]
