"""Volcano (``--batch-scheduler=volcano``): one ``scheduling.volcano.sh/v1beta1`` PodGroup
``ray-<name>-pg`` per RayCluster, or per RayJob (its cluster then skips its own), sized
to the gang (``minMember`` = workers + 1 head; ``minResources`` their totals, plus the
submitter's for a RayJob), with queue, priority class and network topology taken from the
owner's labels. Children get ``schedulerName: volcano``, the group-name and task-spec
annotations and the queue / priority-class labels.

On RayJob completion the PodGroup is resized to the live cluster (KubeRay v1.7: updated,
not deleted); on RayJob suspend (cluster gone) and on RayCluster suspend (beyond KubeRay,
its PR #5200) it is zeroed, so the queue no longer reserves capacity for it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import structlog

from kuberay.api.v1 import constants as C
from kuberay.controllers.batchscheduler.interface import (
    BatchScheduler,
    BatchSchedulerError,
    copy_label,
    kind_of,
    labels_of,
    set_annotation,
    set_scheduler_name,
)
from kuberay.controllers.batchscheduler.resources import (
    Resources,
    gang_params,
    resources_json,
    same_resources,
    submitter_resources,
    sum_resources,
)
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.gocompat.goutil import GoNumError, go_atoi
from kuberay.kube import ApiError, Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.children import ensure

log = structlog.get_logger("kuberay.batchscheduler.volcano")


PLUGIN_NAME = "volcano"
POD_GROUP_API_VERSION = "scheduling.volcano.sh/v1beta1"
POD_GROUP_KIND = "PodGroup"
QUEUE_NAME_LABEL_KEY = "volcano.sh/queue-name"
NETWORK_TOPOLOGY_MODE_LABEL_KEY = "volcano.sh/network-topology-mode"
NETWORK_TOPOLOGY_HIGHEST_TIER_LABEL_KEY = "volcano.sh/network-topology-highest-tier-allowed"
#: Volcano's ``KubeGroupNameAnnotationKey`` and ``TaskSpecKey``.
GROUP_NAME_ANNOTATION_KEY = "scheduling.k8s.io/group-name"
TASK_SPEC_ANNOTATION_KEY = "volcano.sh/task-spec"


def _from_rayjob(obj: Mapping[str, Any]) -> bool:
    return labels_of(obj).get(C.RAY_ORIGINATED_FROM_CRD_LABEL_KEY) == C.KIND_RAYJOB


def pod_group_name(obj: Mapping[str, Any]) -> str:
    """``ray-<name>-pg``; a RayJob's cluster uses the RayJob's name."""
    name = str(k8s.meta(obj).get("name") or "")
    if _from_rayjob(obj):
        name = labels_of(obj).get(C.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY) or name
    return f"ray-{name}-pg"


def _network_topology(owner: Mapping[str, Any], pg_name: str) -> Obj | None:
    labels = labels_of(owner)
    if NETWORK_TOPOLOGY_MODE_LABEL_KEY not in labels:
        return None
    topology: Obj = {}
    if labels[NETWORK_TOPOLOGY_MODE_LABEL_KEY]:  # an empty mode is left out, as in KubeRay
        topology["mode"] = labels[NETWORK_TOPOLOGY_MODE_LABEL_KEY]
    if NETWORK_TOPOLOGY_HIGHEST_TIER_LABEL_KEY in labels:
        raw = labels[NETWORK_TOPOLOGY_HIGHEST_TIER_LABEL_KEY]
        tier, problem = _atoi(raw)
        if problem:
            ns = k8s.meta(owner).get("namespace")
            raise BatchSchedulerError(
                f"failed to convert {NETWORK_TOPOLOGY_HIGHEST_TIER_LABEL_KEY} label to int: "
                f'strconv.Atoi: parsing "{raw}": {problem} for podgroup {pg_name} '
                f"in namespace {ns}"
            )
        topology["highestTierAllowed"] = tier
    return topology


def _atoi(raw: str) -> tuple[int, str]:
    """A 64-bit Go ``strconv.Atoi``: ``(value, "")`` or ``(0, problem)`` with the
    problem worded as Go's ``NumError`` does (label values need no quoting escapes)."""
    try:
        return go_atoi(raw), ""
    except GoNumError as exc:
        return 0, exc.problem


