"""Worker groups gone from ``spec.workerGroupSpecs``: their pods are deleted (beyond KubeRay).

KubeRay leaves the pods of a removed group running for good (its issue #1739: orphaned pods,
and an autoscaler that crash-loops on a node type it no longer knows). Here they are deleted
as a scale-down to zero would delete them: one delete per pod (pinned to its uid), recorded in
Expectations under the group's key, so a stale cache never deletes twice, and a Normal Event
(``WorkerGroupRemoved``) naming the group and how many pods went. Tasks and actors on them end
as on any scale-down.

No drain first: Ray drains a node only through a GCS gRPC call (the autoscaler's
``DrainNode``) that this operator, like KubeRay's, never makes (it speaks to Ray only through
the dashboard's HTTP API, which offers no drain), and neither operator has a drain step in its
scale-down to reuse: both delete pods directly. What a pod deletion gives stays: the pod's
grace period and a ``preStop`` hook in the worker template (KubeRay's samples run
``ray stop`` there). KubeRay's #5142 proposes an opt-in drained removal for the same gap.

Which pods (:func:`removed_groups`, pure): pods labelled ``ray.io/cluster=<this cluster>`` and
``ray.io/node-type=worker`` whose non-empty ``ray.io/group`` names no group of the spec, and
whose controller owner reference, when they have one, is this cluster (its uid). Head pods,
pods of groups still in the spec, pods of another cluster and pods without a group label are
never selected. A pod already terminating is awaited, never deleted again.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from kuberay.api.v1 import constants as C
from kuberay.controllers.raycluster.context import Ctx, group_key
from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.kube import ApiError
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING


@attrs.frozen
class RemovedGroup:
    """The pods of one worker group no longer in the spec: ``live`` (to delete now, by
    name) and ``terminating`` (names of pods already going)."""

    name: str
    live: tuple[Obj, ...]
    terminating: tuple[str, ...]

    @property
    def total(self) -> int:
        """Every pod of the group still in the cache."""
        return len(self.live) + len(self.terminating)


def _owned_by(pod: Obj, cluster: Obj) -> bool:
    """No controller reference, or one naming this very cluster."""
    uid = k8s.meta(cluster).get("uid")
    for ref in k8s.meta(pod).get("ownerReferences") or []:
        if ref.get("controller"):
            return bool(ref.get("kind") == C.KIND_RAYCLUSTER and uid and ref.get("uid") == uid)
    return True


def removed_groups(cluster: Obj, pods: Iterable[Obj]) -> list[RemovedGroup]:
    """The worker groups of ``cluster`` that have pods in ``pods`` but no entry in
    ``spec.workerGroupSpecs``, by group name; pods by name within each."""
    meta = k8s.meta(cluster)
    wanted = {
        str(g.get("groupName") or "") for g in k8s.spec(cluster).get("workerGroupSpecs") or []
    }
    found: dict[str, list[Obj]] = {}
    for pod in pods:
        labels = k8s.meta(pod).get("labels") or {}
        group = labels.get(C.RAY_NODE_GROUP_LABEL_KEY) or ""
        if (
            labels.get(C.RAY_CLUSTER_LABEL_KEY) != meta.get("name")
            or k8s.meta(pod).get("namespace", meta.get("namespace")) != meta.get("namespace")
            or labels.get(C.RAY_NODE_TYPE_LABEL_KEY) != C.WORKER_NODE
            or not group
            or group in wanted
            or not _owned_by(pod, cluster)
        ):
            continue
        found.setdefault(group, []).append(pod)
    out = []
    for name in sorted(found):
        members = sorted(found[name], key=lambda p: str(p["metadata"].get("name")))
        out.append(
            RemovedGroup(
                name,
                tuple(p for p in members if not k8s.meta(p).get("deletionTimestamp")),
                tuple(
                    str(p["metadata"]["name"])
                    for p in members
                    if k8s.meta(p).get("deletionTimestamp")
                ),
            )
        )
    return out


def removal_message(cluster: Obj, group: str, count: int) -> str:
    """The Normal Event after ``count`` pods of removed ``group`` were deleted."""
    meta = k8s.meta(cluster)
    pods = "Pod" if count == 1 else "Pods"
    return (
        f"Deleted {count} {pods} of worker group {group} of RayCluster "
        f"{meta.get('namespace')}/{meta.get('name')}: the group is no longer in "
        "spec.workerGroupSpecs"
    )


def removal_failure(cluster: Obj, group: str, pod: str, error: object) -> str:
    """The Warning Event when deleting ``pod`` of removed ``group`` failed."""
    meta = k8s.meta(cluster)
    return (
        f"Failed deleting worker Pod {meta.get('namespace')}/{pod} of worker group {group}, "
        f"which is no longer in spec.workerGroupSpecs, {error}"
    )


async def delete_removed_groups(ctx: Ctx, cluster: Obj) -> None:
    """Delete the live pods of every removed worker group of ``cluster`` whose earlier
    deletions the cache has shown (raises ReconcileError when a delete fails). A pass with
    nothing left to delete writes nothing."""
    pods = ctx.children("v1", "Pod", cluster)
    present = {p["metadata"]["name"] for p in pods}
    for group in removed_groups(cluster, pods):
        key = group_key(cluster, group.name)
        ctx.expectations.observe(key, lambda n: n in present)
        if not group.live or not ctx.expectations.satisfied(key):
            continue
        deleted = 0
        try:
            for pod in group.live:
                if await ctx.delete_pod(pod):
                    ctx.expectations.expect_deletions(key, [pod["metadata"]["name"]])
                    deleted += 1
        except ApiError as exc:
            failure = removal_failure(cluster, group.name, pod["metadata"]["name"], exc)
            ctx.event(cluster, WARNING, "FailedToDeleteWorkerPod", failure, "Delete")
            raise ReconcileError(str(exc), "FailedDeleteWorkerPod") from exc
        finally:
            if deleted:
                message = removal_message(cluster, group.name, deleted)
                ctx.event(cluster, NORMAL, "WorkerGroupRemoved", message, "Delete")


__all__ = [
    "RemovedGroup",
    "delete_removed_groups",
    "removal_failure",
    "removal_message",
    "removed_groups",
]
