"""Structural CRD schemas of the Kubernetes types the ray.io kinds embed.

Source of truth: the kube-apiserver's own OpenAPI v3 (``/openapi/v3/api/v1``,
``/openapi/v3/apis/networking.k8s.io/v1``), snapshotted by ``hack/build/fetch_k8s_openapi.py`` into
``k8s_openapi.json`` (descriptions dropped). :func:`embedded_schema` turns a type of that
snapshot into the schema controller-gen would write into a CRD, the way KubeRay's CRDs type
them:

* references are inlined; no descriptions, no enums (controller-gen emits neither for core types);
* ``resource.Quantity`` -> int-or-string with the quantity ``pattern``; ``IntOrString`` ->
  int-or-string; ``meta/v1.Time`` -> ``string`` / ``date-time``;
* an embedded ``ObjectMeta`` keeps only ``annotations``, ``finalizers``, ``labels``, ``name`` and
  ``namespace`` (controller-gen's ``generateEmbeddedObjectMeta``); everything else is pruned;
* defaults: only the explicit scalar ``+default`` markers (``protocol: TCP``, ``name: ""`` ...);
  the zero-value defaults openapi-gen adds for required fields, list items and map values are
  not CRD defaults;
* no ``x-kubernetes-preserve-unknown-fields``: unknown fields are pruned, as in KubeRay.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CONDITION_SCHEMA",
    "EMBEDDED_OBJECT_META",
    "QUANTITY_PATTERN",
    "ROOTS",
    "SNAPSHOT",
    "embedded_schema",
    "embedded_schema_shared",
    "kubernetes_version",
    "ref_name",
]

Schema = dict[str, Any]

SNAPSHOT: Final = Path(__file__).with_name("k8s_openapi.json")

QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+"
    r"(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

_CORE = "io.k8s.api.core.v1."
_NET = "io.k8s.api.networking.v1."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."

#: Our embedded-type names (``FieldMeta.embedded``) -> OpenAPI component names.
ROOTS: Final[dict[str, str]] = {
    "core/v1.PodTemplateSpec": _CORE + "PodTemplateSpec",
    "core/v1.Service": _CORE + "Service",
    "core/v1.ResourceRequirements": _CORE + "ResourceRequirements",
    "core/v1.EnvVar": _CORE + "EnvVar",
    "core/v1.EnvVarSource": _CORE + "EnvVarSource",
    "core/v1.EnvFromSource": _CORE + "EnvFromSource",
    "core/v1.VolumeMount": _CORE + "VolumeMount",
    "core/v1.SecurityContext": _CORE + "SecurityContext",
    "networking/v1.NetworkPolicyIngressRule": _NET + "NetworkPolicyIngressRule",
    "networking/v1.NetworkPolicyEgressRule": _NET + "NetworkPolicyEgressRule",
    "networking/v1.IngressTLS": _NET + "IngressTLS",
}

_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_TIMES = (_META + "Time", _META + "MicroTime")
_OBJECT_META = _META + "ObjectMeta"

#: controller-gen's embedded ObjectMeta.
EMBEDDED_OBJECT_META: Final[Schema] = {
    "type": "object",
    "properties": {
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "name": {"type": "string"},
        "namespace": {"type": "string"},
    },
}

#: Where controller-gen's output differs from the apiserver's OpenAPI (markers openapi-gen does
#: not export): structs it marks ``x-kubernetes-map-type: atomic`` through their inlined
#: ``LocalObjectReference``, ``+default`` values it does not carry, and validation markers.
_ATOMIC = {
    _CORE + "ConfigMapEnvSource",
    _CORE + "SecretEnvSource",
    _CORE + "ConfigMapProjection",
    _CORE + "SecretProjection",
    _CORE + "ConfigMapVolumeSource",
}
_NO_DEFAULT = {
    (_CORE + "AzureDiskVolumeSource", "kind"),
    (_CORE + "AzureDiskVolumeSource", "cachingMode"),
}
_LABEL_KEY_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
_PROPERTY_PATCHES: dict[tuple[str, str], Schema] = {
    (_CORE + "PortStatus", "error"): {"maxLength": 316, "pattern": _LABEL_KEY_PATTERN},
}
_REQUIRED_PATCHES: dict[str, list[str]] = {_CORE + "PortStatus": ["error", "port", "protocol"]}

#: meta/v1.Condition, with the validation markers of its Go type.
CONDITION_SCHEMA: Final[Schema] = {
    "type": "object",
    "required": ["lastTransitionTime", "message", "reason", "status", "type"],
    "properties": {
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "message": {"type": "string", "maxLength": 32768},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        "reason": {
            "type": "string",
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "type": {"type": "string", "maxLength": 316, "pattern": _LABEL_KEY_PATTERN},
    },
}

_COPIED = (
    "type",
    "format",
    "required",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
)


def ref_name(ref: str) -> str:
    """``#/components/schemas/io.k8s.api.core.v1.Pod`` -> ``io.k8s.api.core.v1.Pod``."""
    return ref.rsplit("/", 1)[-1]