def build_pod_group(owner: Mapping[str, Any], min_member: int, resources: Resources) -> Obj:
    """The PodGroup KubeRay creates for ``owner`` (a RayCluster or RayJob): controller
    owner reference, the owner's annotations, minMember/minResources, queue, priority
    class and network topology from the owner's labels, ``status.phase: Pending``."""
    meta = k8s.meta(owner)
    name = pod_group_name(owner)
    spec: Obj = {"minMember": min_member, "minResources": resources_json(resources)}
    topology = _network_topology(owner, name)
    if topology is not None:
        spec["networkTopology"] = topology
    labels = labels_of(owner)
    # Empty label values leave the fields out (KubeRay's PodGroup omits empty strings).
    if labels.get(QUEUE_NAME_LABEL_KEY):
        spec["queue"] = labels[QUEUE_NAME_LABEL_KEY]
    if labels.get(C.RAY_PRIORITY_CLASS_NAME_LABEL_KEY):
        spec["priorityClassName"] = labels[C.RAY_PRIORITY_CLASS_NAME_LABEL_KEY]
    pg_meta: Obj = {
        "name": name,
        "namespace": meta.get("namespace"),
        "ownerReferences": [controller_owner_reference(owner, kind_of(owner))],
    }
    if meta.get("annotations"):
        pg_meta["annotations"] = dict(meta["annotations"])
    return {
        "apiVersion": POD_GROUP_API_VERSION,
        "kind": POD_GROUP_KIND,
        "metadata": pg_meta,
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def rayjob_gang(rayjob: Mapping[str, Any]) -> tuple[int, Resources]:
    """A RayJob's gang: its cluster's minMember (the submitter is left out: it waits for
    the cluster, a gang waiting for it would deadlock) and the cluster's resources plus
    the submitter's (so its capacity is reserved)."""
    cluster_spec = k8s.spec(rayjob).get("rayClusterSpec") or {}
    min_member, resources = gang_params(cluster_spec)
    return min_member, sum_resources(resources, submitter_resources(rayjob))


class VolcanoScheduler(BatchScheduler):
    """The volcano plugin (owns ``scheduling.volcano.sh/v1beta1`` PodGroups)."""

    plugin_name = PLUGIN_NAME
    owned_kinds = ((POD_GROUP_API_VERSION, POD_GROUP_KIND),)

    async def do_batch_scheduling_on_submission(self, obj: Obj) -> None:
        """Create or resize the PodGroup of a RayCluster (skipped for a RayJob's cluster)
        or of a RayJob (refused for one using ``clusterSelector``)."""
        if kind_of(obj) == C.KIND_RAYJOB:
            if not k8s.spec(obj).get("rayClusterSpec"):
                meta = k8s.meta(obj)
                raise BatchSchedulerError(
                    f"gang scheduling does not support RayJob {meta.get('namespace')}/"
                    f"{meta.get('name')} referencing an existing RayCluster"
                )
            await self.sync_pod_group(obj, *rayjob_gang(obj))
            return
        if _from_rayjob(obj):
            return
        await self.sync_pod_group(obj, *gang_params(k8s.spec(obj)))

    def add_metadata_to_child_resource(self, parent: Obj, child: Obj, group_name: str) -> None:
        copy_label(parent, child, QUEUE_NAME_LABEL_KEY)
        copy_label(parent, child, C.RAY_PRIORITY_CLASS_NAME_LABEL_KEY)
        set_annotation(child, GROUP_NAME_ANNOTATION_KEY, pod_group_name(parent))
        set_annotation(child, TASK_SPEC_ANNOTATION_KEY, group_name)
        set_scheduler_name(child, self.name())

    async def cleanup_on_completion(self, obj: Obj) -> bool:
        """RayJob only: resize its PodGroup to the live cluster (suspended worker groups
        excluded), or to zero when the cluster is gone or going."""
        if kind_of(obj) != C.KIND_RAYJOB:
            return False
        spec = k8s.spec(obj)
        status = k8s.status(obj)
        if spec.get("clusterSelector") or not status.get("rayClusterName"):
            return False
        assert self.client is not None
        ns = obj["metadata"]["namespace"]
        min_member = 0
        resources: Resources = {}
        try:
            cluster = await self.client.get(
                C.API_VERSION, C.KIND_RAYCLUSTER, status["rayClusterName"], ns
            )
        except NotFound:
            log.info(
                "RayCluster not found, emptying the PodGroup", raycluster=status["rayClusterName"]
            )
        else:
            if not cluster["metadata"].get("deletionTimestamp"):
                min_member, resources = gang_params(k8s.spec(cluster))
        return await self.sync_pod_group(obj, min_member, resources)

    async def cleanup_on_suspend(self, cluster: Obj) -> bool:
        """Zero the PodGroup of a suspended RayCluster (not a RayJob's: the RayJob's
        suspend path empties that one)."""
        if _from_rayjob(cluster):
            return False
        return await self.sync_pod_group(cluster, 0, {}, create=False)

    async def sync_pod_group(
        self, owner: Obj, min_member: int, resources: Resources, *, create: bool = True
    ) -> bool:
        """Create the PodGroup (``create``) or bring minMember/minResources to the given
        values; True when something was written. Raises :class:`BatchSchedulerError`."""
        assert self.client is not None
        ns = owner["metadata"]["namespace"]
        name = pod_group_name(owner)
        try:
            current = await self.client.get(POD_GROUP_API_VERSION, POD_GROUP_KIND, name, ns)
        except NotFound:
            if not create:
                return False
            try:
                done = await ensure(self.client, build_pod_group(owner, min_member, resources))
            except ApiError as exc:
                raise BatchSchedulerError(f"failed to create PodGroup {ns}/{name}: {exc}") from exc
            if not done.created:
                log.info("PodGroup already exists", podgroup=name)
                return False
            log.info("created PodGroup", podgroup=name, min_member=min_member)
            return True
        except ApiError as exc:
            raise BatchSchedulerError(f"failed to get PodGroup {ns}/{name}: {exc}") from exc
        spec = k8s.spec(current)
        if spec.get("minMember", 0) == min_member and same_resources(
            spec.get("minResources"), resources
        ):
            return False
        updated = copy.deepcopy(current)
        updated.setdefault("spec", {})
        updated["spec"]["minMember"] = min_member
        if not min_member:  # KubeRay's zero minMember is left out of the object it writes
            del updated["spec"]["minMember"]
        updated["spec"]["minResources"] = resources_json(resources)
        try:
            await self.client.update(updated)
        except Conflict:
            raise  # a fresher PodGroup: the caller retries the pass
        except ApiError as exc:
            raise BatchSchedulerError(f"failed to update PodGroup {ns}/{name}: {exc}") from exc
        log.info("updated PodGroup", podgroup=name, min_member=min_member)
        return True


__all__ = [
    "GROUP_NAME_ANNOTATION_KEY",
    "PLUGIN_NAME",
    "POD_GROUP_API_VERSION",
    "POD_GROUP_KIND",
    "QUEUE_NAME_LABEL_KEY",
    "TASK_SPEC_ANNOTATION_KEY",
    "VolcanoScheduler",
    "build_pod_group",
    "pod_group_name",
    "rayjob_gang",
]
