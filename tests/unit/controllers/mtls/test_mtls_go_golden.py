"""The mTLS builders against what KubeRay's own controller created for the same cluster.

``data/kuberay_mtls_go_golden.json.gz`` records what one
``RayClusterMTLSController.Reconcile`` of KubeRay ``feeaf72`` created against controller-runtime's
fake client holding the RayCluster and its pods (see ``data/README.md``), for the
``ray-cluster.mtls.yaml`` sample without pods, with pods (live
ones of both node types and ones that must not count) and with a custom head Service name.
Every Issuer and Certificate is compared exactly as JSON (the fake client's empty ``status``
aside); the cluster domain is KubeRay's default ``cluster.local``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kuberay.controllers.mtls.builders import (
    build_ca_certificate,
    build_ca_issuer,
    build_leaf_certificate,
    build_selfsigned_issuer,
    pod_ips,
)

DATA = Path(__file__).parents[1] / "data" / "kuberay_mtls_go_golden.json.gz"


def _load() -> list[dict[str, Any]]:
    with gzip.open(DATA, "rt") as fh:
        data: list[dict[str, Any]] = json.load(fh)
    return data


CASES = _load()


def _ours(cluster: dict[str, Any], pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    name = cluster["metadata"]["name"]
    objs = [
        build_selfsigned_issuer(cluster),
        build_ca_certificate(cluster),
        build_ca_issuer(cluster),
        build_leaf_certificate(cluster, "head", pod_ips(pods, "head", name), "cluster.local"),
        build_leaf_certificate(cluster, "worker", pod_ips(pods, "worker", name), "cluster.local"),
    ]
    return sorted(objs, key=lambda o: str(o["metadata"]["name"]))


@pytest.mark.parametrize("entry", CASES, ids=[c["case"]["name"] for c in CASES])
def test_pki_matches_kuberay(entry: dict[str, Any]) -> None:
    assert entry["err"] == ""
    expected = [{k: v for k, v in o.items() if k != "status"} for o in entry["expected"]]
    assert _ours(entry["case"]["cluster"], entry["case"]["pods"]) == expected


def test_golden_data_has_pod_ips() -> None:
    (with_pods,) = [c for c in CASES if c["case"]["name"] == "sample-with-pods"]
    worker = next(
        o for o in with_pods["expected"] if o["metadata"]["name"].startswith("ray-worker")
    )
    assert worker["spec"]["ipAddresses"] == ["10.2.0.10", "10.2.0.2", "127.0.0.1"]
