"""The RayCluster, head Service and serve Service built for every RayService sample equal what
KubeRay's Go code builds (``data/kuberay_rayservice_golden.json.gz``; see
``data/README.md``). The inputs are KubeRay's samples themselves, read from outside the
repository (``tests/kuberay_samples.py``)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from kuberay.controllers.builders.service import (
    ServiceBuildError,
    build_head_service_for_ray_service,
    build_serve_service_for_ray_service,
)
from kuberay.controllers.rayservice.cluster_builder import build_ray_cluster_for_ray_service
from kuberay.gocompat.go_struct_schema import RAY_CLUSTER_SPEC
from kuberay.gocompat.gojson import marshal
from tests.kuberay_samples import requires_kuberay_samples
from tests.unit.controllers.builders.builders_testlib import SAMPLES, load_gz, normalize

pytestmark = requires_kuberay_samples
GOLDEN = load_gz("kuberay_rayservice_golden.json.gz")
FEATURES = {"RayServiceIncrementalUpgrade": True}


def _sample(name: str) -> dict[str, Any]:
    file, index = name.split("#")
    doc = list(yaml.safe_load_all((SAMPLES / file).read_text()))[int(index)]
    doc["metadata"].setdefault("namespace", "default")
    doc["metadata"]["uid"] = "uid-1"
    return dict(doc)


def _service(obj: dict[str, Any]) -> dict[str, Any]:
    out = normalize(copy.deepcopy(obj))
    out.pop("apiVersion", None)
    out.pop("kind", None)
    out.get("spec", {}).get("ports", []).sort(key=lambda p: p["name"])
    return dict(out)


@pytest.mark.parametrize("entry", GOLDEN, ids=[e["name"] for e in GOLDEN])
def test_matches_kuberay_go_output(entry: dict[str, Any]) -> None:
    rs = _sample(entry["name"])
    before = copy.deepcopy(rs)
    cluster = build_ray_cluster_for_ray_service(
        rs, f"{rs['metadata']['name']}-abcde", features=FEATURES, kuberay_version="nightly"
    )
    expected = entry["cluster"]
    assert cluster["metadata"] == normalize(expected["metadata"])
    ours = json.loads(marshal(cluster["spec"], RAY_CLUSTER_SPEC))
    assert normalize(ours) == normalize(expected["spec"])
    assert _service(build_head_service_for_ray_service(rs, cluster)) == _service(
        entry["headService"]
    )
    if "serveErr" in entry:
        with pytest.raises(ServiceBuildError):
            build_serve_service_for_ray_service(rs, cluster, FEATURES)
    else:
        assert _service(build_serve_service_for_ray_service(rs, cluster, FEATURES)) == _service(
            entry["serveService"]
        )
    assert rs == before


def test_golden_set_covers_every_rayservice_sample() -> None:
    files = {p.name for p in SAMPLES.glob("*ray-service*.yaml")}
    assert {e["name"].split("#")[0] for e in GOLDEN} == files
