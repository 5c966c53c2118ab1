"""Replica arithmetic of worker groups (KubeRay ``GetWorkerGroupDesiredReplicas`` and friends).

* desired pods of a group = clamp(``replicas``, ``minReplicas``, ``maxReplicas``) x
  ``numOfHosts`` (``replicas`` missing or below min -> min; above max -> max; a suspended group
  -> 0). ``numOfHosts`` missing or <= 0 counts as 1 (the CRD defaults it to 1);
* cluster min/max skip suspended groups; max is summed in 64 bits and capped at 2^31-1;
* ``workersToDelete`` is honoured but never cleared by the operator;
* scale-down without autoscaler hints happens only when autoscaling is off or
  ``ENABLE_RANDOM_POD_DELETE`` is set;
* multi-host groups (``numOfHosts > 1`` with gate ``RayMultiHostIndexing``) are reconciled in
  whole replicas; new pods take the lowest ``ray.io/worker-group-replica-index`` that no
  existing pod of the group holds (terminating pods included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from . import gates
from .objects import as_list, as_map, spec
from .options import BuildOptions
from .predicates import is_autoscaling_enabled

__all__ = [
    "MAX_INT32",
    "calculate_desired_replicas",
    "calculate_max_replicas",
    "calculate_min_replicas",
    "is_multi_host_indexing",
    "is_worker_group_suspended",
    "lowest_free_indices",
    "num_of_hosts",
    "random_scale_down_allowed",
    "worker_group_desired_replicas",
    "workers_to_delete",
]

MAX_INT32: Final = (1 << 31) - 1


def _int(value: object, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def num_of_hosts(group: Mapping[str, Any]) -> int:
    """``numOfHosts``; missing or <= 0 counts as 1 (KubeRay v1.7: a group written for an
    old CRD without the default must not scale to zero)."""
    hosts = _int(group.get("numOfHosts"), 1)
    return hosts if hosts > 0 else 1


def is_worker_group_suspended(group: Mapping[str, Any]) -> bool:
    return group.get("suspend") is True


def worker_group_desired_replicas(group: Mapping[str, Any]) -> int:
    """Desired pod count of one worker group."""
    if is_worker_group_suspended(group):
        return 0
    minimum = _int(group.get("minReplicas"), 0)
    maximum = _int(group.get("maxReplicas"), MAX_INT32)
    replicas = group.get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < minimum:
        count = minimum
    elif replicas > maximum:
        count = maximum
    else:
        count = replicas
    return count * num_of_hosts(group)


def _groups(cluster: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [as_map(g) for g in as_list(spec(cluster).get("workerGroupSpecs"))]


def calculate_desired_replicas(cluster: Mapping[str, Any]) -> int:
    """``status.desiredWorkerReplicas``."""
    return sum(worker_group_desired_replicas(g) for g in _groups(cluster))


def calculate_min_replicas(cluster: Mapping[str, Any]) -> int:
    """``status.minWorkerReplicas`` (suspended groups excluded)."""
    return sum(
        _int(g.get("minReplicas"), 0) * num_of_hosts(g)
        for g in _groups(cluster)
        if not is_worker_group_suspended(g)
    )


def calculate_max_replicas(cluster: Mapping[str, Any]) -> int:
    """``status.maxWorkerReplicas`` (suspended groups excluded, capped to int32)."""
    total = sum(
        _int(g.get("maxReplicas"), MAX_INT32) * num_of_hosts(g)
        for g in _groups(cluster)
        if not is_worker_group_suspended(g)
    )
    return max(min(total, MAX_INT32), -(1 << 31))


def workers_to_delete(group: Mapping[str, Any]) -> list[str]:
    """``scaleStrategy.workersToDelete`` of a group."""
    names = as_list(as_map(group.get("scaleStrategy")).get("workersToDelete"))
    return [n for n in names if isinstance(n, str)]


def random_scale_down_allowed(cluster: Mapping[str, Any], options: BuildOptions) -> bool:
    """Whether surplus pods may be deleted without ``workersToDelete``."""
    return not is_autoscaling_enabled(cluster) or options.enable_random_pod_delete


def is_multi_host_indexing(group: Mapping[str, Any], features: Mapping[str, bool] | None) -> bool:
    """The group is reconciled as whole multi-host replicas."""
    return num_of_hosts(group) > 1 and gates.feature_enabled(
        features, gates.RAY_MULTI_HOST_INDEXING
    )


def lowest_free_indices(used: Iterable[int], count: int) -> list[int]:
    """The ``count`` smallest non-negative integers not in ``used`` (replica indices)."""
    taken = set(used)
    result: list[int] = []
    candidate = 0
    while len(result) < count:
        if candidate not in taken:
            result.append(candidate)
            taken.add(candidate)
        candidate += 1
    return result
