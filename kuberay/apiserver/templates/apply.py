"""Which compute templates a RayCluster, RayJob or RayService body names, and the body with
them applied (KubeRay's ``apiserversdk/util/template.go``; pure: dicts in, dicts out).

A group (``headGroupSpec`` or an item of ``workerGroupSpecs``; a RayJob's under
``spec.rayClusterSpec``, a RayService's under ``spec.rayClusterConfig``) names its template
in ``computeTemplate``. Applying one to a group that has a Pod ``template``, as KubeRay does:

- the Pod template's metadata gets the annotation ``ray.io/compute-template=<name>``;
- every container's ``resources.limits`` and ``resources.requests`` get ``cpu`` and
  ``memory`` (other keys there are kept; a ``limits``/``requests`` that is not a map is
  replaced);
- the container named ``ray-head`` (head group) or ``ray-worker`` (worker groups) also gets
  the GPUs (when non-zero, under ``gpu_accelerator``, default ``nvidia.com/gpu``) and the
  extended resources, as numbers;
- the template's tolerations (all four keys) are appended to the Pod's.

The ``computeTemplate`` field stays in the body, as KubeRay forwards it (the CRD's schema
prunes it). Fields this module does not know are never touched. A value of the wrong type
where a map or list is expected is skipped, as KubeRay's type assertions skip it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any, Final

from kuberay.api.v1.constants import (
    COMPUTE_TEMPLATE_KEY,
    HEAD_NODE,
    KIND_RAYCLUSTER,
    KIND_RAYJOB,
    KIND_RAYSERVICE,
    WORKER_NODE,
)
from kuberay.apiserver.templates.model import DEFAULT_GPU_ACCELERATOR, ComputeTemplate

#: The field of a group spec that names its template.
TEMPLATE_FIELD: Final = "computeTemplate"
#: kind -> the field of ``spec`` that holds the cluster spec (None: ``spec`` itself).
CLUSTER_SPEC_FIELD: Final[Mapping[str, str | None]] = {
    KIND_RAYCLUSTER: None,
    KIND_RAYJOB: "rayClusterSpec",
    KIND_RAYSERVICE: "rayClusterConfig",
}


def _cluster(kind: str, body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The body's cluster spec (the groups' parent), if it has one."""
    if kind not in CLUSTER_SPEC_FIELD:
        raise ValueError(f"compute templates do not apply to kind {kind!r}")
    spec = body.get("spec")
    field = CLUSTER_SPEC_FIELD[kind]
    cluster = spec.get(field) if isinstance(spec, dict) and field else spec
    return cluster if isinstance(cluster, dict) else None


def _groups(cluster: Mapping[str, Any] | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(node type, group spec)`` of each group, head first."""
    head = cluster.get("headGroupSpec") if cluster else None
    if isinstance(head, dict):
        yield HEAD_NODE, head
    workers = cluster.get("workerGroupSpecs") if cluster else None
    for worker in workers if isinstance(workers, list) else ():
        if isinstance(worker, dict):
            yield WORKER_NODE, worker


def referenced_names(kind: str, body: Mapping[str, Any]) -> list[str]:
    """The template names the body's groups give, each once, head first (a value that is not
    a string is ignored, as KubeRay ignores it)."""
    names: dict[str, None] = {}
    for _, group in _groups(_cluster(kind, body)):
        name = group.get(TEMPLATE_FIELD)
        if isinstance(name, str):
            names[name] = None
    return list(names)


def _child_map(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """``parent[key]``, replaced by a new map when it is not one (KubeRay's
    ``if !ok { m = make(map); parent[key] = m }``)."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = parent[key] = {}
    return value


def _apply_to_group(template: ComputeTemplate, group: dict[str, Any], node_type: str) -> None:
    pod = group.get("template")
    if not isinstance(pod, dict):
        return
    _child_map(_child_map(pod, "metadata"), "annotations")[COMPUTE_TEMPLATE_KEY] = template.name
    pod_spec = pod.get("spec")
    if not isinstance(pod_spec, dict):
        return
    basics = {"cpu": str(template.cpu), "memory": template.memory_quantity}
    extra: dict[str, int] = {}
    if template.gpu:
        extra[template.gpu_accelerator or DEFAULT_GPU_ACCELERATOR] = template.gpu
    extra.update(template.extended_resources)
    containers = pod_spec.get("containers")
    for container in containers if isinstance(containers, list) else ():
        if not isinstance(container, dict):
            continue
        resources = _child_map(container, "resources")
        for side in ("limits", "requests"):
            amounts = _child_map(resources, side)
            amounts.update(basics)
            if container.get("name") == f"ray-{node_type}":
                amounts.update(extra)
    if template.tolerations:
        existing = pod_spec.get("tolerations")
        pod_spec["tolerations"] = [
            *(existing if isinstance(existing, list) else ()),
            *(
                {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
                for t in template.tolerations
            ),
        ]


def _applied(
    group: dict[str, Any], node_type: str, templates: Mapping[str, ComputeTemplate]
) -> dict[str, Any]:
    """A copy of ``group`` with its template applied, or ``group`` when it names none."""
    name = group.get(TEMPLATE_FIELD)
    if not (isinstance(name, str) and name in templates):
        return group
    applied = copy.deepcopy(group)
    _apply_to_group(templates[name], applied, node_type)
    return applied


def apply_templates(
    kind: str, body: Mapping[str, Any], templates: Mapping[str, ComputeTemplate]
) -> dict[str, Any]:
    """``body`` with each group's named template (looked up in ``templates``) applied; groups
    naming no template, or one not in ``templates``, are left as they are. ``body`` is not
    changed: the maps on the way to a templated group, and that group, are copies."""
    result = dict(body)
    if _cluster(kind, body) is None:
        return result
    spec = result["spec"] = dict(body["spec"])
    field = CLUSTER_SPEC_FIELD[kind]
    cluster = spec
    if field:
        cluster = spec[field] = dict(spec[field])
    head = cluster.get("headGroupSpec")
    if isinstance(head, dict):
        cluster["headGroupSpec"] = _applied(head, HEAD_NODE, templates)
    workers = cluster.get("workerGroupSpecs")
    if isinstance(workers, list):
        cluster["workerGroupSpecs"] = [
            _applied(w, WORKER_NODE, templates) if isinstance(w, dict) else w for w in workers
        ]
    return result
