"""CustomResourceDefinitions for the ray.io kinds, derived from the models' field metadata.

Design decisions (the reference CRDs are KubeRay's controller-gen output):

* **Embedded Kubernetes types** (pod templates, Services, resource requirements, env vars,
  volume mounts, network-policy rules, ...) are fully typed, as in KubeRay's CRDs: their schemas
  come from the kube-apiserver's own OpenAPI v3 (snapshot ``k8s_openapi.json``, converted by
  :mod:`kuberay.api.v1.k8s_schemas`), so ``ports: "x"`` or ``limits.cpu: "{}"`` is rejected by
  the apiserver with the field path. The price is size: a pod template's schema is large,
  and RayJob/RayService/RayCronJob embed whole cluster specs plus submitter templates, so the
  CRDs are large (as KubeRay's are). Client-side ``kubectl apply`` cannot
  store them in its last-applied annotation (256 KiB limit): install with
  ``kubectl apply --server-side`` (or ``kubectl create``), as KubeRay documents.
* **Unknown fields are pruned**, everywhere (spec, embedded types, status), exactly as in
  KubeRay's CRDs, which carry no ``x-kubernetes-preserve-unknown-fields`` at all; embedded
  ``metadata`` keeps only labels, annotations, finalizers, name and namespace.
* ``ray.io/v1alpha1`` is still served (deprecated, not stored, no conversion webhook) for
  RayCluster, RayJob and RayService, as in KubeRay 1.7; it reuses the v1 schema.
"""

from __future__ import annotations

import copy
import enum
import types
import typing
from typing import Any

import yaml

from kuberay.api.v1._meta import NO_DEFAULT, ApiModel, FieldMeta
from kuberay.api.v1.constants import (
    DEPRECATED_VERSION,
    GROUP,
    KIND_RAYCLUSTER,
    KIND_RAYCRONJOB,
    KIND_RAYJOB,
    KIND_RAYSERVICE,
    PLURALS,
    SINGULARS,
    VERSION,
)
from kuberay.api.v1.convert import model_fields
from kuberay.api.v1.k8s_schemas import CONDITION_SCHEMA, QUANTITY_PATTERN, embedded_schema
from kuberay.api.v1.printer_columns import printer_columns
from kuberay.api.v1.raycluster_types import RayCluster
from kuberay.api.v1.raycronjob_types import RayCronJob
from kuberay.api.v1.rayjob_types import RayJob
from kuberay.api.v1.rayservice_types import RayService

__all__ = [
    "CONDITION_SCHEMA",
    "QUANTITY_PATTERN",
    "crd_filename",
    "generate_crd",
    "generate_crds",
    "model_schema",
    "render_yaml",
]

Schema = dict[str, Any]
PRESERVE = "x-kubernetes-preserve-unknown-fields"

#: Top-level ``metadata``: the apiserver types and validates it itself.
_ROOT_METADATA: Schema = {"type": "object"}


def _deepcopy(schema: Schema) -> Schema:
    copied: Schema = copy.deepcopy(schema)
    return copied


def _strip_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = tuple(a for a in typing.get_args(tp) if a is not type(None))
        if len(args) == 1:
            return args[0]
        return typing.Union[args]  # noqa: UP007 - rebuilding a union from runtime args
    return tp


def _embedded_schema(meta: FieldMeta) -> Schema:
    assert meta.embedded is not None
    if meta.embedded == "meta/v1.ObjectMeta":
        return _deepcopy(_ROOT_METADATA)
    if meta.embedded == "meta/v1.Condition":
        return _deepcopy(CONDITION_SCHEMA)
    return embedded_schema(meta.embedded)


def _type_schema(tp: Any, meta: FieldMeta, preserve_unknown: bool) -> Schema:
    tp = _strip_optional(tp)
    origin = typing.get_origin(tp)
    if meta.embedded is not None:
        if origin is list:
            return {"type": "array", "items": _embedded_schema(meta)}
        return _embedded_schema(meta)
    if meta.quantity:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    if tp is str or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        schema: Schema = {"type": "string"}
        if meta.date_time:
            schema["format"] = "date-time"
        return schema
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer", "format": meta.int_format}
    if tp is float:
        return {"type": "number"}
    if isinstance(tp, type) and issubclass(tp, ApiModel):
        return model_schema(tp, preserve_unknown=preserve_unknown)
    if origin is list:
        (item,) = typing.get_args(tp)
        return {"type": "array", "items": _type_schema(item, meta, preserve_unknown)}
    if origin is dict:
        _, value = typing.get_args(tp)
        return {
            "type": "object",
            "additionalProperties": _type_schema(value, meta, preserve_unknown),
        }
    raise TypeError(f"cannot build a schema for {tp!r}")


