"""A compute template: KubeRay's ``proto.ComputeTemplate`` and the ConfigMap that stores it.

Three shapes, each KubeRay's (``proto/config.proto``, ``apiserver/pkg/util/cluster.go``
``NewComputeTemplate``, ``apiserver/pkg/model/converter.go`` ``FromKubeToAPIComputeTemplate``):

- the **request** (protojson, ``DiscardUnknown``): each field by its proto name
  (``memory_unit``) or its JSON name (``memoryUnit``); numbers as numbers or decimal strings;
  ``null`` is "not set"; unknown fields are ignored;
- the **answer** (protojson, ``UseProtoNames: false``): JSON names, numbers as numbers, zero
  values and empty lists and maps left out;
- the **ConfigMap**: named after the template, labelled ``ray.io/config-type=compute-template``
  and ``ray.io/compute-template=<name>``, every value a string in ``data`` under the proto
  names (``extended_resources`` and ``tolerations`` as JSON; ``tolerations`` only when there
  are some; ``memory_unit`` defaulted to ``Gi``; ``gpu_accelerator`` stored as given, the
  ``nvidia.com/gpu`` default applies when a template is applied).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import attrs
import structlog

from kuberay.api.v1.constants import (
    COMPUTE_TEMPLATE_CONFIG_TYPE,
    COMPUTE_TEMPLATE_KEY,
    CONFIG_TYPE_LABEL_KEY,
)
from kuberay.gocompat.quantity import QuantityError, parse_quantity
from kuberay.kube.paths import path_segment_problems, segment

log = structlog.get_logger("apiserver.templates")

DEFAULT_MEMORY_UNIT: Final = "Gi"
DEFAULT_GPU_ACCELERATOR: Final = "nvidia.com/gpu"
MAX_UINT32: Final = 2**32 - 1

#: proto name -> JSON name of each field, in the proto's declaration order (the answer's
#: order). The proto names are also the ConfigMap's data keys.
FIELDS: Final[Mapping[str, str]] = {
    "name": "name",
    "namespace": "namespace",
    "cpu": "cpu",
    "memory": "memory",
    "gpu": "gpu",
    "gpu_accelerator": "gpuAccelerator",
    "tolerations": "tolerations",
    "extended_resources": "extendedResources",
    "memory_unit": "memoryUnit",
}
TOLERATION_FIELDS: Final = ("key", "operator", "value", "effect")
#: The ConfigMap's labels: the first marks a template, the second names it.
TEMPLATE_SELECTOR: Final = f"{CONFIG_TYPE_LABEL_KEY}={COMPUTE_TEMPLATE_CONFIG_TYPE}"


class TemplateInvalid(ValueError):
    """A request's template cannot be decoded or created; the message names the field
    (KubeRay's wording where it has one)."""


@attrs.frozen
class Toleration:
    """One ``PodToleration``: applied as ``{key, operator, value, effect}``."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""

    def to_json(self) -> dict[str, str]:
        """The protojson form: empty fields left out."""
        return {f: getattr(self, f) for f in TOLERATION_FIELDS if getattr(self, f)}


@attrs.frozen
class ComputeTemplate:
    """A compute template; ``memory`` counts ``memory_unit``\\ s (``4`` and ``Gi``: 4Gi)."""

    name: str
    namespace: str
    cpu: int
    memory: int
    gpu: int = 0
    gpu_accelerator: str = ""
    tolerations: tuple[Toleration, ...] = ()
    extended_resources: Mapping[str, int] = attrs.field(factory=dict, hash=False)
    memory_unit: str = DEFAULT_MEMORY_UNIT

    @property
    def memory_quantity(self) -> str:
        """The memory as a Kubernetes quantity (``4Gi``)."""
        return f"{self.memory}{self.memory_unit}"

    def to_json(self) -> dict[str, Any]:
        """The answer's JSON (KubeRay's grpc-gateway: JSON names, zero values left out)."""
        values: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "cpu": self.cpu,
            "memory": self.memory,
            "gpu": self.gpu,
            "gpu_accelerator": self.gpu_accelerator,
            "tolerations": [t.to_json() for t in self.tolerations],
            "extended_resources": dict(self.extended_resources),
            "memory_unit": self.memory_unit,
        }
        return {FIELDS[k]: v for k, v in values.items() if v}

    def to_configmap(self) -> dict[str, Any]:
        """The ConfigMap that stores this template (KubeRay's ``NewComputeTemplate``)."""
        data = {
            "name": self.name,
            "namespace": self.namespace,
            "cpu": str(self.cpu),
            "memory": str(self.memory),
            "memory_unit": self.memory_unit or DEFAULT_MEMORY_UNIT,
            "gpu": str(self.gpu),
            "gpu_accelerator": self.gpu_accelerator,
            # Go's json.Marshal of a nil map: "null"
            "extended_resources": _compact(dict(sorted(self.extended_resources.items())))
            if self.extended_resources
            else "null",
        }
        if self.tolerations:
            data["tolerations"] = _compact([t.to_json() for t in self.tolerations])
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {
                    CONFIG_TYPE_LABEL_KEY: COMPUTE_TEMPLATE_CONFIG_TYPE,
                    COMPUTE_TEMPLATE_KEY: self.name,
                },
            },
            "data": data,
        }


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def is_template(configmap: Mapping[str, Any]) -> bool:
    """The ConfigMap carries ``ray.io/config-type=compute-template`` (KubeRay reads any
    ConfigMap of the name; we refuse to read or delete one that is not a template)."""
    labels = (configmap.get("metadata") or {}).get("labels") or {}
    return isinstance(labels, dict) and labels.get(CONFIG_TYPE_LABEL_KEY) == (
        COMPUTE_TEMPLATE_CONFIG_TYPE
    )


