"""The spec hash must be byte-identical to KubeRay's (Go encoding/json + SHA-1 + base32hex)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from builders_testlib import fixture_p, load_gz

from kuberay.controllers.builders.hashing import (
    generate_hash_without_replicas_and_workers_to_delete,
    generate_json_hash,
    muted_spec_for_hash,
    ray_cluster_recreate_hash,
)
from kuberay.controllers.common.defaults import with_default_ray_start_params
from kuberay.gocompat.go_struct_schema import RAY_CLUSTER_SPEC
from kuberay.gocompat.gojson import format_go_float, go_string, marshal

VECTORS: list[dict[str, Any]] = load_gz("go_spec_hash_vectors.json.gz")


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_go_json_bytes_and_hashes(vector: dict[str, Any]) -> None:
    spec = vector["spec"]
    assert marshal(muted_spec_for_hash(spec), RAY_CLUSTER_SPEC).decode() == vector["json"]
    assert generate_hash_without_replicas_and_workers_to_delete(spec) == vector["hash"]
    defaulted = with_default_ray_start_params(spec)
    assert (
        generate_hash_without_replicas_and_workers_to_delete(defaulted)
        == (vector["hash_defaulted"])
    )


def test_known_hash_of_minimal_cluster() -> None:
    cluster = {
        "metadata": {"name": "raycluster-sample", "namespace": "default"},
        "spec": {
            "headGroupSpec": {
                "template": {
                    "spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.9.0"}]}
                }
            },
            "workerGroupSpecs": [
                {
                    "groupName": "g",
                    "template": {
                        "spec": {"containers": [{"name": "w", "image": "rayproject/ray:2.9.0"}]}
                    },
                }
            ],
        },
    }
    # Computed by KubeRay's GenerateHashWithoutReplicasAndWorkersToDelete after setDefaults.
    assert ray_cluster_recreate_hash(cluster) == "7UIP023G28KBEC0CT8MGBFPN7UV0BKEP"


def test_hash_ignores_scaling_and_scheduling_fields() -> None:
    base = fixture_p()["spec"]
    changed = copy.deepcopy(base)
    group = changed["workerGroupSpecs"][0]
    group.update(replicas=1, minReplicas=1, maxReplicas=9, scaleStrategy={"workersToDelete": ["a"]})
    group["template"]["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    changed["headGroupSpec"]["template"]["spec"]["schedulingGates"] = [{"name": "kueue"}]
    changed["upgradeStrategy"] = {"type": "Recreate"}
    h = generate_hash_without_replicas_and_workers_to_delete
    assert h(base) == h(changed)
    changed["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"] = "other"
    assert h(base) != h(changed)


def test_scale_gates_never_change_the_hash() -> None:
    """KubeRay v1.8: Kueue adding or removing a gate must neither replace a ``Recreate``
    cluster's pods (head recreate hash) nor make RayService build a new cluster."""
    cluster = fixture_p()
    gated = copy.deepcopy(cluster)
    gated["spec"]["workerGroupSpecs"][0]["scaleStrategy"] = {
        "scaleGate": [{"type": "kueue.k8s.io/quota-exceeded"}, {"type": "example.com/cordon"}]
    }
    h = generate_hash_without_replicas_and_workers_to_delete
    assert h(gated["spec"]) == h(cluster["spec"])
    assert ray_cluster_recreate_hash(gated) == ray_cluster_recreate_hash(cluster)
    # the Go struct knows the field (v1.8's ScaleStrategy): it is muted, not silently dropped
    strategy = {"workersToDelete": ["w"], "scaleGate": [{"type": "a/b"}]}
    assert marshal(strategy, "ray/v1.ScaleStrategy") == (
        b'{"workersToDelete":["w"],"scaleGate":[{"type":"a/b"}]}'
    )


def test_hash_is_insensitive_to_key_order_and_unknown_fields() -> None:
    spec = fixture_p()["spec"]
    reordered = json.loads(json.dumps(spec, sort_keys=True))
    reordered["headGroupSpec"]["template"]["spec"]["notAField"] = 1
    h = generate_hash_without_replicas_and_workers_to_delete
    assert h(spec) == h(reordered)


def test_default_ray_start_params_change_the_hash() -> None:
    spec = fixture_p()["spec"]
    del spec["headGroupSpec"]["rayStartParams"]
    h = generate_hash_without_replicas_and_workers_to_delete
    assert h(spec) != h(with_default_ray_start_params(spec))


def test_hash_does_not_mutate_input() -> None:
    spec = fixture_p()["spec"]
    spec["upgradeStrategy"] = {"type": "Recreate"}
    before = copy.deepcopy(spec)
    generate_hash_without_replicas_and_workers_to_delete(spec)
    assert spec == before


def test_json_hash_alphabet() -> None:
    digest = generate_json_hash(b"{}")
    assert len(digest) == 32
    assert set(digest) <= set("0123456789ABCDEFGHIJKLMNOPQRSTUV")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", '"plain"'),
        ("<a & b>", '"\\u003ca \\u0026 b\\u003e"'),
        ('q"\\', '"q\\"\\\\"'),
        ("\n\t\r\b\f\x01", '"\\n\\t\\r\\b\\f\\u0001"'),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ("é😀\x7f", '"é😀\x7f"'),
    ],
)
def test_go_string_escaping(text: str, expected: str) -> None:
    assert go_string(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (4.0, "4"),
        (1.5, "1.5"),
        (1.5000000000000002, "1.5000000000000002"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (-2.5, "-2.5"),
        (0.0, "0"),
    ],
)
def test_go_float_format(value: float, expected: str) -> None:
    assert format_go_float(value) == expected
