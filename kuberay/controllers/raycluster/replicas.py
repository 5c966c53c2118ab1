"""How many pods a worker group should have (KubeRay's ``GetWorkerGroupDesiredReplicas``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_INT32 = 2**31 - 1


def group_suspended(group: Mapping[str, Any]) -> bool:
    """True when ``workerGroupSpecs[i].suspend`` is set."""
    return bool(group.get("suspend"))


def num_of_hosts(group: Mapping[str, Any]) -> int:
    """``numOfHosts``, where missing or <= 0 counts as 1."""
    hosts = int(group.get("numOfHosts") or 1)
    return hosts if hosts > 0 else 1


def group_desired_replicas(group: Mapping[str, Any], *, cluster_suspended: bool) -> int:
    """Pods wanted for ``group``: replicas clamped to [min, max], times numOfHosts;
    0 when the group or the whole cluster is suspended."""
    if cluster_suspended or group_suspended(group):
        return 0
    min_r = int(group.get("minReplicas") or 0)
    max_raw = group.get("maxReplicas")
    max_r = int(max_raw) if max_raw is not None else MAX_INT32
    replicas = group.get("replicas")
    desired = min_r if replicas is None or int(replicas) < min_r else int(replicas)
    desired = min(desired, max_r)
    return desired * num_of_hosts(group)
