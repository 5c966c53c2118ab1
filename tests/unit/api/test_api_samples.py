"""Every sample CR (KubeRay's reference samples and the project's own) round-trips losslessly and
validates cleanly after the defaults the apiserver applies."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from kuberay_api_testutil import ALL_GATES_ON, OWN_SAMPLES, REFERENCE_SAMPLES, ray_documents

from kuberay.api.v1 import (
    MODELS,
    ApiModel,
    FieldError,
    default_raycluster,
    default_raycronjob,
    default_rayjob,
    default_rayservice,
    structure,
    unstructure,
    validate_raycluster,
    validate_raycronjob,
    validate_rayjob,
    validate_rayservice,
)
from kuberay.api.v1.convert import model_fields
from tests.kuberay_samples import AVAILABLE, requires_kuberay_samples

VALIDATORS: dict[str, Callable[..., list[FieldError]]] = {
    "RayCluster": validate_raycluster,
    "RayJob": validate_rayjob,
    "RayService": validate_rayservice,
    "RayCronJob": validate_raycronjob,
}
DEFAULTERS: dict[str, Callable[[Any], Any]] = {
    "RayCluster": default_raycluster,
    "RayJob": default_rayjob,
    "RayService": default_rayservice,
    "RayCronJob": default_raycronjob,
}
GATES_ANNOTATION = "test.kuberay.io/feature-gates"
EXPECTED_ERROR_ANNOTATION = "test.kuberay.io/expected-error"

REFERENCE = ray_documents(REFERENCE_SAMPLES) if AVAILABLE else []
#: the samples `make run` suggests (manifests/samples), checked as the project's own
TOUR_SAMPLES = OWN_SAMPLES.parents[1] / "manifests" / "samples"
OWN = ray_documents(OWN_SAMPLES) + [(f"tour/{i}", d) for i, d in ray_documents(TOUR_SAMPLES)]
OWN_INVALID = ray_documents(OWN_SAMPLES / "invalid")

#: Reference samples using features behind KubeRay feature gates that are off by default.
REFERENCE_GATED = {
    "ray-cluster.embedded-gcs-ft.yaml#0": {"GCSFaultToleranceEmbeddedStorage": True},
    "ray-cluster.historyserver.yaml#0": {"RayClusterHistoryServer": True},
    "ray-cluster.mtls.yaml#0": {"RayClusterMTLS": True},
    "ray-cluster.network-policy-deny-all.yaml#0": {"RayClusterNetworkPolicy": True},
}


def _unknown_fields(model: Any, path: str = "") -> list[str]:
    """Paths of every ``extra`` entry (fields the models do not know) in a model tree."""
    out: list[str] = []
    if isinstance(model, ApiModel):
        out.extend(f"{path}.{key}" for key in model.extra)
        for mf in model_fields(type(model)):
            out.extend(_unknown_fields(getattr(model, mf.name), f"{path}.{mf.json}"))
    elif isinstance(model, list):
        for i, item in enumerate(model):
            out.extend(_unknown_fields(item, f"{path}[{i}]"))
    elif isinstance(model, dict):
        for key, item in model.items():
            out.extend(_unknown_fields(item, f"{path}[{key}]"))
    return out


def _as_created(doc: dict[str, Any]) -> dict[str, Any]:
    """The object as the apiserver would hold it: a generated name for ``generateName``."""
    obj = copy.deepcopy(doc)
    metadata = obj.setdefault("metadata", {})
    if "name" not in metadata and "generateName" in metadata:
        metadata["name"] = metadata["generateName"] + "x7k2p"
    return obj


def _round_trip(doc: dict[str, Any]) -> None:
    before = copy.deepcopy(doc)
    model = structure(MODELS[doc["kind"]], doc)
    assert doc == before
    assert unstructure(model) == doc
    assert _unknown_fields(model) == [], "the models should know every field KubeRay has"
    assert structure(MODELS[doc["kind"]], unstructure(model)) == model


def _validate(doc: dict[str, Any], gates: dict[str, bool] | None) -> list[FieldError]:
    model = structure(MODELS[doc["kind"]], _as_created(doc))
    return VALIDATORS[doc["kind"]](DEFAULTERS[doc["kind"]](model), gates=gates)


@requires_kuberay_samples
@pytest.mark.parametrize(("sample_id", "doc"), REFERENCE, ids=[i for i, _ in REFERENCE])
def test_reference_sample_round_trips(sample_id: str, doc: dict[str, Any]) -> None:
    _round_trip(doc)


@requires_kuberay_samples
@pytest.mark.parametrize(("sample_id", "doc"), REFERENCE, ids=[i for i, _ in REFERENCE])
def test_reference_sample_validates(sample_id: str, doc: dict[str, Any]) -> None:
    assert [str(e) for e in _validate(doc, REFERENCE_GATED.get(sample_id))] == []


@requires_kuberay_samples
def test_reference_gated_samples_need_their_gates() -> None:
    by_id = dict(REFERENCE)
    for sample_id, gates in REFERENCE_GATED.items():
        errors = _validate(by_id[sample_id], None)
        assert errors, sample_id
        assert all(name in errors[0].message for name in gates), errors[0].message


@requires_kuberay_samples
def test_reference_samples_cover_every_kind() -> None:
    assert {doc["kind"] for _, doc in REFERENCE} == set(VALIDATORS)


@pytest.mark.parametrize(("sample_id", "doc"), OWN, ids=[i for i, _ in OWN])
def test_own_sample_round_trips(sample_id: str, doc: dict[str, Any]) -> None:
    _round_trip(doc)


@pytest.mark.parametrize(("sample_id", "doc"), OWN, ids=[i for i, _ in OWN])
def test_own_sample_validates(sample_id: str, doc: dict[str, Any]) -> None:
    annotations = doc["metadata"].get("annotations", {})
    needed = [g for g in annotations.get(GATES_ANNOTATION, "").split(",") if g]
    gates = {name: True for name in needed}
    assert [str(e) for e in _validate(doc, gates)] == []
    assert [str(e) for e in _validate(doc, ALL_GATES_ON)] == []
    if needed:
        assert _validate(doc, None), f"{sample_id} should need gates {needed}"


@pytest.mark.parametrize(("sample_id", "doc"), OWN_INVALID, ids=[i for i, _ in OWN_INVALID])
def test_own_invalid_sample_is_rejected(sample_id: str, doc: dict[str, Any]) -> None:
    _round_trip(doc)
    expected = doc["metadata"]["annotations"][EXPECTED_ERROR_ANNOTATION]
    errors = _validate(doc, None)
    assert errors, sample_id
    assert expected in errors[0].message


def test_own_samples_cover_every_kind_and_mode() -> None:
    kinds = {doc["kind"] for _, doc in OWN}
    assert kinds == set(VALIDATORS)
    modes = {
        (doc["spec"].get("submissionMode") or "K8sJobMode")
        for _, doc in OWN
        if doc["kind"] == "RayJob"
    }
    assert modes == {"K8sJobMode", "HTTPMode", "SidecarMode", "InteractiveMode"}
    strategies = {
        doc["spec"].get("upgradeStrategy", {}).get("type")
        for sample_id, doc in OWN
        if doc["kind"] == "RayService" and not sample_id.startswith("tour/")
    }
    assert strategies == {"NewCluster", "NewClusterWithIncrementalUpgrade", "None"}
