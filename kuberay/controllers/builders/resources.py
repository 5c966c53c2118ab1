"""Desired CPU/memory/GPU/TPU totals of a RayCluster (``status.desired*``).

KubeRay sums, per container of the head template and of every non-suspended worker group,
``requests`` falling back to ``limits`` per resource name; a group counts
``numOfHosts x replicas`` times (``replicas`` as stored, *not* clamped to min/max). GPU is the
sum of every resource whose name ends in ``gpu`` (or is a MIG profile); TPU is
``google.com/tpu``. Sums follow Quantity arithmetic, so the printed format is the first
non-zero term's (``1 + 3 x 500m = 2500m``, ``4 x 1Gi = 4Gi``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.api.v1.rules import is_worker_group_suspended, num_of_hosts
from kuberay.controllers.common.objects import as_list, as_map, pod_spec_of_template, spec
from kuberay.gocompat.quantity import Quantity

from .ray_start import is_gpu_resource_key

__all__ = [
    "calculate_desired_resources",
    "calculate_min_resources",
    "calculate_pod_resource",
    "desired_resource_status",
    "sum_gpus",
]


def calculate_pod_resource(pod_spec: Mapping[str, Any]) -> dict[str, Quantity]:
    """KubeRay ``CalculatePodResource`` over ``containers`` (requests win over limits)."""
    total: dict[str, Quantity] = {}
    for container in as_list(pod_spec.get("containers")):
        resources = as_map(as_map(container).get("resources"))
        merged = {k: Quantity.from_json(v) for k, v in as_map(resources.get("requests")).items()}
        for name, raw in as_map(resources.get("limits")).items():
            if name not in merged:
                merged[name] = Quantity.from_json(raw)
        for name, quantity in merged.items():
            total[name] = total[name].plus(quantity) if name in total else quantity
    return total


def _sum_lists(lists: list[dict[str, Quantity]]) -> dict[str, Quantity]:
    total: dict[str, Quantity] = {}
    for resource_list in lists:
        for name, quantity in resource_list.items():
            total[name] = total[name].plus(quantity) if name in total else quantity
    return total


def _calculate(cluster: Mapping[str, Any], count_key: str) -> dict[str, Quantity]:
    cluster_spec = spec(cluster)
    head = as_map(cluster_spec.get("headGroupSpec"))
    lists = [calculate_pod_resource(pod_spec_of_template(head.get("template")))]
    for raw_group in as_list(cluster_spec.get("workerGroupSpecs")):
        group = as_map(raw_group)
        if is_worker_group_suspended(group):
            continue
        count = group.get(count_key)
        replicas = count if isinstance(count, int) and not isinstance(count, bool) else 0
        pods = num_of_hosts(group) * replicas
        lists.append(
            {
                name: q.times(pods)
                for name, q in calculate_pod_resource(
                    pod_spec_of_template(group.get("template"))
                ).items()
            }
        )
    return _sum_lists(lists)


def calculate_desired_resources(cluster: Mapping[str, Any]) -> dict[str, Quantity]:
    """KubeRay ``CalculateDesiredResources`` (uses raw ``replicas``)."""
    return _calculate(cluster, "replicas")


def calculate_min_resources(cluster: Mapping[str, Any]) -> dict[str, Quantity]:
    """KubeRay ``CalculateMinResources`` (uses ``minReplicas``)."""
    return _calculate(cluster, "minReplicas")


def sum_gpus(resources: Mapping[str, Quantity]) -> Quantity:
    """Sum of every non-zero GPU resource (sorted by name for a deterministic format)."""
    total = Quantity()
    for name in sorted(resources):
        quantity = resources[name]
        if is_gpu_resource_key(name) and not quantity.is_zero():
            total = total.plus(quantity)
    return total


def desired_resource_status(cluster: Mapping[str, Any]) -> dict[str, str]:
    """``{desiredCPU, desiredMemory, desiredGPU, desiredTPU}`` as the status carries them."""
    totals = calculate_desired_resources(cluster)
    return {
        "desiredCPU": str(totals.get("cpu", Quantity())),
        "desiredMemory": str(totals.get("memory", Quantity())),
        "desiredGPU": str(sum_gpus(totals)),
        "desiredTPU": str(totals.get(c.TPU_CONTAINER_RESOURCE_NAME, Quantity())),
    }