def _field_schema(tp: Any, meta: FieldMeta, preserve_unknown: bool) -> Schema:
    schema = _type_schema(tp, meta, preserve_unknown)
    if meta.enum is not None:
        schema["enum"] = list(meta.enum)
    elif isinstance(_strip_optional(tp), type) and issubclass(_strip_optional(tp), enum.Enum):
        schema["enum"] = [str(m.value) for m in _strip_optional(tp)]
    if meta.crd_default is not NO_DEFAULT:
        schema["default"] = meta.crd_default
    if meta.minimum is not None:
        schema["minimum"] = meta.minimum
    if meta.min_length is not None:
        schema["minLength"] = meta.min_length
    if meta.min_items is not None:
        schema["minItems"] = meta.min_items
    if meta.nullable:
        schema["nullable"] = True
    if meta.list_type is not None:
        schema["x-kubernetes-list-type"] = meta.list_type
    if meta.list_map_keys is not None:
        schema["x-kubernetes-list-map-keys"] = list(meta.list_map_keys)
    if meta.cel:
        schema["x-kubernetes-validations"] = [
            {"message": rule.message, "rule": rule.rule} for rule in meta.cel
        ]
    return schema


def model_schema(cls: type[ApiModel], *, preserve_unknown: bool = False) -> Schema:
    """The structural OpenAPI v3 schema of a model class.

    With ``preserve_unknown`` every Ray-defined object in the subtree keeps unknown fields.
    """
    properties: Schema = {}
    required: list[str] = []
    for mf in model_fields(cls):
        properties[mf.json] = _field_schema(mf.type, mf.meta, preserve_unknown)
        if mf.meta.required:
            required.append(mf.json)
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = sorted(required)
    if preserve_unknown:
        schema[PRESERVE] = True
    return schema


def _object_schema(cls: type[ApiModel]) -> Schema:
    fields = {mf.json: mf for mf in model_fields(cls)}
    spec_field, status_field = fields["spec"], fields["status"]
    return {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": _field_schema(spec_field.type, spec_field.meta, preserve_unknown=False),
            "status": _field_schema(status_field.type, status_field.meta, preserve_unknown=False),
        },
    }


#: v1alpha1 printer columns: KubeRay kept them only for RayCluster.
_V1ALPHA1_PRINTER_COLUMNS = {KIND_RAYCLUSTER}

_MODELS: dict[str, type[ApiModel]] = {
    KIND_RAYCLUSTER: RayCluster,
    KIND_RAYJOB: RayJob,
    KIND_RAYSERVICE: RayService,
    KIND_RAYCRONJOB: RayCronJob,
}
_SERVES_V1ALPHA1 = (KIND_RAYCLUSTER, KIND_RAYJOB, KIND_RAYSERVICE)


def generate_crd(kind: str) -> dict[str, Any]:
    """The apiextensions.k8s.io/v1 CustomResourceDefinition of ``kind``."""
    plural = PLURALS[kind]
    schema = _object_schema(_MODELS[kind])
    columns = printer_columns(kind)  # one list: both versions share it (a YAML anchor)
    versions: list[dict[str, Any]] = [
        {
            "additionalPrinterColumns": columns,
            "name": VERSION,
            "schema": {"openAPIV3Schema": schema},
            "served": True,
            "storage": True,
            "subresources": {"status": {}},
        }
    ]
    if kind in _SERVES_V1ALPHA1:
        alpha: dict[str, Any] = {
            "deprecated": True,
            "deprecationWarning": (
                f"{GROUP}/{DEPRECATED_VERSION} {kind} is deprecated; use {GROUP}/{VERSION} "
                f"{kind}. {DEPRECATED_VERSION} receives no new fields and will be unavailable "
                "in KubeRay 1.9."
            ),
            "name": DEPRECATED_VERSION,
            "schema": {"openAPIV3Schema": _deepcopy(schema)},
            "served": True,
            "storage": False,
            "subresources": {"status": {}},
        }
        if kind in _V1ALPHA1_PRINTER_COLUMNS:
            alpha["additionalPrinterColumns"] = columns
        versions.append(alpha)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "categories": ["all"],
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": SINGULARS[kind],
            },
            "scope": "Namespaced",
            "versions": versions,
        },
    }


def crd_filename(kind: str) -> str:
    """``ray.io_<plural>.yaml``, KubeRay's file name for the CRD of ``kind``."""
    return f"{GROUP}_{PLURALS[kind]}.yaml"


def generate_crds() -> dict[str, dict[str, Any]]:
    """File name -> CRD, for the four kinds."""
    return {crd_filename(kind): generate_crd(kind) for kind in _MODELS}


def render_yaml(crd: dict[str, Any]) -> str:
    """Deterministic YAML (sorted keys, a leading document marker) of a CRD."""
    # libyaml's dumper when present: same text (checked by the up-to-date test), ~3x faster.
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    body = yaml.dump(crd, Dumper=dumper, sort_keys=True, default_flow_style=False, width=100)
    return "---\n" + body
