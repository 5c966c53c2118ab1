"""Gang sizes and resource totals shared by the PodGroup plugins (KubeRay
``CalculateDesired*`` / ``CalculateMin*`` and the submitter's share)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.api.v1.rules import (
    calculate_desired_replicas,
    calculate_min_replicas,
    is_autoscaling_enabled,
    submission_mode,
)
from kuberay.controllers.builders.resources import (
    calculate_desired_resources,
    calculate_min_resources,
    calculate_pod_resource,
)
from kuberay.controllers.builders.submitter import (
    build_submitter_pod_template,
    default_submitter_container,
)
from kuberay.controllers.common.options import BuildOptions
from kuberay.gocompat.quantity import Quantity
from kuberay.kube import objects as k8s

Resources = dict[str, Quantity]


def gang_params(cluster_spec: Mapping[str, Any]) -> tuple[int, Resources]:
    """``(minMember, minResources)`` of a cluster spec: desired workers + 1 and the desired
    totals, or with in-tree autoscaling the minimum workers + 1 and the minimum totals
    (suspended worker groups count for nothing)."""
    cluster = {"spec": cluster_spec}
    if not is_autoscaling_enabled(cluster):
        return calculate_desired_replicas(cluster) + 1, calculate_desired_resources(cluster)
    return calculate_min_replicas(cluster) + 1, calculate_min_resources(cluster)


def sum_resources(*lists: Mapping[str, Quantity]) -> Resources:
    """Per-name sum (Quantity arithmetic, first term's format)."""
    total: Resources = {}
    for resource_list in lists:
        for name, quantity in resource_list.items():
            total[name] = total[name].plus(quantity) if name in total else quantity
    return total


def submitter_template(rayjob: Mapping[str, Any]) -> dict[str, Any]:
    """KubeRay ``GetSubmitterTemplate`` for resource accounting (the user's
    ``submitterPodTemplate`` or the default one)."""
    meta = k8s.meta(rayjob)
    spec = k8s.spec(rayjob)
    cluster = {"metadata": {"name": meta.get("name", "")}, "spec": spec.get("rayClusterSpec") or {}}
    return build_submitter_pod_template(rayjob, cluster, gates={}, options=BuildOptions())


def submitter_resources(rayjob: Mapping[str, Any]) -> Resources:
    """What the RayJob's submitter reserves: the K8sJobMode submitter pod, the SidecarMode
    default submitter container (requests, limits filling gaps), nothing otherwise."""
    spec = k8s.spec(rayjob)
    mode = submission_mode(spec)
    if mode == JobSubmissionMode.K8S_JOB_MODE:
        return calculate_pod_resource(submitter_template(rayjob).get("spec") or {})
    if mode == JobSubmissionMode.SIDECAR_MODE:
        container = default_submitter_container(spec.get("rayClusterSpec") or {})
        return calculate_pod_resource({"containers": [container]})
    return {}


def resources_json(resources: Mapping[str, Quantity]) -> dict[str, str]:
    """A ``ResourceList`` as the apiserver stores it (name -> quantity text)."""
    return {name: str(quantity) for name, quantity in sorted(resources.items())}


def same_resources(stored: object, wanted: Mapping[str, Quantity]) -> bool:
    """KubeRay ``quotav1.Equals``: same names, numerically equal quantities."""
    if not isinstance(stored, Mapping) or set(stored) != set(wanted):
        return False
    return all(Quantity.from_json(stored[k]).cmp(wanted[k]) == 0 for k in wanted)


__all__ = [
    "Resources",
    "gang_params",
    "resources_json",
    "same_resources",
    "submitter_resources",
    "submitter_template",
    "sum_resources",
]
