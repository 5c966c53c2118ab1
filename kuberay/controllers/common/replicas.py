"""Replica bookkeeping of worker groups beyond the spec's effective values (those, e.g.
``worker_group_desired_replicas``, are in :mod:`kuberay.api.v1.rules`).

* scale-down without autoscaler hints happens only when autoscaling is off or
  ``ENABLE_RANDOM_POD_DELETE`` is set;
* multi-host groups (``numOfHosts > 1`` with gate ``RayMultiHostIndexing``) are reconciled in
  whole replicas; new pods take the lowest ``ray.io/worker-group-replica-index`` that no
  existing pod of the group holds (terminating pods included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kuberay.api.v1.rules import is_autoscaling_enabled, num_of_hosts

from . import gates
from .options import BuildOptions

__all__ = [
    "is_multi_host_indexing",
    "lowest_free_indices",
    "random_scale_down_allowed",
]


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
