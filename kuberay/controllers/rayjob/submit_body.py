"""The HTTPMode ``POST /api/jobs/`` body (KubeRay ``ConvertRayJobToReq`` + ``json.Marshal``).

Keys in KubeRay's order, empty ones left out as Go's ``omitempty`` does:
``runtime_env`` (runtimeEnvYAML decoded into ``map[string]interface{}``; omitted when null or
``{}``), ``metadata`` (omitted when empty), ``entrypoint_resources`` (the JSON string decoded into
``map[string]float32``; omitted when null or ``{}``), ``entrypoint`` (always, not trimmed),
``submission_id`` (``status.jobId``; omitted when empty), ``entrypoint_num_cpus`` and
``entrypoint_num_gpus`` (float32; omitted when zero).

Numbers are the values Go writes (runtime env numbers as float64, the others as float32), as
Python ints when integral so ``json.dumps`` prints them the same way; map keys are sorted as Go
writes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kuberay.controllers.builders.submit_command import RayJobBuildError, float32_field
from kuberay.controllers.common.objects import as_str, spec, str_map
from kuberay.gocompat.go_text import float32_json_value, to_float32
from kuberay.gocompat.goyaml import GoYAMLError, go_json_number, load_go_yaml, marshal_go_json

__all__ = ["build_job_submit_body", "entrypoint_resources"]


def _go_numbers(value: object) -> object:
    """A decoded runtime env with every number as Go's float64 reads it, keys sorted like Go's."""
    if isinstance(value, Mapping):
        return {k: _go_numbers(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    return go_json_number(value)


def _runtime_env(text: str) -> dict[str, Any] | None:
    prefix = f"failed to unmarshal RuntimeEnvYAML: {text}"
    try:
        value = load_go_yaml(text)
        marshal_go_json(value)  # what Go's YAML-to-JSON step would refuse (NaN, Inf)
    except GoYAMLError as err:
        raise RayJobBuildError(f"{prefix}: error converting YAML to JSON: {err}") from err
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RayJobBuildError(
            f"{prefix}: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
            f"{_json_kind(value)} into Go value of type types.RuntimeEnvType"
        )
    result = _go_numbers(value)
    assert isinstance(result, dict)
    return result


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def _reject_constant(name: str) -> float:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def entrypoint_resources(text: str) -> dict[str, int | float] | None:
    """``entrypointResources`` decoded into Go's ``map[string]float32`` (``None`` for null)."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as err:
        raise RayJobBuildError(str(err)) from err
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RayJobBuildError(
            f"json: cannot unmarshal {_json_kind(value)} into Go value of type map[string]float32"
        )
    result: dict[str, int | float] = {}
    for key, item in value.items():
        if item is None:
            item = 0.0  # Go leaves a null map element at its zero value
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise RayJobBuildError(
                f"json: cannot unmarshal {_json_kind(item)} into Go value of type float32"
            )
        try:
            to_float32(item)
        except OverflowError as err:
            raise RayJobBuildError(
                f"json: cannot unmarshal number {item} into Go value of type float32"
            ) from err
        result[key] = float32_json_value(item)
    return dict(sorted(result.items()))


def build_job_submit_body(rayjob: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object KubeRay POSTs to ``/api/jobs/`` for an HTTPMode RayJob.

    Raises :class:`RayJobBuildError` when ``runtimeEnvYAML`` is not a YAML map or
    ``entrypointResources`` is not a JSON object of numbers.
    """
    job_spec = spec(rayjob)
    status = rayjob.get("status")
    body: dict[str, Any] = {}
    runtime_env_yaml = as_str(job_spec.get("runtimeEnvYAML"))
    if runtime_env_yaml:
        runtime_env = _runtime_env(runtime_env_yaml)
        if runtime_env:
            body["runtime_env"] = runtime_env
    metadata = str_map(job_spec.get("metadata"))
    if metadata:
        body["metadata"] = dict(sorted(metadata.items()))
    resources_text = as_str(job_spec.get("entrypointResources"))
    if resources_text:
        resources = entrypoint_resources(resources_text)
        if resources:
            body["entrypoint_resources"] = resources
    body["entrypoint"] = as_str(job_spec.get("entrypoint"))
    job_id = as_str(status.get("jobId")) if isinstance(status, Mapping) else ""
    if job_id:
        body["submission_id"] = job_id
    for field, key in (
        ("entrypointNumCpus", "entrypoint_num_cpus"),
        ("entrypointNumGpus", "entrypoint_num_gpus"),
    ):
        number = float32_field(job_spec, field)
        if number:
            body[key] = float32_json_value(number)
    return body
