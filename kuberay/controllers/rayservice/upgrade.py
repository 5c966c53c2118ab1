"""An upgrade that cannot finish is bounded (beyond KubeRay, issue #5088).

KubeRay keeps a pending cluster whose head never becomes ready forever, next to the active
one. Here the RayService annotation ``ray.io/upgrade-timeout`` (a Go duration such as
``"30m"`` or integer seconds; absent, zero, negative or malformed = no deadline) bounds an
upgrade: once ``UpgradeInProgress`` has been True that long, the pending cluster is dropped
from the status (it is then deleted as any dangling cluster, after
``rayClusterDeletionDelaySeconds``), the active cluster keeps serving, a Warning Event
``RayServiceUpgradeTimeout`` is recorded and condition ``UpgradeAbandoned=True`` (reason
``UpgradeTimeout``) names the abandoned ``rayClusterConfig`` hash. That spec is not tried
again (no new pending cluster, and its Serve config is not sent to the old cluster) until
``rayClusterConfig`` changes, which removes the condition and starts a new upgrade. An
incremental upgrade that lowered the active cluster's ``target_capacity`` keeps its pending
cluster (and its share of traffic) until that capacity is restored: see ``abandon``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

from kuberay.api.v1.constants import RAY_SERVICE_UPGRADE_TIMEOUT_ANNOTATION
from kuberay.controllers.common.objects import as_map, as_str
from kuberay.controllers.rayservice import status as S
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.clock import parse_time

UPGRADE_TIMEOUT_ANNOTATION: Final = RAY_SERVICE_UPGRADE_TIMEOUT_ANNOTATION
UPGRADE_TIMEOUT_REASON: Final = "UpgradeTimeout"
_HASH = re.compile(r"rayClusterConfig hash ([0-9A-V]{32})")


def upgrade_timeout(rs: Obj) -> float | None:
    """The deadline in seconds (None: no deadline)."""
    annotations = as_map(as_map(rs.get("metadata")).get("annotations"))
    return S.parse_timeout(as_str(annotations.get(UPGRADE_TIMEOUT_ANNOTATION)))


def abandoned_hash(rs: Obj) -> str | None:
    """The ``rayClusterConfig`` hash of the abandoned upgrade, while abandoned."""
    found = S.find(rs, S.UPGRADE_ABANDONED)
    if found is None or found.get("status") != "True":
        return None
    m = _HASH.search(as_str(found.get("message")))
    return m.group(1) if m else None


def upgrade_overdue(rs: Obj, now: dt.datetime) -> float | None:
    """Seconds the upgrade has run when past its deadline, else None."""
    timeout = upgrade_timeout(rs)
    if timeout is None:
        return None
    cond = S.find(rs, S.UPGRADE_IN_PROGRESS)
    if cond is None or cond.get("status") != "True":
        return None
    since = parse_time(cond.get("lastTransitionTime"))
    if since is None:
        return None
    spent = (now - since).total_seconds()
    return spent if spent >= timeout else None


def abandon_message(pending: str, spent: float, goal_hash: str, problem: str | None) -> str:
    """The ``UpgradeAbandoned`` message (carries the hash :func:`abandoned_hash` reads)."""
    why = f": {problem}" if problem else ""
    return (
        f"Upgrade abandoned after {S.go_duration(round(spent))} (annotation "
        f"{UPGRADE_TIMEOUT_ANNOTATION}): pending RayCluster {pending} did not become ready{why}. "
        f"The active RayCluster keeps serving; rayClusterConfig hash {goal_hash} is not tried "
        "again until spec.rayClusterConfig changes."
    )


def explain_upgrade(
    rs: Obj, cluster_problem: str | None, routing_problem: str | None, now: str
) -> None:
    """Beyond KubeRay (#5088): while ``UpgradeInProgress`` is True with
    ``BothActivePendingClustersExist``, its message says why the pending cluster is not ready
    or (incremental upgrade) why traffic cannot move; KubeRay's reason is kept."""
    if cluster_problem:
        text = "waiting for the pending cluster: " + cluster_problem
    elif routing_problem:
        text = "traffic cannot move: " + routing_problem
    else:
        return
    upgrading = S.find(rs, S.UPGRADE_IN_PROGRESS)
    if upgrading is not None and upgrading.get("reason") == S.BOTH_CLUSTERS:
        S.set_cond(
            rs,
            S.UPGRADE_IN_PROGRESS,
            True,
            S.BOTH_CLUSTERS,
            "Both active and pending Ray clusters exist; " + text,
            now,
        )
