"""Applying templates to RayCluster, RayJob and RayService bodies (golden bodies)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuberay.apiserver.templates.apply import apply_templates, referenced_names
from kuberay.apiserver.templates.model import ComputeTemplate, Toleration

GPU = ComputeTemplate(
    name="gpu",
    namespace="ns",
    cpu=2,
    memory=4,
    gpu=1,
    tolerations=(Toleration("ray.io/node-type", "Equal", "worker", "NoSchedule"),),
    extended_resources={"custom.io/special": 2},
)
SMALL = ComputeTemplate(name="small", namespace="ns", cpu=1, memory=512, memory_unit="Mi")
TEMPLATES = {"gpu": GPU, "small": SMALL}


def cluster_spec() -> dict[str, Any]:
    return {
        "rayVersion": "2.46.0",
        "headGroupSpec": {
            "computeTemplate": "small",
            "rayStartParams": {},
            "template": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {
                    "containers": [
                        {
                            "name": "ray-head",
                            "image": "rayproject/ray",
                            "resources": {"limits": {"ephemeral-storage": "1Gi"}},
                        },
                        {"name": "sidecar", "image": "busybox"},
                    ]
                },
            },
        },
        "workerGroupSpecs": [
            {
                "groupName": "gpu",
                "computeTemplate": "gpu",
                "replicas": 1,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "ray-worker", "image": "rayproject/ray"},
                            {"name": "logger", "image": "busybox"},
                        ],
                        "tolerations": [{"key": "existing", "operator": "Exists"}],
                        "futureField": {"kept": True},
                    }
                },
            },
            {
                "groupName": "plain",
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "ray-worker"}]}},
            },
        ],
    }


def applied_spec() -> dict[str, Any]:
    small = {"cpu": "1", "memory": "512Mi"}
    gpu = {"cpu": "2", "memory": "4Gi"}
    gpu_extra = {**gpu, "nvidia.com/gpu": 1, "custom.io/special": 2}
    spec = cluster_spec()
    head = spec["headGroupSpec"]["template"]
    head["metadata"]["annotations"] = {"ray.io/compute-template": "small"}
    head["spec"]["containers"][0]["resources"] = {
        "limits": {"ephemeral-storage": "1Gi", **small},
        "requests": small,
    }
    head["spec"]["containers"][1]["resources"] = {"limits": small, "requests": small}
    worker = spec["workerGroupSpecs"][0]["template"]
    worker["metadata"] = {"annotations": {"ray.io/compute-template": "gpu"}}
    worker["spec"]["containers"][0]["resources"] = {"limits": gpu_extra, "requests": gpu_extra}
    worker["spec"]["containers"][1]["resources"] = {"limits": gpu, "requests": gpu}
    worker["spec"]["tolerations"].append(
        {"key": "ray.io/node-type", "operator": "Equal", "value": "worker", "effect": "NoSchedule"}
    )
    return spec


def wrap(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    outer = {
        "RayCluster": spec,
        "RayJob": {"entrypoint": "python x.py", "rayClusterSpec": spec},
        "RayService": {"serveConfigV2": "applications: []", "rayClusterConfig": spec},
    }[kind]
    return {"apiVersion": "ray.io/v1", "kind": kind, "metadata": {"name": "x"}, "spec": outer}


@pytest.mark.parametrize("kind", ["RayCluster", "RayJob", "RayService"])
def test_templates_applied_to_each_kind(kind: str) -> None:
    body = wrap(kind, cluster_spec())
    before = copy.deepcopy(body)
    assert referenced_names(kind, body) == ["small", "gpu"]
    assert apply_templates(kind, body, TEMPLATES) == wrap(kind, applied_spec())
    assert body == before  # the input is not changed


def test_cluster_spec_is_looked_up_where_the_kind_keeps_it() -> None:
    # a RayJob body whose groups sit directly under spec names no template
    body = wrap("RayCluster", cluster_spec())
    assert referenced_names("RayJob", body) == []
    assert apply_templates("RayJob", body, TEMPLATES) == body


def test_odd_shapes_are_skipped_or_replaced_as_kuberay_does() -> None:
    spec = {
        "headGroupSpec": {"computeTemplate": "small"},  # no Pod template: nothing applied
        "workerGroupSpecs": [
            "not-a-map",
            {"computeTemplate": 5, "template": {"spec": {"containers": [{"name": "x"}]}}},
            {
                "computeTemplate": "gpu",
                "template": {
                    "metadata": "bad",
                    "spec": {
                        "containers": [{"name": "ray-worker", "resources": {"limits": None}}, 7],
                        "tolerations": "bad",
                    },
                },
            },
        ],
    }
    out = apply_templates("RayCluster", {"spec": spec}, TEMPLATES)["spec"]
    assert referenced_names("RayCluster", {"spec": spec}) == ["small", "gpu"]
    assert out["headGroupSpec"] == {"computeTemplate": "small"}
    assert out["workerGroupSpecs"][:2] == spec["workerGroupSpecs"][:2]
    third = out["workerGroupSpecs"][2]["template"]
    assert third["metadata"] == {"annotations": {"ray.io/compute-template": "gpu"}}
    assert third["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert third["spec"]["tolerations"] == [
        {"key": "ray.io/node-type", "operator": "Equal", "value": "worker", "effect": "NoSchedule"}
    ]


def test_gpu_accelerator_and_zero_gpus() -> None:
    amd = ComputeTemplate(
        name="amd", namespace="ns", cpu=1, memory=1, gpu=2, gpu_accelerator="amd.com/gpu"
    )
    none = ComputeTemplate(name="none", namespace="ns", cpu=1, memory=1)
    spec = {
        "headGroupSpec": {
            "computeTemplate": "amd",
            "template": {"spec": {"containers": [{"name": "ray-head"}]}},
        },
        "workerGroupSpecs": [
            {
                "computeTemplate": "none",
                "template": {"spec": {"containers": [{"name": "ray-worker"}]}},
            }
        ],
    }
    out = apply_templates("RayCluster", {"spec": spec}, {"amd": amd, "none": none})["spec"]
    head = out["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]
    worker = out["workerGroupSpecs"][0]["template"]["spec"]
    assert head["requests"] == {"cpu": "1", "memory": "1Gi", "amd.com/gpu": 2}
    assert worker["containers"][0]["resources"]["limits"] == {"cpu": "1", "memory": "1Gi"}
    assert "tolerations" not in worker


def test_unknown_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="RayCronJob"):
        referenced_names("RayCronJob", {"spec": {}})