@cache
def _snapshot() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SNAPSHOT.read_text())
    return loaded


def kubernetes_version() -> str:
    """The apiserver version the snapshot was taken from."""
    return str(_snapshot()["kubernetesVersion"])


def _target(schema: Schema) -> str | None:
    if "$ref" in schema:
        return str(schema["$ref"])
    for part in schema.get("allOf") or ():
        if isinstance(part, dict) and "$ref" in part:
            return str(part["$ref"])
    return None


def _convert(schema: Schema, stack: tuple[str, ...]) -> Schema:
    target = _target(schema)
    if target is not None:
        return _named(target, stack)
    owner = stack[-1] if stack else ""
    out: Schema = {k: copy.deepcopy(schema[k]) for k in _COPIED if k in schema}
    if owner in _REQUIRED_PATCHES and schema is _snapshot()["schemas"].get(owner):
        out["required"] = list(_REQUIRED_PATCHES[owner])
    if "properties" in schema:
        required = set(schema.get("required") or ())
        props: Schema = {}
        for name, prop in schema["properties"].items():
            converted = _convert(prop, stack)
            default = prop.get("default")
            if (
                name not in required
                and isinstance(default, (str, bool, int))
                and "default" not in converted
                and _target(prop) is None
                and (owner, name) not in _NO_DEFAULT
            ):
                converted["default"] = default
            converted.update(copy.deepcopy(_PROPERTY_PATCHES.get((owner, name), {})))
            props[name] = converted
        out["properties"] = props
        out.setdefault("type", "object")
        if owner in _ATOMIC and schema is _snapshot()["schemas"].get(owner):
            out["x-kubernetes-map-type"] = "atomic"
    if "additionalProperties" in schema and isinstance(schema["additionalProperties"], dict):
        out["additionalProperties"] = _convert(schema["additionalProperties"], stack)
        out.setdefault("type", "object")
    if "items" in schema:
        out["items"] = _convert(schema["items"], stack)
        out.setdefault("type", "array")
    return out


def _named(name: str, stack: tuple[str, ...]) -> Schema:
    if name == _QUANTITY:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    if name == _INT_OR_STRING:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": True,
        }
    if name in _TIMES:
        return {"type": "string", "format": "date-time"}
    if name == _META + "Condition":
        return copy.deepcopy(CONDITION_SCHEMA)
    if name == _OBJECT_META:
        return copy.deepcopy(EMBEDDED_OBJECT_META)
    if name in stack:
        raise ValueError(f"recursive type {name}")
    return _convert(_snapshot()["schemas"][name], (*stack, name))


@cache
def _embedded(embedded: str) -> str:
    return json.dumps(_named(ROOTS[embedded], ()), sort_keys=True)


@cache
def embedded_schema_shared(embedded: str) -> Schema:
    """:func:`embedded_schema`, parsed once and shared: callers must not modify it."""
    return embedded_schema(embedded)


def embedded_schema(embedded: str) -> Schema:
    """The structural CRD schema of one embedded type (``core/v1.PodTemplateSpec`` ...)."""
    loaded: Schema = json.loads(_embedded(embedded))
    return loaded
