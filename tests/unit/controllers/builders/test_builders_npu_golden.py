"""Huawei Ascend NPUs (KubeRay v1.8, #5071) through the pod builders, against hand-written goldens.

``data/kuberay_v18_npu_golden.json`` holds, per case, the container limits, ``rayStartParams``
and group ``resources`` put on fixture P's head or worker, and the ``ray start`` command KubeRay
v1.8 renders for that pod (its ``KUBERAY_GEN_RAY_START_CMD`` and the container's command line).
The cases are the PR's and release text's examples plus the edges of the key rule; no Go build
of v1.8 was at hand, so they are written from that evidence (see ``data/README.md``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from builders_testlib import DATA, env_map, fixture_p

from kuberay.controllers.builders.pod import build_head_pod, build_worker_pod
from kuberay.controllers.builders.resources import desired_resource_status
from kuberay.controllers.common.options import BuildOptions

GOLDEN: dict[str, Any] = json.loads((DATA / "kuberay_v18_npu_golden.json").read_text())
CASES: list[dict[str, Any]] = GOLDEN["cases"]
OPTIONS = BuildOptions.from_env({}, kuberay_version="nightly")


def _apply(group: dict[str, Any], change: dict[str, Any]) -> None:
    container = group["template"]["spec"]["containers"][0]
    container["resources"] = {"limits": change["limits"]}
    if "rayStartParams" in change:
        group["rayStartParams"] = change["rayStartParams"]
    if "resources" in change:
        group["resources"] = change["resources"]


def _cluster(case: dict[str, Any]) -> dict[str, Any]:
    cluster = fixture_p()
    if "head" in case:
        _apply(cluster["spec"]["headGroupSpec"], case["head"])
    if "worker" in case:
        _apply(cluster["spec"]["workerGroupSpecs"][0], case["worker"])
    return cluster


def _start_command(pod: dict[str, Any]) -> str:
    container = pod["spec"]["containers"][0]
    generated = env_map(container)["KUBERAY_GEN_RAY_START_CMD"]
    assert container["args"] == [f"ulimit -n ${{RAY_START_ULIMIT_OPEN_FILES:-65536}}; {generated}"]
    assert isinstance(generated, str)
    return generated


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_ray_start_matches_kuberay_v18(case: dict[str, Any]) -> None:
    cluster = _cluster(case)
    expected = case["expected"]
    if "head" in expected:
        assert _start_command(build_head_pod(cluster, OPTIONS, {})) == expected["head"]
    if "worker" in expected:
        group = cluster["spec"]["workerGroupSpecs"][0]
        pod = build_worker_pod(
            cluster, group, OPTIONS, {}, replica_group_name="", replica_index=0, host_index=0
        )
        assert _start_command(pod) == expected["worker"]


def test_npus_are_not_counted_as_gpus() -> None:
    case = next(c for c in CASES if c["name"] == "head-gpu-and-ascend910b")
    cluster = _cluster(case)
    cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"cpu": "1", "huawei.com/Ascend910B": 8, "huawei.com/npu": 4}
    }
    # head: 1 GPU; 3 workers with NPUs only
    assert desired_resource_status(cluster)["desiredGPU"] == "1"


def test_golden_set_covers_the_rule() -> None:
    names = {c["name"] for c in CASES}
    assert {
        "worker-ascend910b",
        "head-gpu-and-ascend910b",
        "existing-npu-resources-kept",
        "ascend-memory-and-core-slices-are-not-npus",
        "group-resources-gpu-and-ascend910b",
    } <= names