def _uint32_or_zero(text: object) -> int:
    """Go's ``strconv.ParseUint(s, 10, 32)`` with its error ignored: 0 for anything else."""
    if isinstance(text, str) and text.isascii() and text.isdigit():
        value = int(text)
        return value if value <= MAX_UINT32 else 0
    return 0


def _json_or_none(data: Mapping[str, Any], key: str, name: str) -> Any:
    raw = data.get(key)
    if not isinstance(raw, str):
        return None
    try:
        return json.loads(raw)
    except ValueError:
        log.warning("unreadable compute template field", template=name, field=key)
        return None


def from_configmap(configmap: Mapping[str, Any]) -> ComputeTemplate:
    """The template a ConfigMap holds (KubeRay's ``FromKubeToAPIComputeTemplate``: name and
    namespace from the metadata; unreadable numbers are 0, unreadable JSON is left out)."""
    meta = configmap.get("metadata") or {}
    data = configmap.get("data") or {}
    name = str(meta.get("name", ""))
    extended = _json_or_none(data, "extended_resources", name)
    tolerations = _json_or_none(data, "tolerations", name)
    return ComputeTemplate(
        name=name,
        namespace=str(meta.get("namespace", "")),
        cpu=_uint32_or_zero(data.get("cpu")),
        memory=_uint32_or_zero(data.get("memory")),
        memory_unit=str(data.get("memory_unit", "")),
        gpu=_uint32_or_zero(data.get("gpu")),
        gpu_accelerator=str(data.get("gpu_accelerator", "")),
        extended_resources={
            str(k): v
            for k, v in (extended.items() if isinstance(extended, dict) else ())
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_UINT32
        },
        tolerations=tuple(
            Toleration(**{f: t[f] for f in TOLERATION_FIELDS if isinstance(t.get(f), str)})
            for t in (tolerations if isinstance(tolerations, list) else ())
            if isinstance(t, dict)
        ),
    )


# ----- the request --------------------------------------------------------------------


