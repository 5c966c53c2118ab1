"""Shared pieces of the ray.io validators: :class:`FieldError`, helpers over embedded
Kubernetes dicts, and the structural (CRD schema and CEL) checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from kuberay.api.v1._meta import ApiModel
from kuberay.api.v1.constants import (
    MANAGED_BY_VALUES,
)
from kuberay.api.v1.convert import (
    StructureError,
    join_path,
    model_fields,
    structure,
    unstructure,
)
from kuberay.api.v1.raycluster_types import (
    HeadGroupSpec,
    RayClusterSpec,
)
from kuberay.api.v1.rayjob_types import DeletionCondition, RayJobSpec
from kuberay.api.v1.validation.errors import ErrorSource, FieldError, quantity_problem
from kuberay.gocompat.go_text import go_quote
from kuberay.gocompat.goutil import go_str_list, is_dns1035_label

M = TypeVar("M", bound=ApiModel)


# --- helpers over embedded Kubernetes dicts -------------------------------------------------


def rule_object(
    spec: ApiModel | None,
    *,
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The object dict :mod:`kuberay.api.v1.rules` decides on, from a typed ``spec`` (and the
    object's ``annotations`` / ``labels``): validation asks the controllers' own rules."""
    metadata: dict[str, Any] = {}
    if annotations:
        metadata["annotations"] = dict(annotations)
    if labels:
        metadata["labels"] = dict(labels)
    return {"metadata": metadata, "spec": unstructure(spec) if spec is not None else {}}


def rule_dict(model: ApiModel | None) -> dict[str, Any]:
    """A typed sub-object (``authOptions``, ``networkPolicy``, a RayJob ``spec``, ...) as the
    plain dict :mod:`kuberay.api.v1.rules` takes (``{}`` for ``None``)."""
    return unstructure(model) if model is not None else {}


def _as_dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _pod_spec(template: Any) -> Mapping[str, Any]:
    return _as_dict(_as_dict(template).get("spec"))


def _containers(template: Any) -> list[Mapping[str, Any]]:
    return [_as_dict(c) for c in _as_list(_pod_spec(template).get("containers"))]


def _restart_policy(template: Any) -> str:
    value = _pod_spec(template).get("restartPolicy")
    return value if isinstance(value, str) else ""


