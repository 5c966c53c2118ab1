"""labelRefs checks: the webhooks' ``validateLabelRefs`` (first problem, KubeRay's words,
against allowedNodeLabels) and the controllers' own (gate, Ray version)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuberay.api.v1 import validate_raycluster, validate_rayjob
from kuberay.api.v1.convert import structure
from kuberay.api.v1.raycluster_types import RayClusterSpec
from kuberay.api.v1.validation.label_refs import (
    cluster_spec_of,
    node_label_key,
    validate_label_refs,
    webhooks_required_error,
)

ZONE, CLIQUE = "topology.kubernetes.io/zone", "nvidia.com/gpu.clique"
ALLOWED = (ZONE, CLIQUE)
ON = {"NodeLabelDelivery": True}


def ref(key: str, name: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"valueFrom": {"nodeRef": {"fieldPath": f"metadata.labels['{key}']"}}}
    if name:
        out["name"] = name
    return out


def cluster(version: str = "2.52.0") -> dict[str, Any]:
    container = {"name": "ray-worker", "image": "rayproject/ray:2.52.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "topo", "namespace": "default"},
        "spec": {
            "rayVersion": version,
            "headGroupSpec": {"template": {"spec": {"containers": [dict(container)]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "train",
                    "minReplicas": 0,
                    "maxReplicas": 2,
                    "labelRefs": [ref(ZONE, "ray.io/zone"), ref(CLIQUE)],
                    "template": {"spec": {"containers": [dict(container)]}},
                }
            ],
        },
    }


def _first(obj: dict[str, Any], annotations: dict[str, str] | None = None, **kw: Any) -> Any:
    spec = structure(RayClusterSpec, obj["spec"])
    return validate_label_refs(spec, annotations, kw.pop("allowed", ALLOWED), "spec", **kw)


GROUP = ("spec", "workerGroupSpecs", 0)


def _set(obj: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj.setdefault(key, {}) if isinstance(key, str) else obj[key]
    obj[path[-1]] = value


# (what is wrong, where it is set, value, error path suffix, kind, words of the message)
CASES = [
    (
        "overwrite annotation on the template",
        (*GROUP, "template", "metadata"),
        {"annotations": {"ray.io/overwrite-container-cmd": "TRUE"}},
        "labelRefs",
        "Forbidden",
        "cannot be combined with the ray.io/overwrite-container-cmd annotation; node label "
        "delivery needs the KubeRay-generated ray start command",
    ),
    (
        "command runs ray start",
        (*GROUP, "template", "spec", "containers", 0, "command"),
        ["ray start --address=head:6379 --block"],
        "labelRefs",
        "Forbidden",
        "cannot be combined with a container command that runs ray start; node label delivery "
        "needs the KubeRay-generated ray start command",
    ),
    (
        "RAY_NODE_LABELS_JSON in the template",
        (*GROUP, "template", "spec", "containers", 0, "env"),
        [{"name": "RAY_NODE_LABELS_JSON", "value": "{}"}],
        "labelRefs",
        "Forbidden",
        "cannot be combined with the RAY_NODE_LABELS_JSON env var in the pod template; it is "
        "managed by KubeRay",
    ),
    (
        "rayStartParams labels",
        (*GROUP, "rayStartParams"),
        {"labels": "a=b"},
        "labelRefs",
        "Forbidden",
        "cannot be combined with rayStartParams labels",
    ),
    (
        "rayStartParams labels-file",
        (*GROUP, "rayStartParams"),
        {"labels-file": "/x.yaml"},
        "labelRefs",
        "Forbidden",
        "cannot be combined with rayStartParams labels-file",
    ),
    (
        "Ray key also a static label",
        (*GROUP, "labels"),
        {"ray.io/zone": "static"},
        "labelRefs[0]",
        "Forbidden",
        'Ray label "ray.io/zone" is also set in labels; the static value would override the '
        "delivered one",
    ),
    (
        "fieldPath not a node label",
        (*GROUP, "labelRefs", 1, "valueFrom", "nodeRef", "fieldPath"),
        f"metadata.annotations['{CLIQUE}']",
        "labelRefs[1].valueFrom.nodeRef.fieldPath",
        "Invalid",
        "only metadata.labels['<key>'] is supported",
    ),
    (
        "node label outside the allowlist",
        (*GROUP, "labelRefs", 1, "valueFrom", "nodeRef", "fieldPath"),
        "metadata.labels['cloud.google.com/gke-nodepool']",
        "labelRefs[1].valueFrom.nodeRef.fieldPath",
        "Forbidden",
        'node label "cloud.google.com/gke-nodepool" is not in the operator\'s allowedNodeLabels',
    ),
]


@pytest.mark.parametrize(("what", "where", "value", "path", "kind", "message"), CASES)
def test_each_webhook_rule_reports_its_field_and_words(
    what: str, where: tuple[Any, ...], value: Any, path: str, kind: str, message: str
) -> None:
    obj = cluster()
    assert _first(obj, gates=ON) is None  # the near miss: the same object without the fault
    _set(obj, where, copy.deepcopy(value))
    error = _first(obj, gates=ON)
    assert error is not None, what
    assert (error.path, error.kind, error.message, error.source) == (
        f"spec.workerGroupSpecs[0].{path}",
        kind,
        message,
        "webhook",
    )


def test_overwrite_annotation_on_the_cr_and_bad_keys_and_duplicates() -> None:
    obj = cluster()
    error = _first(obj, {"ray.io/overwrite-container-cmd": "true"}, gates=ON)
    assert error is not None and "ray.io/overwrite-container-cmd annotation" in error.message
    bad = cluster()
    bad["spec"]["workerGroupSpecs"][0]["labelRefs"][0]["name"] = "ray zone!"
    error = _first(bad, gates=ON)
    assert error is not None and error.path.endswith("labelRefs[0].name")
    assert error.value == "ray zone!" and "name part must consist of" in error.message
    malformed = cluster()
    malformed["spec"]["workerGroupSpecs"][0]["labelRefs"][1] = ref("bad key!")
    error = _first(malformed, allowed=(*ALLOWED, "bad key!"), gates=ON)
    assert error is not None and error.path.endswith("labelRefs[1].valueFrom.nodeRef.fieldPath")
    assert error.value == "bad key!"
    duplicate = cluster()
    duplicate["spec"]["workerGroupSpecs"][0]["labelRefs"][1]["name"] = "ray.io/zone"
    error = _first(duplicate, gates=ON)
    assert error is not None
    assert (error.kind, error.value, error.path) == (
        "Duplicate",
        "ray.io/zone",
        "spec.workerGroupSpecs[0].labelRefs[1]",
    )


def test_gate_off_refuses_labelrefs_and_nothing_else() -> None:
    obj = cluster()
    error = _first(obj)
    assert error is not None and error.kind == "Forbidden"
    assert error.message == "requires the NodeLabelDelivery feature gate to be enabled"
    del obj["spec"]["workerGroupSpecs"][0]["labelRefs"]
    assert _first(obj) is None


def test_node_label_key_reads_only_the_labels_form() -> None:
    assert node_label_key(f"metadata.labels['{ZONE}']") == ZONE
    for bad in ("metadata.labels['']", "metadata.labels[zone]", "spec.nodeName", "metadata.labels"):
        with pytest.raises(ValueError, match=r"only metadata.labels\['<key>'\] is supported"):
            node_label_key(bad)


def test_controller_rules_gate_and_ray_version_apply_to_embedded_specs() -> None:
    obj = cluster(version="2.44.1")
    texts = [str(e) for e in validate_raycluster(obj) if e.source == "spec"]
    assert texts == [
        "spec.workerGroupSpecs[0].labelRefs requires the NodeLabelDelivery feature gate to be "
        "enabled"
    ]
    texts = [str(e) for e in validate_raycluster(obj, gates=ON) if e.source == "spec"]
    assert texts == [
        "spec.workerGroupSpecs[0].labelRefs requires rayVersion 2.45.0 or later (ray start "
        '--labels-file), got "2.44.1"'
    ]
    assert not [e for e in validate_raycluster(cluster("2.45.0"), gates=ON) if e.source == "spec"]
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {"entrypoint": "python x.py", "rayClusterSpec": cluster()["spec"]},
    }
    paths = [e.path for e in validate_rayjob(job) if e.source == "spec"]
    assert paths == ["spec.rayClusterSpec.workerGroupSpecs[0].labelRefs"]
    found = cluster_spec_of("RayJob", job)
    assert found is not None and found[1] == "spec.rayClusterSpec"


def test_without_webhooks_the_controller_names_the_group() -> None:
    spec = structure(RayClusterSpec, cluster()["spec"])
    error = webhooks_required_error(spec)
    assert error is not None and error.path == "spec.workerGroupSpecs[0].labelRefs"
    assert "ENABLE_WEBHOOKS=true" in error.message
    spec.worker_group_specs[0].label_refs = None  # type: ignore[index]
    assert webhooks_required_error(spec) is None