def _field(raw: Mapping[str, Any], proto: str) -> Any:
    """The value given for a field by either of its names (None: not set)."""
    given = [raw[k] for k in {proto, FIELDS[proto]} if raw.get(k) is not None]
    if len(given) > 1:
        raise TemplateInvalid(f"proto: duplicate field {FIELDS[proto]!r}")
    return given[0] if given else None


def _string(value: Any, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TemplateInvalid(f"proto: invalid value for string field {field}: {value!r}")
    return value


def _uint32(value: Any, field: str) -> int:
    """protojson's uint32: a number or a decimal string, integral, 0..2^32-1."""
    if value is None:
        return 0
    integral = (
        (isinstance(value, int) and not isinstance(value, bool))
        or (isinstance(value, float) and value.is_integer())
        or (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10)
    )
    number = int(value) if integral else None
    if number is None or not 0 <= number <= MAX_UINT32:
        raise TemplateInvalid(f"proto: invalid value for uint32 field {field}: {value!r}")
    return number


def _tolerations(value: Any) -> tuple[Toleration, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise TemplateInvalid("proto: invalid value for field tolerations: want a list of objects")
    return tuple(
        Toleration(**{f: _string(t.get(f), f"tolerations.{f}") for f in TOLERATION_FIELDS})
        for t in value
    )


def _extended(value: Any) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TemplateInvalid("proto: invalid value for field extendedResources: want an object")
    return {str(k): _uint32(v, f"extendedResources[{k!r}]") for k, v in value.items()}


def parse_request(raw: Any) -> ComputeTemplate:
    """The template a create request's JSON body describes (no rule checked yet: see
    :func:`check_create`); :class:`TemplateInvalid` names a field of the wrong type."""
    if not isinstance(raw, dict):
        raise TemplateInvalid("proto: syntax error: the compute template must be a JSON object")
    return ComputeTemplate(
        name=_string(_field(raw, "name"), "name"),
        namespace=_string(_field(raw, "namespace"), "namespace"),
        cpu=_uint32(_field(raw, "cpu"), "cpu"),
        memory=_uint32(_field(raw, "memory"), "memory"),
        gpu=_uint32(_field(raw, "gpu"), "gpu"),
        gpu_accelerator=_string(_field(raw, "gpu_accelerator"), "gpuAccelerator"),
        tolerations=_tolerations(_field(raw, "tolerations")),
        extended_resources=_extended(_field(raw, "extended_resources")),
        memory_unit=_string(_field(raw, "memory_unit"), "memoryUnit") or DEFAULT_MEMORY_UNIT,
    )


def create_problem(template: ComputeTemplate, namespace: str) -> str | None:
    """Why ``template`` cannot be created in ``namespace`` (KubeRay's
    ``ValidateCreateComputeTemplateRequest`` and ``NewComputeTemplate`` checks, in its order,
    with its messages), or None."""
    if template.namespace != namespace:
        return (
            "The namespace in the request is different from the namespace defined in the "
            "compute template."
        )
    if not template.name:
        return "Compute template name is empty. Please specify a valid value."
    if template.cpu == 0:
        return "Cpu amount is zero. Please specify a valid value."
    if template.memory == 0:
        return "Memory amount is zero. Please specify a valid value."
    problems = path_segment_problems(template.name)
    if problems:
        return f"Compute template name {template.name!r:.60}: {'; '.join(problems)}."
    try:
        parse_quantity(template.memory_quantity)
    except QuantityError as exc:
        return f"invalid memory quantity {json.dumps(template.memory_quantity)}: {exc}"
    return None


def configmaps_path(namespace: str, name: str | None = None) -> str:
    """The path of the namespace's ConfigMaps, or of one (each segment checked and escaped;
    :class:`~kuberay.kube.paths.InvalidPathSegment` names the bad one)."""
    path = f"/api/v1/namespaces/{segment('namespace', namespace)}/configmaps"
    return path if name is None else f"{path}/{segment('name', name)}"