def _env_list(container: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if container is None:
        return []
    return [_as_dict(e) for e in _as_list(container.get("env"))]


def _env_index(name: str, env: list[Mapping[str, Any]]) -> int | None:
    for i, entry in enumerate(env):
        if entry.get("name") == name:
            return i
    return None


def _env_value(entry: Mapping[str, Any]) -> str:
    value = entry.get("value")
    return value if isinstance(value, str) else ""


def _env_dicts(value: list[dict[str, Any]] | None) -> list[Mapping[str, Any]]:
    return [_as_dict(e) for e in value or ()]


def _mounts(container: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if container is None:
        return []
    return [_as_dict(m) for m in _as_list(container.get("volumeMounts"))]


def _param(params: Mapping[str, str] | None, key: str) -> str:
    return (params or {}).get(key, "")


def _go_int(value: Any) -> str:
    return str(value)


class _Errors:
    """Collects errors with a message prefix and a default source."""

    def __init__(self, source: ErrorSource, prefix: str = "") -> None:
        self.items: list[FieldError] = []
        self.source: ErrorSource = source
        self.prefix = prefix

    def add(self, path: str, message: str) -> None:
        self.items.append(FieldError(path, self.prefix + message, self.source))

    def extend(self, errors: Iterable[FieldError]) -> None:
        self.items.extend(errors)


def _wrap(errors: Iterable[FieldError], prefix: str) -> list[FieldError]:
    return [FieldError(e.path, prefix + e.message, e.source) for e in errors]


# --- structural (CRD) checks ----------------------------------------------------------------
_QUANTITY_RE = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+"
    r"(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def _crd_check_model(model: ApiModel, path: str, out: list[FieldError]) -> None:
    """What the apiserver's structural schema enforces on a model (see schema generation)."""
    for mf in model_fields(type(model)):
        value = getattr(model, mf.name)
        fpath = join_path(path, mf.json)
        meta = mf.meta
        if value is None:
            if meta.required:
                out.append(FieldError(fpath, "Required value", "crd"))
            continue
        if meta.enum is not None and isinstance(value, str) and str(value) not in meta.enum:
            supported = ", ".join(go_quote(v) for v in meta.enum)
            out.append(
                FieldError(
                    fpath,
                    f"Unsupported value: {go_quote(str(value))}: supported values: {supported}",
                    "crd",
                )
            )
        if meta.minimum is not None and isinstance(value, int) and value < meta.minimum:
            out.append(
                FieldError(
                    fpath,
                    f"Invalid value: {value}: {fpath} in body should be greater than or equal "
                    f"to {meta.minimum}",
                    "crd",
                )
            )
        if meta.min_length is not None and isinstance(value, str) and len(value) < meta.min_length:
            out.append(
                FieldError(
                    fpath,
                    f"Invalid value: {go_quote(value)}: {fpath} in body should be at least "
                    f"{meta.min_length} chars long",
                    "crd",
                )
            )
        if meta.min_items is not None and isinstance(value, list) and len(value) < meta.min_items:
            out.append(
                FieldError(
                    fpath, f"{fpath} in body should have at least {meta.min_items} items", "crd"
                )
            )
        if meta.quantity and isinstance(value, str) and not _QUANTITY_RE.match(value):
            out.append(
                FieldError(
                    fpath,
                    f"Invalid value: {go_quote(value)}: {fpath} in body should match "
                    f"'{_QUANTITY_RE.pattern}'",
                    "crd",
                )
            )
        problem = quantity_problem(value) if meta.quantity and isinstance(value, str) else None
        if problem:
            out.append(
                FieldError(fpath, f"Invalid value: {go_quote(str(value))}: {problem}", "spec")
            )
        if meta.list_type == "map" and meta.list_map_keys and isinstance(value, list):
            seen: set[tuple[Any, ...]] = set()
            for i, item in enumerate(value):
                data = item if isinstance(item, Mapping) else _unstructured_keys(item)
                key = tuple(data.get(k) for k in meta.list_map_keys)
                if key in seen:
                    shown = ",".join(
                        f'"{k}":{go_quote(str(v))}'
                        for k, v in zip(meta.list_map_keys, key, strict=True)
                    )
                    out.append(FieldError(f"{fpath}[{i}]", f"Duplicate value: {{{shown}}}", "crd"))
                seen.add(key)
        if meta.embedded is not None and meta.embedded not in _UNCHECKED_EMBEDDED:
            from kuberay.api.v1.validation.schema import check_embedded

            out.extend(check_embedded(meta.embedded, value, fpath, is_list=isinstance(value, list)))
        _crd_check_value(value, fpath, out)


#: Embedded types not checked against a Kubernetes schema: the object's own metadata (the
#: apiserver validates it) and status conditions (written by the operator).
_UNCHECKED_EMBEDDED = frozenset({"meta/v1.ObjectMeta", "meta/v1.Condition"})


def _unstructured_keys(item: Any) -> Mapping[str, Any]:
    if isinstance(item, ApiModel):
        return {mf.json: getattr(item, mf.name) for mf in model_fields(type(item))}
    return {}


def _crd_check_value(value: Any, path: str, out: list[FieldError]) -> None:
    if isinstance(value, ApiModel):
        _crd_check_model(value, path, out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, ApiModel):
                _crd_check_model(item, f"{path}[{i}]", out)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, ApiModel):
                _crd_check_model(item, f"{path}[{key}]", out)


def _cel_managed_by(managed_by: str | None, path: str, out: list[FieldError]) -> None:
    if managed_by is not None and managed_by not in MANAGED_BY_VALUES:
        out.append(
            FieldError(
                path,
                "the managedBy field value must be either 'ray.io/kuberay-operator' or "
                "'kueue.x-k8s.io/multikueue'",
                "crd",
            )
        )


def _cel_cluster_spec(spec: RayClusterSpec | None, path: str, out: list[FieldError]) -> None:
    if spec is not None:
        _cel_managed_by(spec.managed_by, join_path(path, "managedBy"), out)


def _cel_job_spec(spec: RayJobSpec | None, path: str, out: list[FieldError]) -> None:
    if spec is None:
        return
    _cel_managed_by(spec.managed_by, join_path(path, "managedBy"), out)
    _cel_cluster_spec(spec.ray_cluster_spec, join_path(path, "rayClusterSpec"), out)
    strategy = spec.deletion_strategy
    if strategy is None:
        return
    spath = join_path(path, "deletionStrategy")
    legacy = strategy.on_success is not None or strategy.on_failure is not None
    has_rules = strategy.deletion_rules is not None
    if legacy and has_rules:
        out.append(
            FieldError(
                spath,
                "legacy policies (onSuccess/onFailure) and deletionRules cannot be used "
                "together within the same deletionStrategy",
                "crd",
            )
        )
    if not ((strategy.on_success is not None and strategy.on_failure is not None) or has_rules):
        out.append(
            FieldError(
                spath,
                "deletionStrategy requires either BOTH onSuccess and onFailure, OR the "
                "deletionRules field (cannot be empty)",
                "crd",
            )
        )
    for i, rule in enumerate(strategy.deletion_rules or ()):
        cond = rule.condition
        if not isinstance(cond, DeletionCondition):
            continue
        cpath = f"{spath}.deletionRules[{i}].condition"
        if cond.job_status is not None and cond.job_deployment_status is not None:
            out.append(
                FieldError(
                    cpath,
                    "JobStatus and JobDeploymentStatus cannot be used together within the "
                    "same deletion condition.",
                    "crd",
                )
            )
        if cond.job_status is None and cond.job_deployment_status is None:
            out.append(
                FieldError(
                    cpath,
                    "the deletion condition requires either the JobStatus or the "
                    "JobDeploymentStatus field.",
                    "crd",
                )
            )


def _crd_errors(model: ApiModel, cel: Callable[[list[FieldError]], None]) -> list[FieldError]:
    out: list[FieldError] = []
    _crd_check_model(model, "", out)
    cel(out)
    return out


def _coerce(kind_cls: type[M], obj: M | Mapping[str, Any]) -> M | list[FieldError]:
    if isinstance(obj, kind_cls):
        return obj
    if isinstance(obj, Mapping):
        try:
            return structure(kind_cls, obj)
        except StructureError as exc:
            return [FieldError(e.path, e.message, "crd") for e in exc.errors]
    raise TypeError(f"expected {kind_cls.__name__} or a dict, got {type(obj).__name__}")


def _empty_cluster_spec() -> RayClusterSpec:
    return RayClusterSpec(head_group_spec=HeadGroupSpec(template={}))


def _validate_name(
    errors: _Errors, kind: str, name: str, max_length: int, prefix: str = ""
) -> None:
    if len(name) > max_length:
        errors.add(
            "metadata.name", f"{prefix}{kind} name should be no more than {max_length} characters"
        )
    dns_errors = is_dns1035_label(name)
    if dns_errors:
        errors.add(
            "metadata.name",
            f"{prefix}{kind} name should be a valid DNS1035 label: {go_str_list(dns_errors)}",
        )


def _condition_true(conditions: list[dict[str, Any]] | None, condition_type: str) -> bool:
    for condition in conditions or ():
        if isinstance(condition, Mapping) and condition.get("type") == condition_type:
            return condition.get("status") == "True"
    return False


# --- updates (CEL transition rules) ---------------------------------------------------------
def _immutable(old: Any, new: Any, path: str, message: str, out: list[FieldError]) -> None:
    if old is not None and new is not None and old != new:
        out.append(FieldError(path, message, "crd"))
