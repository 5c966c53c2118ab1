"""The ray-cluster chart's golden cases: ``<case>.values.yaml`` and the objects
``helm template raycluster manifests/helm/ray-cluster -n ray -f <case>.values.yaml`` must
render, ``<case>.expected.yaml`` (written from KubeRay v1.7's chart templates: for the cases
setting only KubeRay's values, the RayCluster KubeRay's chart renders; ``extensions`` sets what
only this chart has)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.build import build_helm
from tests.unit.manifests.manifests_expected import MANIFESTS

RAY_CLUSTER_CHART = MANIFESTS / "helm" / "ray-cluster"
CASES_DIR = Path(__file__).parent / "ray_cluster_chart"
CASES = sorted(p.name.removesuffix(".values.yaml") for p in CASES_DIR.glob("*.values.yaml"))
#: the cases that set only values KubeRay's chart has
KUBERAY_ONLY_CASES = [c for c in CASES if c != "extensions"]
RELEASE = "raycluster"
NAMESPACE = "ray"
HELM = build_helm.binary_path()
needs_helm = pytest.mark.skipif(
    not HELM.exists(), reason=f"no helm binary at {HELM}: run `make helm`"
)


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the helm binary built by ``make helm``."""
    return subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=120)


def render_case(case: str, namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """The chart's objects for ``case``'s values, sorted by kind and name."""
    proc = helm(
        "template",
        RELEASE,
        str(RAY_CLUSTER_CHART),
        "--namespace",
        namespace,
        "-f",
        str(CASES_DIR / f"{case}.values.yaml"),
    )
    assert proc.returncode == 0, proc.stderr
    objs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    return sorted(objs, key=lambda o: (o["kind"], o["metadata"]["name"]))


def expected(case: str) -> list[dict[str, Any]]:
    """The committed objects of ``case``."""
    text = (CASES_DIR / f"{case}.expected.yaml").read_text()
    return [d for d in yaml.safe_load_all(text) if d]
