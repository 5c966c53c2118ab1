"""``why`` on a RayCluster whose spec changed under its pods, with the operator's own rules:
a worker group gone from the spec whose pods are being deleted
(:mod:`kuberay.controllers.raycluster.removed_groups`), and pods that run an older template
of their group (:mod:`kuberay.controllers.raycluster.templates`, the operator's condition
``PodTemplateApplied``), with how to roll them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.api.v1 import constants as C
from kuberay.controllers.raycluster.removed_groups import removed_groups
from kuberay.controllers.raycluster.templates import (
    HEAD,
    PODS_RUN_OLDER_TEMPLATE,
    outdated_groups,
)
from kuberay.diagnosis.findings import INFO, WARNING, Finding, Snapshot, ref
from kuberay.kube import objects as k8s

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj


def _pods(n: int) -> str:
    return f"{n} Pod" if n == 1 else f"{n} Pods"


def check_removed_groups(snap: Snapshot) -> list[Finding]:
    """Pods of worker groups no longer in ``spec.workerGroupSpecs`` (being deleted)."""
    cluster = snap.obj
    found = []
    for group in removed_groups(cluster, snap.pods):
        going = f", {len(group.terminating)} already terminating" if group.terminating else ""
        found.append(
            Finding(
                INFO,
                "WorkerGroupRemoved",
                ref(cluster),
                f"worker group {group.name} is no longer in spec.workerGroupSpecs: the "
                f"operator deletes its {_pods(group.total)}{going}, as a scale-down to zero "
                "would (Ray tasks and actors on them end; KubeRay would leave them running)",
                "to keep the Pods not deleted yet, put the group back into spec.workerGroupSpecs",
            )
        )
    return found


def _delete_command(cluster: Obj, group: str) -> str:
    name = k8s.meta(cluster).get("name", "")
    if group == HEAD:
        selector = f"{C.RAY_CLUSTER_LABEL_KEY}={name},{C.RAY_NODE_TYPE_LABEL_KEY}={C.HEAD_NODE}"
    else:
        selector = f"{C.RAY_CLUSTER_LABEL_KEY}={name},{C.RAY_NODE_GROUP_LABEL_KEY}={group}"
    return f"kubectl delete pod -l {selector}"


def check_older_templates(snap: Snapshot) -> list[Finding]:
    """Pods that run an older template of their group, each group with how to roll it."""
    cluster = snap.obj
    strategy = (k8s.spec(cluster).get("upgradeStrategy") or {}).get("type")
    if strategy == C.UPGRADE_STRATEGY_RECREATE:
        return []  # the operator recreates every pod itself
    found = []
    for group in outdated_groups(cluster, snap.pods):
        which = "the head group" if group.group == HEAD else f"worker group {group.group}"
        found.append(
            Finding(
                WARNING,
                PODS_RUN_OLDER_TEMPLATE,
                ref(cluster),
                f"{group.outdated} of {_pods(group.total)} of {which} run an older template "
                "of the group: running Pods are not restarted for a template change (as in "
                "KubeRay), so the edit does not reach them",
                "to roll them, set spec.upgradeStrategy.type: Recreate (every Pod of the "
                "cluster is recreated at once), or delete them and the operator recreates "
                f"them from the current template: {_delete_command(cluster, group.group)}",
            )
        )
    return found


__all__ = ["check_older_templates", "check_removed_groups"]
