"""camelCase dict <-> attrs model conversion: exact round trips, unknown fields, strictness."""

from __future__ import annotations

import copy
import enum
import types
import typing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kuberay_api_testutil import raycluster, rayjob, rayservice

from kuberay.api.v1 import (
    MODELS,
    ApiModel,
    AutoscalerVersion,
    HeadGroupSpec,
    RayCluster,
    RayClusterSpec,
    RayCronJob,
    RayJob,
    RayJobSpec,
    RayService,
    StructureError,
    WorkerGroupSpec,
    converter,
    structure,
    unstructure,
)
from kuberay.api.v1.convert import model_fields


def _plain(value: Any) -> bool:
    """True when a JSON-like value holds only plain builtins (no enum members)."""
    if isinstance(value, dict):
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


# --- round trips ----------------------------------------------------------------------------
@pytest.mark.parametrize("builder", [raycluster, rayjob, rayservice])
def test_round_trip_is_identity(builder: Any) -> None:
    obj = builder()
    model = structure(MODELS[obj["kind"]], obj)
    assert unstructure(model) == obj
    assert _plain(unstructure(model))


def test_snake_case_attributes_map_to_camel_case_keys() -> None:
    obj = raycluster(enableInTreeAutoscaling=True, autoscalerOptions={"version": "v2"})
    model = structure(RayCluster, obj)
    assert model.api_version == "ray.io/v1"
    assert model.spec is not None
    assert model.spec.enable_in_tree_autoscaling is True
    assert model.spec.autoscaler_options is not None
    assert model.spec.autoscaler_options.version is AutoscalerVersion.V2
    assert model.spec.head_group_spec.ray_start_params == {}
    group = (model.spec.worker_group_specs or [])[0]
    assert (group.group_name, group.min_replicas, group.max_replicas) == ("workers", 0, 3)
    assert model.name == "raycluster-test"
    assert model.namespace == "default"


def test_absent_fields_stay_absent_and_explicit_defaults_stay() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 1  # explicit default value
    del obj["spec"]["workerGroupSpecs"][0]["replicas"]
    out = unstructure(structure(RayCluster, obj))
    group = out["spec"]["workerGroupSpecs"][0]
    assert group["numOfHosts"] == 1
    assert "replicas" not in group
    assert "suspend" not in out["spec"]
    assert "status" not in out


def test_empty_containers_and_false_values_are_kept() -> None:
    obj = rayjob(shutdownAfterJobFinishes=False, suspend=False, metadata={})
    obj["spec"]["rayClusterSpec"]["headGroupSpec"]["rayStartParams"] = {}
    out = unstructure(structure(RayJob, obj))
    assert out["spec"]["shutdownAfterJobFinishes"] is False
    assert out["spec"]["suspend"] is False
    assert out["spec"]["metadata"] == {}


def test_unknown_fields_survive_at_every_level() -> None:
    obj = raycluster()
    obj["spec"]["fancyNewField"] = {"nested": [1, 2, {"x": None}]}
    obj["spec"]["workerGroupSpecs"][0]["futureKnob"] = True
    obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["newK8sField"] = "v"
    obj["status"] = {"state": "ready", "somethingNew": 3, "head": {"podIP": "1.2.3.4", "x": 1}}
    obj["topLevelExtra"] = "kept"
    model = structure(RayCluster, obj)
    assert model.spec is not None
    assert model.spec.extra == {"fancyNewField": {"nested": [1, 2, {"x": None}]}}
    assert (model.spec.worker_group_specs or [])[0].extra == {"futureKnob": True}
    assert model.extra == {"topLevelExtra": "kept"}
    assert unstructure(model) == obj


def test_unknown_fields_survive_a_modification() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["futureKnob"] = "x"
    model = structure(RayCluster, obj)
    assert model.spec is not None
    (model.spec.worker_group_specs or [])[0].replicas = 2
    out = unstructure(model)
    assert out["spec"]["workerGroupSpecs"][0] == {
        **obj["spec"]["workerGroupSpecs"][0],
        "replicas": 2,
    }


def test_explicit_null_round_trips_and_yields_to_a_set_value() -> None:
    obj = raycluster()
    obj["spec"]["suspend"] = None
    model = structure(RayCluster, obj)
    assert model.spec is not None
    assert model.spec.suspend is None
    assert unstructure(model) == obj
    model.spec.suspend = True
    assert unstructure(model)["spec"]["suspend"] is True


