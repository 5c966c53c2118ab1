"""The proxy's body rewrite: JSON or YAML in, JSON with templates applied out."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import yaml

from kuberay.apiserver.templates import (
    BadBody,
    ComputeTemplate,
    TemplateMissing,
    UpstreamRefused,
    rewrite_body,
    template_fetcher,
)
from kuberay.apiserver.templates.bodies import MAX_BODY
from kuberay.kube.paths import InvalidPathSegment
from tests.unit.apiserver.templates.fakes import FakeCall, answer, status
from tests.unit.apiserver.templates.test_apply import TEMPLATES, applied_spec, cluster_spec, wrap

YAML_CLUSTER = """
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: demo
  annotations: {created: 2024-01-02}
spec:
  headGroupSpec:
    computeTemplate: small
    template: &pod
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray
  workerGroupSpecs:
  - groupName: gpu
    computeTemplate: gpu
    replicas: 1
    template: *pod
"""


class Lookups:
    """A fetch over a dict that records the names asked for."""

    def __init__(self, templates: dict[str, ComputeTemplate]) -> None:
        self.templates = templates
        self.asked: list[str] = []

    async def __call__(self, name: str) -> ComputeTemplate | None:
        self.asked.append(name)
        return self.templates.get(name)


async def rewrite(kind: str, content_type: str, raw: bytes | str, fetch: Any = None) -> Any:
    data = raw.encode() if isinstance(raw, str) else raw
    out = await rewrite_body(kind, content_type, data, fetch or Lookups(TEMPLATES), namespace="ns")
    return json.loads(out)


@pytest.mark.parametrize("kind", ["RayCluster", "RayJob", "RayService"])
@pytest.mark.parametrize("content_type", ["application/json", "application/yaml; charset=utf-8"])
async def test_json_and_yaml_bodies_come_out_as_json_with_templates_applied(
    kind: str, content_type: str
) -> None:
    body = wrap(kind, cluster_spec())
    raw = yaml.safe_dump(body) if "yaml" in content_type else json.dumps(body)
    fetch = Lookups(TEMPLATES)
    assert await rewrite(kind, content_type, raw, fetch) == wrap(kind, applied_spec())
    assert fetch.asked == ["small", "gpu"]


async def test_yaml_is_read_as_kubernetes_reads_it_aliases_become_copies() -> None:
    out = await rewrite("RayCluster", "text/yaml", YAML_CLUSTER)
    assert out["metadata"]["annotations"] == {"created": "2024-01-02"}  # not a date
    head = out["spec"]["headGroupSpec"]["template"]
    worker = out["spec"]["workerGroupSpecs"][0]["template"]
    assert head["metadata"]["annotations"] == {"ray.io/compute-template": "small"}
    assert worker["metadata"]["annotations"] == {"ray.io/compute-template": "gpu"}
    assert head["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1", "memory": "512Mi"}


async def test_body_without_templates_is_forwarded_as_json_without_a_read() -> None:
    fetch = Lookups({})
    body = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "spec": {"entrypoint": "x", "clusterSelector": {"a": "b"}},
        "extra": [1, 2.5, None, True],
    }
    assert await rewrite("RayJob", "", json.dumps(body), fetch) == body
    assert fetch.asked == []


async def test_missing_template_is_kuberays_422_text() -> None:
    body = wrap("RayCluster", cluster_spec())
    with pytest.raises(TemplateMissing) as caught:
        await rewrite(
            "RayCluster",
            "application/json",
            json.dumps(body),
            Lookups({"small": TEMPLATES["small"]}),
        )
    assert caught.value.name == "gpu"
    assert caught.value.message == (
        "Cannot get compute template for name 'gpu' in namespace 'ns', error: NotFoundError: "
        'Compute template gpu not found: configmaps "gpu" not found'
    )


@pytest.mark.parametrize("name", ["a/b", "..", ".", "x\r\ny", "", "a%2Fb"])
async def test_hostile_template_name_is_refused_before_any_read(name: str) -> None:
    spec = cluster_spec()
    spec["workerGroupSpecs"][1]["computeTemplate"] = name
    fetch = Lookups(TEMPLATES)
    with pytest.raises(TemplateMissing) as caught:
        await rewrite("RayCluster", "application/json", json.dumps(wrap("RayCluster", spec)), fetch)
    assert fetch.asked == []
    assert "invalid name" in caught.value.message


BILLION_LAUGHS = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    + ["spec: *i"]
)


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("application/json", "[1, 2]"),
        ("application/json", '{"spec": '),
        ("application/json", '{"a": NaN}'),
        ("application/json", "[" * 5000 + "]" * 5000),
        ("application/json", b'{"a": "' + b"x" * MAX_BODY + b'"}'),
        ("application/yaml", "a: [b"),
        ("application/yaml", "- just\n- a list\n"),
        ("application/yaml", "a: &x [*x]"),
        ("application/yaml", "a: !!binary aGVsbG8="),
        ("application/yaml", "a: .nan"),
        ("application/yaml", BILLION_LAUGHS),
    ],
)
async def test_unreadable_bodies_are_bad_bodies(content_type: str, raw: str | bytes) -> None:
    started = time.monotonic()
    with pytest.raises(BadBody) as caught:
        await rewrite("RayCluster", content_type, raw)
    assert caught.value.message == "Failed to convert request body to Golang map object"
    assert time.monotonic() - started < 2


async def test_fetcher_reads_the_configmap_as_the_caller() -> None:
    configmap = TEMPLATES["gpu"].to_configmap()
    unlabelled = {**configmap, "metadata": {"name": "plain", "namespace": "ns"}}
    call = FakeCall(
        {
            ("GET", "/api/v1/namespaces/ns/configmaps/gpu"): answer(200, configmap),
            ("GET", "/api/v1/namespaces/ns/configmaps/plain"): answer(200, unlabelled),
            ("GET", "/api/v1/namespaces/ns/configmaps/secret"): status(403, "Forbidden"),
        }
    )
    fetch = template_fetcher(call, "ns")
    assert await fetch("gpu") == TEMPLATES["gpu"]
    assert await fetch("plain") is None
    assert await fetch("absent") is None
    with pytest.raises(UpstreamRefused) as caught:
        await fetch("secret")
    assert caught.value.answer == status(403, "Forbidden")
    with pytest.raises(InvalidPathSegment, match="namespace"):
        template_fetcher(call, "a/b")
