"""``workerGroupSpecs[].labelRefs`` checks (KubeRay v1.8 node label delivery, gate
NodeLabelDelivery).

Two sets, as KubeRay splits them:

* :func:`validate_label_refs` is the validating webhooks' ``validateLabelRefs`` (RayCluster,
  RayJob, RayService): the **first** problem only, against the operator's
  ``allowedNodeLabels``, in KubeRay's order and words (source ``webhook``);
* :func:`label_refs_spec_errors` is what the controllers check themselves (source ``spec``,
  event ``InvalidRayClusterSpec``): the gate is on and ``rayVersion`` has ``ray start
  --labels-file`` (2.45.0). Whether the operator serves the webhooks is the RayCluster
  controller's own check (:func:`webhooks_required_error`).

:func:`node_label_key` reads the one supported ``fieldPath`` form,
``metadata.labels['<key>']``; the webhooks deliver with the same function.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from kuberay.api.v1.constants import (
    GATE_NODE_LABEL_DELIVERY,
    KIND_RAYCLUSTER,
    KIND_RAYJOB,
    KIND_RAYSERVICE,
    NODE_LABEL_DELIVERY_MIN_RAY_VERSION,
    NODE_LABEL_FIELD_PATH_PREFIX,
    RAY_NODE_LABELS_JSON,
    RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY,
)
from kuberay.api.v1.convert import StructureError, join_path, structure
from kuberay.api.v1.gates import FeatureGates, gate_enabled
from kuberay.api.v1.raycluster_types import RayClusterSpec, WorkerGroupSpec
from kuberay.api.v1.validation.common import _containers, _env_dicts, _Errors
from kuberay.api.v1.validation.errors import FieldError
from kuberay.gocompat.go_text import go_quote
from kuberay.gocompat.goutil import is_qualified_name
from kuberay.gocompat.versions import parse_generic_version

__all__ = [
    "GATE_OFF_MESSAGE",
    "cluster_spec_of",
    "label_refs_spec_errors",
    "node_label_key",
    "ray_label_key",
    "validate_label_refs",
    "webhooks_required_error",
]

GATE_OFF_MESSAGE = "requires the NodeLabelDelivery feature gate to be enabled"
_FIELD_PATH_SUFFIX = "']"
_UNSUPPORTED = "only metadata.labels['<key>'] is supported"
_NEEDS_GENERATED = "node label delivery needs the KubeRay-generated ray start command"


def node_label_key(field_path: str) -> str:
    """The node label key ``fieldPath`` names (``metadata.labels['<key>']``); ``ValueError``
    (KubeRay's text) for any other form."""
    if not (
        field_path.startswith(NODE_LABEL_FIELD_PATH_PREFIX)
        and field_path.endswith(_FIELD_PATH_SUFFIX)
    ):
        raise ValueError(_UNSUPPORTED)
    key = field_path[len(NODE_LABEL_FIELD_PATH_PREFIX) : -len(_FIELD_PATH_SUFFIX)]
    if not key or "'" in key:
        raise ValueError(_UNSUPPORTED)
    return key


def ray_label_key(name: str | None, node_label: str) -> str:
    """The Ray label key a labelRef delivers under: its ``name``, else the node label key."""
    return name or node_label


def _overwrites_command(annotations: Mapping[str, Any] | None) -> bool:
    value = (annotations or {}).get(RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY)
    return isinstance(value, str) and value.lower() == "true"


def _group_error(
    group: WorkerGroupSpec,
    path: str,
    annotations: Mapping[str, Any],
    allowed: Collection[str],
    gates: FeatureGates,
) -> FieldError | None:
    def forbidden(where: str, message: str) -> FieldError:
        return FieldError(where, message, "webhook", "Forbidden")

    def invalid(where: str, value: str, message: str) -> FieldError:
        return FieldError(where, message, "webhook", "Invalid", value)

    if not gate_enabled(gates, GATE_NODE_LABEL_DELIVERY):
        return forbidden(path, GATE_OFF_MESSAGE)
    template_annotations = (group.template.get("metadata") or {}).get("annotations")
    if _overwrites_command(annotations) or _overwrites_command(template_annotations):
        return forbidden(
            path,
            f"cannot be combined with the {RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY} "
            f"annotation; {_NEEDS_GENERATED}",
        )
    containers = _containers(group.template)
    if containers:
        container = containers[0]
        words = " ".join(str(w) for w in container.get("command") or []) + " "
        words += " ".join(str(w) for w in container.get("args") or [])
        if "ray start" in words:
            return forbidden(
                path,
                f"cannot be combined with a container command that runs ray start; "
                f"{_NEEDS_GENERATED}",
            )
        if any(env.get("name") == RAY_NODE_LABELS_JSON for env in _env_dicts(container.get("env"))):
            return forbidden(
                path,
                f"cannot be combined with the {RAY_NODE_LABELS_JSON} env var in the pod "
                "template; it is managed by KubeRay",
            )
    for param in ("labels", "labels-file"):
        if param in (group.ray_start_params or {}):
            return forbidden(path, f"cannot be combined with rayStartParams {param}")
    seen: set[str] = set()
    for j, ref in enumerate(group.label_refs or ()):
        ref_path = f"{path}[{j}]"
        field_path = ref.value_from.node_ref.field_path
        fp_path = f"{ref_path}.valueFrom.nodeRef.fieldPath"
        try:
            node_label = node_label_key(field_path)
        except ValueError as exc:
            return invalid(fp_path, field_path, str(exc))
        problems = is_qualified_name(node_label)
        if problems:
            return invalid(fp_path, node_label, "; ".join(problems))
        if node_label not in allowed:
            return forbidden(
                fp_path,
                f"node label {go_quote(node_label)} is not in the operator's allowedNodeLabels",
            )
        ray_key = ray_label_key(ref.name, node_label)
        problems = is_qualified_name(ray_key)
        if problems:
            return invalid(f"{ref_path}.name", ray_key, "; ".join(problems))
        if ray_key in seen:
            return FieldError(ref_path, "", "webhook", "Duplicate", ray_key)
        if ray_key in (group.labels or {}):
            return forbidden(
                ref_path,
                f"Ray label {go_quote(ray_key)} is also set in labels; the static value would "
                "override the delivered one",
            )
        seen.add(ray_key)
    return None


def validate_label_refs(
    spec: RayClusterSpec,
    annotations: Mapping[str, Any] | None,
    allowed: Collection[str],
    base: str = "spec",
    *,
    gates: FeatureGates = None,
) -> FieldError | None:
    """KubeRay's ``validateLabelRefs``: the first problem of any worker group's labelRefs
    (``annotations`` are the admitted object's, ``allowed`` the operator's
    ``allowedNodeLabels``, ``base`` the path of ``spec`` in that object), else None."""
    for i, group in enumerate(spec.worker_group_specs or ()):
        if not group.label_refs:
            continue
        path = join_path(base, f"workerGroupSpecs[{i}].labelRefs")
        error = _group_error(group, path, annotations or {}, allowed, gates)
        if error is not None:
            return error
    return None


def cluster_spec_of(kind: str, obj: Mapping[str, Any]) -> tuple[RayClusterSpec, str] | None:
    """The RayCluster spec a RayCluster, RayJob or RayService object carries and its path
    (``spec``, ``spec.rayClusterSpec``, ``spec.rayClusterConfig``); None when it has none or
    it does not structure."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return None
    where = {
        KIND_RAYCLUSTER: ("spec", spec),
        KIND_RAYJOB: ("spec.rayClusterSpec", spec.get("rayClusterSpec")),
        KIND_RAYSERVICE: ("spec.rayClusterConfig", spec.get("rayClusterConfig")),
    }.get(kind)
    if where is None or not isinstance(where[1], Mapping):
        return None
    try:
        return structure(RayClusterSpec, where[1]), where[0]
    except StructureError:  # a spec that does not structure has only schema errors to report
        return None


def label_refs_spec_errors(
    errors: _Errors, base: str, spec: RayClusterSpec, gates: FeatureGates
) -> None:
    """The controllers' checks of labelRefs, added to ``errors`` (source ``spec``): the gate
    is on, and ``rayVersion`` (when set) is at least 2.45.0."""
    floor = parse_generic_version(NODE_LABEL_DELIVERY_MIN_RAY_VERSION)
    for i, group in enumerate(spec.worker_group_specs or ()):
        if not group.label_refs:
            continue
        path = join_path(base, f"workerGroupSpecs[{i}].labelRefs")
        if not gate_enabled(gates, GATE_NODE_LABEL_DELIVERY):
            errors.add(path, f"{path} {GATE_OFF_MESSAGE}")
            continue
        version = spec.ray_version
        parsed = parse_generic_version(version) if version else None
        if version and floor is not None and (parsed is None or parsed < floor):
            errors.add(
                path,
                f"{path} requires rayVersion {NODE_LABEL_DELIVERY_MIN_RAY_VERSION} or later "
                f"(ray start --labels-file), got {go_quote(version)}",
            )


def webhooks_required_error(spec: RayClusterSpec, base: str = "spec") -> FieldError | None:
    """The RayCluster controller's check when the operator serves no webhooks: a worker
    group with labelRefs would never get its labels (nobody mutates its pods)."""
    for i, group in enumerate(spec.worker_group_specs or ()):
        if group.label_refs:
            path = join_path(base, f"workerGroupSpecs[{i}].labelRefs")
            return FieldError(
                path,
                f"{path} requires the operator to serve its webhooks (ENABLE_WEBHOOKS=true): "
                "node labels are delivered by the pods and pods/binding webhooks",
            )
    return None