def test_embedded_kubernetes_objects_are_copied_verbatim() -> None:
    obj = raycluster()
    template = obj["spec"]["headGroupSpec"]["template"]
    template["metadata"] = {"labels": {"a": "b"}, "annotations": {"x": "y"}}
    template["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    model = structure(RayCluster, obj)
    assert model.spec is not None
    assert model.spec.head_group_spec.template == template
    assert model.spec.head_group_spec.template is not template  # not aliased to the input
    model.spec.head_group_spec.template["metadata"]["labels"]["a"] = "changed"
    assert template["metadata"]["labels"]["a"] == "b"
    out = unstructure(model)
    out["spec"]["headGroupSpec"]["template"]["metadata"]["labels"]["a"] = "again"
    assert model.spec.head_group_spec.template["metadata"]["labels"]["a"] == "changed"


def test_integers_for_float_fields_stay_integers() -> None:
    obj = rayjob(entrypointNumCpus=1, entrypointNumGpus=0.5)
    out = unstructure(structure(RayJob, obj))
    assert type(out["spec"]["entrypointNumCpus"]) is int
    assert out["spec"]["entrypointNumGpus"] == 0.5


def test_quantities_keep_their_json_type() -> None:
    obj = raycluster(gcsFaultToleranceOptions={"backend": "rocksdb", "storage": {"size": "1Gi"}})
    obj["status"] = {"desiredCPU": "2", "desiredMemory": 1073741824}
    out = unstructure(structure(RayCluster, obj))
    assert out["spec"]["gcsFaultToleranceOptions"]["storage"]["size"] == "1Gi"
    assert out["status"]["desiredMemory"] == 1073741824


def test_enums_unstructure_to_plain_strings() -> None:
    obj = raycluster(autoscalerOptions={"version": "v1", "upscalingMode": "Aggressive"})
    out = unstructure(structure(RayCluster, obj))
    assert type(out["spec"]["autoscalerOptions"]["version"]) is str
    assert _plain(out)


def test_cattrs_converter_is_usable_directly() -> None:
    obj = rayservice()
    model = converter.structure(obj, RayService)
    assert isinstance(model, RayService)
    assert converter.unstructure(model) == obj


def test_create_fills_type_meta() -> None:
    spec = RayClusterSpec(head_group_spec=HeadGroupSpec(template={"spec": {"containers": []}}))
    cluster = RayCluster.create(metadata={"name": "c"}, spec=spec)
    assert unstructure(cluster) == {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "c"},
        "spec": {"headGroupSpec": {"template": {"spec": {"containers": []}}}},
    }
    assert RayJob.create(metadata={}, spec=RayJobSpec()).kind == "RayJob"


def test_structure_does_not_mutate_its_input() -> None:
    obj = raycluster()
    before = copy.deepcopy(obj)
    model = structure(RayCluster, obj)
    assert model.spec is not None
    model.spec.head_group_spec.template["spec"]["containers"].append({"name": "x"})
    assert obj == before


# --- strictness and error paths ------------------------------------------------------------
def test_type_errors_report_json_paths() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = "3"
    obj["spec"]["enableInTreeAutoscaling"] = "true"
    obj["spec"]["headGroupSpec"]["rayStartParams"] = {"num-cpus": 1}
    with pytest.raises(StructureError) as info:
        structure(RayCluster, obj)
    errors = {e.path: e.message for e in info.value.errors}
    assert errors == {
        "spec.workerGroupSpecs[0].replicas": "expected an integer, got string",
        "spec.enableInTreeAutoscaling": "expected a boolean, got string",
        "spec.headGroupSpec.rayStartParams[num-cpus]": "expected a string, got integer",
    }


def test_bool_is_not_an_integer() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["maxReplicas"] = True
    with pytest.raises(StructureError, match=r"maxReplicas: expected an integer, got boolean"):
        structure(RayCluster, obj)


def test_missing_required_fields_are_reported() -> None:
    obj = raycluster()
    del obj["spec"]["workerGroupSpecs"][0]["template"]
    del obj["spec"]["workerGroupSpecs"][0]["groupName"]
    with pytest.raises(StructureError) as info:
        structure(RayCluster, obj)
    assert {e.path for e in info.value.errors} == {
        "spec.workerGroupSpecs[0].template",
        "spec.workerGroupSpecs[0].groupName",
    }
    assert all(e.message == "Required value" for e in info.value.errors)


