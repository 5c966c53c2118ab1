"""ComputeTemplate: KubeRay's request, answer and ConfigMap shapes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kuberay.apiserver.templates.model import (
    ComputeTemplate,
    TemplateInvalid,
    Toleration,
    create_problem,
    from_configmap,
    is_template,
    parse_request,
)

FULL = ComputeTemplate(
    name="gpu-small",
    namespace="team-a",
    cpu=2,
    memory=4,
    gpu=1,
    gpu_accelerator="nvidia.com/gpu",
    tolerations=(Toleration("ray.io/node-type", "Equal", "worker", "NoSchedule"),),
    extended_resources={"vpc.amazonaws.com/efa": 32, "custom.io/b": 2},
    memory_unit="Gi",
)


def test_request_takes_proto_and_json_names_numbers_and_decimal_strings() -> None:
    by_json_names = parse_request(
        {
            "name": "gpu-small",
            "namespace": "team-a",
            "cpu": "2",
            "memory": 4.0,
            "gpu": 1,
            "gpuAccelerator": "nvidia.com/gpu",
            "tolerations": [
                {
                    "key": "ray.io/node-type",
                    "operator": "Equal",
                    "value": "worker",
                    "effect": "NoSchedule",
                }
            ],
            "extendedResources": {"vpc.amazonaws.com/efa": 32, "custom.io/b": "2"},
            "memoryUnit": "Gi",
            "unknownField": {"ignored": True},
        }
    )
    renamed = {
        "gpuAccelerator": "gpu_accelerator",
        "extendedResources": "extended_resources",
        "memoryUnit": "memory_unit",
    }
    by_proto_names = parse_request({renamed.get(k, k): v for k, v in FULL.to_json().items()})
    assert by_json_names == FULL
    assert by_proto_names == FULL


def test_request_defaults_the_memory_unit_and_null_means_unset() -> None:
    template = parse_request({"name": "t", "namespace": "n", "cpu": 1, "memory": 2, "gpu": None})
    assert (template.memory_unit, template.gpu, template.tolerations) == ("Gi", 0, ())


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"cpu": -1}, "cpu"),
        ({"cpu": 2**32}, "cpu"),
        ({"memory": "4Gi"}, "memory"),
        ({"gpu": True}, "gpu"),
        ({"name": 7}, "name"),
        ({"tolerations": {"key": "a"}}, "tolerations"),
        ({"tolerations": [{"key": 1}]}, "tolerations.key"),
        ({"extendedResources": {"x": 1.5}}, "extendedResources"),
        ({"memory_unit": "Gi", "memoryUnit": "Mi"}, "memoryUnit"),
        ([], "object"),
    ],
)
def test_request_of_the_wrong_type_is_refused_naming_the_field(raw: Any, field: str) -> None:
    with pytest.raises(TemplateInvalid, match=field.replace(".", r"\.")):
        parse_request(raw)


def test_answer_uses_json_names_numbers_and_leaves_zero_values_out() -> None:
    assert FULL.to_json() == {
        "name": "gpu-small",
        "namespace": "team-a",
        "cpu": 2,
        "memory": 4,
        "gpu": 1,
        "gpuAccelerator": "nvidia.com/gpu",
        "tolerations": [
            {
                "key": "ray.io/node-type",
                "operator": "Equal",
                "value": "worker",
                "effect": "NoSchedule",
            }
        ],
        "extendedResources": {"vpc.amazonaws.com/efa": 32, "custom.io/b": 2},
        "memoryUnit": "Gi",
    }
    plain = ComputeTemplate(name="t", namespace="n", cpu=1, memory=2)
    assert plain.to_json() == {
        "name": "t",
        "namespace": "n",
        "cpu": 1,
        "memory": 2,
        "memoryUnit": "Gi",
    }


def test_configmap_is_kuberays_and_reads_back() -> None:
    configmap = FULL.to_configmap()
    assert configmap["metadata"] == {
        "name": "gpu-small",
        "namespace": "team-a",
        "labels": {
            "ray.io/config-type": "compute-template",
            "ray.io/compute-template": "gpu-small",
        },
    }
    assert configmap["data"] == {
        "name": "gpu-small",
        "namespace": "team-a",
        "cpu": "2",
        "memory": "4",
        "memory_unit": "Gi",
        "gpu": "1",
        "gpu_accelerator": "nvidia.com/gpu",
        "extended_resources": '{"custom.io/b":2,"vpc.amazonaws.com/efa":32}',
        "tolerations": '[{"key":"ray.io/node-type","operator":"Equal","value":"worker",'
        '"effect":"NoSchedule"}]',
    }
    assert is_template(configmap)
    assert from_configmap(configmap) == FULL


def test_plain_configmap_has_kuberays_null_map_and_no_tolerations_key() -> None:
    data = ComputeTemplate(name="t", namespace="n", cpu=1, memory=2).to_configmap()["data"]
    assert data["extended_resources"] == "null"
    assert data["gpu"] == "0" and data["gpu_accelerator"] == ""
    assert "tolerations" not in data


def test_configmap_with_unreadable_values_reads_as_kuberay_reads_it() -> None:
    configmap = {
        "metadata": {"name": "t", "namespace": "n"},
        "data": {
            "cpu": "two",
            "memory": "99999999999",
            "tolerations": "[oops",
            "extended_resources": json.dumps({"ok": 1, "bad": "x"}),
        },
    }
    template = from_configmap(configmap)
    assert (template.cpu, template.memory, template.memory_unit) == (0, 0, "")
    assert template.tolerations == ()
    assert dict(template.extended_resources) == {"ok": 1}
    assert not is_template(configmap)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"namespace": "other"}, "The namespace in the request is different"),
        ({"name": ""}, "Compute template name is empty. Please specify a valid value."),
        ({"cpu": 0}, "Cpu amount is zero. Please specify a valid value."),
        ({"memory": 0}, "Memory amount is zero. Please specify a valid value."),
        ({"name": "a/b"}, "may not contain '/'"),
        ({"name": "a\r\nb"}, "control characters"),
        ({"memoryUnit": "Gx"}, 'invalid memory quantity "4Gx"'),
    ],
)
def test_create_rules_in_kuberays_order_and_words(change: dict[str, Any], expected: str) -> None:
    template = parse_request({**FULL.to_json(), **change})
    problem = create_problem(template, "team-a")
    assert problem is not None and expected in problem
    assert create_problem(FULL, "team-a") is None