def test_enum_values_outside_the_crd_enum_are_rejected() -> None:
    obj = rayjob(
        deletionStrategy={
            "deletionRules": [{"policy": "DeleteAll", "condition": {"jobStatus": "RUNNING"}}]
        }
    )
    with pytest.raises(StructureError) as info:
        structure(RayJob, obj)
    paths = {e.path for e in info.value.errors}
    assert paths == {
        "spec.deletionStrategy.deletionRules[0].policy",
        "spec.deletionStrategy.deletionRules[0].condition.jobStatus",
    }
    assert all("unsupported value" in e.message for e in info.value.errors)


def test_non_object_where_object_expected() -> None:
    with pytest.raises(StructureError, match=r"spec: expected an object, got array"):
        structure(RayService, {"spec": []})


def test_open_string_fields_accept_any_value() -> None:
    obj = rayjob(submissionMode="SomeFutureMode")
    model = structure(RayJob, obj)
    assert model.spec is not None
    assert model.spec.submission_mode == "SomeFutureMode"
    assert unstructure(model) == obj


# --- hypothesis -----------------------------------------------------------------------------
_TEXT = st.text(alphabet="abcXYZ-_./:0123 ", max_size=8)
_JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), _TEXT)
_JSON = st.recursive(
    _JSON_SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=6,
)
_INT32 = st.integers(-(2**31), 2**31 - 1)


def _strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return tp


def _value_strategy(
    tp: Any, enum_values: tuple[str, ...] | None, depth: int
) -> st.SearchStrategy[Any]:
    tp = _strip_optional(tp)
    if tp is Any:
        return st.dictionaries(_TEXT, _JSON, max_size=3)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        allowed = [m for m in tp if enum_values is None or m.value in enum_values]
        return st.sampled_from(allowed)
    if tp is str:
        return _TEXT
    if tp is bool:
        return st.booleans()
    if tp is int:
        return _INT32
    if tp is float:
        return st.one_of(_INT32, st.floats(allow_nan=False, allow_infinity=False, width=32))
    if typing.get_origin(tp) in (typing.Union, types.UnionType):  # quantity: str | int
        return st.one_of(_TEXT, _INT32)
    if isinstance(tp, type) and issubclass(tp, ApiModel):
        return _model_strategy(tp, depth + 1)
    origin = typing.get_origin(tp)
    if origin is list:
        (item,) = typing.get_args(tp)
        return st.lists(_value_strategy(item, enum_values, depth), max_size=2)
    if origin is dict:
        _, value = typing.get_args(tp)
        return st.dictionaries(_TEXT, _value_strategy(value, enum_values, depth), max_size=2)
    raise TypeError(tp)


def _model_strategy(cls: type[ApiModel], depth: int = 0) -> st.SearchStrategy[Any]:
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for mf in model_fields(cls):
        value = _value_strategy(mf.type, mf.meta.enum, depth)
        if mf.meta.required:
            kwargs[mf.name] = value
        elif depth < 3:
            kwargs[mf.name] = st.one_of(st.none(), value)
        else:
            kwargs[mf.name] = st.none()
    known = {mf.json for mf in model_fields(cls)}
    extra = st.dictionaries(
        _TEXT.map(lambda s: "x-" + s).filter(lambda s: s not in known), _JSON, max_size=2
    )
    return st.builds(cls, extra=extra, **kwargs)


@pytest.mark.parametrize("cls", [RayCluster, RayJob, RayService, RayCronJob])
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_hypothesis_model_round_trip(cls: type[ApiModel], data: st.DataObject) -> None:
    model = data.draw(_model_strategy(cls))
    as_dict = unstructure(model)
    assert _plain(as_dict)
    assert structure(cls, as_dict) == model
    assert unstructure(structure(cls, as_dict)) == as_dict


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=_model_strategy(WorkerGroupSpec),
    unknown=st.dictionaries(st.sampled_from(["newA", "newB", "zz"]), _JSON, max_size=3),
)
def test_hypothesis_dict_round_trip_with_unknown_keys(
    spec: WorkerGroupSpec, unknown: dict[str, Any]
) -> None:
    as_dict = unstructure(spec)
    as_dict.update(unknown)
    assert unstructure(structure(WorkerGroupSpec, as_dict)) == as_dict
