"""Kubernetes workload-aware scheduling (gate ``KubernetesWAS``; KubeRay's
``kubernetes-was-v1alpha2`` provider): the kube-scheduler's own gang scheduling through
``scheduling.k8s.io/v1alpha2``.

A RayCluster labelled ``ray.io/gang-scheduling-enabled: "true"`` (any case) without the
in-tree autoscaler gets a Workload named like the cluster (one PodGroupTemplate
``cluster``, gang ``minCount`` = desired workers + 1) and a PodGroup ``<cluster>-cluster``
pointing at that template, both controlled by the RayCluster; its pods keep the
``default-scheduler`` and carry ``spec.schedulingGroup.podGroupName``. Both objects are
immutable in v1alpha2, so a changed gang size deletes them (PodGroup first, after removing
its ``scheduling.k8s.io/podgroup-protection`` finalizer) and a later pass recreates them;
each such step fails the pass with a "will retry" error, as in KubeRay. A cluster that
stops qualifying (label removed, autoscaling on) has its objects deleted the same way.
Same-named objects the cluster does not control are a name collision: an error, never
touched. RayJobs are ignored (their RayCluster is handled by its own reconcile). Beyond
KubeRay (its PR #5200), a suspended RayCluster releases its objects too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1.rules import calculate_desired_replicas, is_autoscaling_enabled
from kuberay.controllers.batchscheduler.interface import (
    BatchScheduler,
    BatchSchedulerError,
    is_pod_like,
    kind_of,
    labels_of,
    set_scheduler_name,
)
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.kube import ApiError, Client, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

log = structlog.get_logger("kuberay.batchscheduler.kubernetes_was")


PLUGIN_NAME = "kubernetes-was-v1alpha2"
API_GROUP = "scheduling.k8s.io"
API_VERSION = f"{API_GROUP}/v1alpha2"
WORKLOAD_KIND = "Workload"
POD_GROUP_KIND = "PodGroup"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
POD_GROUP_PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"
#: The one PodGroupTemplate: the head and every worker group form a single gang.
CLUSTER_TEMPLATE_NAME = "cluster"
SKIP_GANG_DISABLED = "gang scheduling not enabled on RayCluster"
SKIP_AUTOSCALING = "autoscaling is not yet supported"


def skip_reason(cluster: Mapping[str, Any]) -> str:
    """Why ``cluster`` is not gang scheduled ("" when it is)."""
    value = labels_of(cluster).get(C.RAY_GANG_SCHEDULING_ENABLED_LABEL_KEY, "")
    if value.lower() != "true":
        return SKIP_GANG_DISABLED
    if is_autoscaling_enabled(cluster):
        return SKIP_AUTOSCALING
    return ""


def pod_group_name(cluster_name: str) -> str:
    """``<cluster>-cluster``: the PodGroup every pod of the cluster joins."""
    return f"{cluster_name}-{CLUSTER_TEMPLATE_NAME}"


def _policy(cluster: Mapping[str, Any]) -> Obj:
    return {"gang": {"minCount": calculate_desired_replicas(cluster) + 1}}


def _meta(cluster: Mapping[str, Any], name: str) -> Obj:
    meta = k8s.meta(cluster)
    return {
        "name": name,
        "namespace": meta.get("namespace"),
        "labels": {C.RAY_CLUSTER_LABEL_KEY: meta.get("name")},
        "ownerReferences": [controller_owner_reference(cluster)],
    }


def build_workload(cluster: Mapping[str, Any]) -> Obj:
    """KubeRay's Workload for ``cluster`` (controlled by it)."""
    name = str(k8s.meta(cluster).get("name"))
    return {
        "apiVersion": API_VERSION,
        "kind": WORKLOAD_KIND,
        "metadata": _meta(cluster, name),
        "spec": {
            "controllerRef": {
                "apiGroup": C.API_VERSION.split("/")[0],
                "kind": C.KIND_RAYCLUSTER,
                "name": name,
            },
            "podGroupTemplates": [
                {"name": CLUSTER_TEMPLATE_NAME, "schedulingPolicy": _policy(cluster)}
            ],
        },
    }


def build_pod_group(cluster: Mapping[str, Any]) -> Obj:
    """KubeRay's PodGroup for ``cluster`` (from the Workload's ``cluster`` template)."""
    name = str(k8s.meta(cluster).get("name"))
    return {
        "apiVersion": API_VERSION,
        "kind": POD_GROUP_KIND,
        "metadata": _meta(cluster, pod_group_name(name)),
        "spec": {
            "podGroupTemplateRef": {
                "workload": {"workloadName": name, "podGroupTemplateName": CLUSTER_TEMPLATE_NAME}
            },
            "schedulingPolicy": _policy(cluster),
        },
    }


def _min_count(policy_holder: Mapping[str, Any]) -> object:
    gang = (policy_holder.get("schedulingPolicy") or {}).get("gang")
    return None if gang is None else gang.get("minCount")


def workload_stale(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """KubeRay ``isWorkloadStale``: not exactly one template, or another name or gang size."""
    templates = k8s.spec(existing).get("podGroupTemplates") or []
    if len(templates) != 1:
        return True
    want = desired["spec"]["podGroupTemplates"][0]
    have = templates[0]
    return have.get("name") != want["name"] or _min_count(have) != _min_count(want)


def _controlled_by(obj: Mapping[str, Any], cluster: Mapping[str, Any]) -> bool:
    uid = k8s.meta(cluster).get("uid")
    return any(
        ref.get("controller") is True and ref.get("uid") == uid
        for ref in k8s.meta(obj).get("ownerReferences") or []
    )


def _deleting(obj: Mapping[str, Any]) -> bool:
    return bool(k8s.meta(obj).get("deletionTimestamp"))


def _ref(obj: Mapping[str, Any]) -> str:
    meta = k8s.meta(obj)
    return f"{meta.get('namespace')}/{meta.get('name')}"


async def unavailable_reason(client: Client) -> str:
    """KubeRay's provider selection at start-up: "" when the apiserver serves
    ``scheduling.k8s.io/v1alpha2`` (one discovery GET), else KubeRay's error text (the
    operator then refuses to start). A 1.36 apiserver serves it only with
    ``--runtime-config=scheduling.k8s.io/v1alpha2=true`` and ``GenericWorkload=true``."""
    try:
        await client.request("GET", f"/apis/{API_VERSION}", verb="get")
    except ApiError as exc:
        return (
            f"no served scheduling.k8s.io API version available for {PLUGIN_NAME}: "
            f"{API_VERSION} API is not available: {exc}"
        )
    return ""


class KubernetesWASScheduler(BatchScheduler):
    """The ``KubernetesWAS`` plugin (owns ``scheduling.k8s.io/v1alpha2`` Workloads and
    PodGroups). :meth:`name` is KubeRay's plugin name; pods keep ``default-scheduler``."""

    plugin_name = PLUGIN_NAME
    owned_kinds = ((API_VERSION, WORKLOAD_KIND), (API_VERSION, POD_GROUP_KIND))

    def _client(self) -> Client:
        assert self.client is not None
        return self.client

    async def do_batch_scheduling_on_submission(self, obj: Obj) -> None:
        if kind_of(obj) != C.KIND_RAYCLUSTER:
            return
        reason = skip_reason(obj)
        if reason:
            log.debug("skipping Kubernetes workload-aware scheduling", reason=reason)
            await self._delete_resources(obj)
            return
        await self._sync_workload(obj, build_workload(obj))
        await self._sync_pod_group(obj, build_pod_group(obj))

    def add_metadata_to_child_resource(self, parent: Obj, child: Obj, group_name: str) -> None:
        if kind_of(parent) != C.KIND_RAYCLUSTER or skip_reason(parent):
            return
        set_scheduler_name(child, DEFAULT_SCHEDULER_NAME)
        if is_pod_like(child):
            name = pod_group_name(str(parent["metadata"]["name"]))
            child.setdefault("spec", {})["schedulingGroup"] = {"podGroupName": name}

    async def cleanup_on_completion(self, obj: Obj) -> bool:
        if kind_of(obj) != C.KIND_RAYCLUSTER:
            return False
        return await self._delete_resources(obj)

    async def cleanup_on_suspend(self, cluster: Obj) -> bool:
        return await self._delete_resources(cluster)

    # ----- API helpers ----------------------------------------------------------------------
    async def _get(self, kind: str, name: str, namespace: str) -> Obj | None:
        try:
            return await self._client().get(API_VERSION, kind, name, namespace)
        except NotFound:
            return None
        except ApiError as exc:
            raise BatchSchedulerError(f"failed to get {kind} {namespace}/{name}: {exc}") from exc

    async def _create(self, desired: Obj) -> None:
        try:
            await self._client().create(desired)
        except ApiError as exc:
            raise BatchSchedulerError(
                f"failed to create {desired['kind']} {_ref(desired)}: {exc}"
            ) from exc

    async def _delete_with_uid(self, obj: Mapping[str, Any]) -> bool:
        """Delete ``obj`` if it is still the same object; False when already gone."""
        meta = obj["metadata"]
        try:
            await self._client().delete(
                API_VERSION,
                str(obj["kind"]),
                meta["name"],
                meta["namespace"],
                preconditions={"uid": meta["uid"]},
            )
        except NotFound:
            return False
        return True

    async def _delete_pod_group(self, pod_group: Obj) -> bool:
        """Drop the protection finalizer (pods may still name the group), then delete;
        True when something was written."""
        written = False
        finalizers = list(pod_group["metadata"].get("finalizers") or [])
        if POD_GROUP_PROTECTION_FINALIZER in finalizers:
            finalizers.remove(POD_GROUP_PROTECTION_FINALIZER)
            pod_group["metadata"]["finalizers"] = finalizers
            try:
                await self._client().update(pod_group)
            except NotFound:
                return True
            except ApiError as exc:
                raise BatchSchedulerError(
                    f"failed to remove finalizer from PodGroup {_ref(pod_group)}: {exc}"
                ) from exc
            written = True
        if _deleting(pod_group):
            return written
        try:
            return await self._delete_with_uid(pod_group) or written
        except ApiError as exc:
            raise BatchSchedulerError(
                f"failed to delete PodGroup {_ref(pod_group)}: {exc}"
            ) from exc

    # ----- sync -----------------------------------------------------------------------------
    async def _sync_workload(self, cluster: Obj, desired: Obj) -> None:
        ns, name = desired["metadata"]["namespace"], desired["metadata"]["name"]
        existing = await self._get(WORKLOAD_KIND, name, ns)
        if existing is None:
            await self._create(desired)
            return
        if not _controlled_by(existing, cluster):
            raise BatchSchedulerError(
                f"Workload {ns}/{name} already exists and is not owned by this RayCluster; "
                "rename it or use a different RayCluster name to avoid the collision"
            )
        if _deleting(existing):
            raise BatchSchedulerError(f"Workload {ns}/{name} is being deleted, will retry")
        if not workload_stale(existing, desired):
            return
        # The PodGroup references the immutable Workload: it goes first.
        pod_group = await self._get(POD_GROUP_KIND, pod_group_name(name), ns)
        if pod_group is not None and _controlled_by(pod_group, cluster):
            await self._delete_pod_group(pod_group)
            raise BatchSchedulerError(
                f"deleted PodGroup {_ref(pod_group)} before replacing stale Workload, will "
                "retry after deletion completes"
            )
        try:
            await self._delete_with_uid(existing)
        except ApiError as exc:
            raise BatchSchedulerError(
                f"failed to delete stale Workload {ns}/{name}: {exc}"
            ) from exc
        raise BatchSchedulerError(
            f"deleted stale Workload {ns}/{name}, will retry after deletion completes"
        )

    async def _sync_pod_group(self, cluster: Obj, desired: Obj) -> None:
        ns, name = desired["metadata"]["namespace"], desired["metadata"]["name"]
        existing = await self._get(POD_GROUP_KIND, name, ns)
        if existing is None:
            await self._create(desired)
            return
        if not _controlled_by(existing, cluster):
            raise BatchSchedulerError(
                f"PodGroup {ns}/{name} already exists and is not owned by this RayCluster; "
                "rename it or use a different RayCluster name to avoid the collision"
            )
        if _deleting(existing):
            await self._delete_pod_group(existing)
            raise BatchSchedulerError(f"PodGroup {ns}/{name} is being deleted, will retry")
        have = _min_count(k8s.spec(existing))
        if have is not None and have == _min_count(desired["spec"]):
            return
        await self._delete_pod_group(existing)
        raise BatchSchedulerError(
            f"deleted stale PodGroup {ns}/{name}, will retry after deletion completes"
        )

    async def _delete_resources(self, cluster: Obj) -> bool:
        """KubeRay ``deleteSchedulingResources``: the PodGroup first (and an error until it
        is gone), then the Workload; only objects the cluster controls. True when written."""
        meta = cluster["metadata"]
        ns, name = meta["namespace"], meta["name"]
        pod_group = await self._get(POD_GROUP_KIND, pod_group_name(name), ns)
        workload = await self._get(WORKLOAD_KIND, name, ns)
        if pod_group is not None and _controlled_by(pod_group, cluster):
            await self._delete_pod_group(pod_group)
            raise BatchSchedulerError(
                f"waiting for PodGroup {ns}/{pod_group_name(name)} to finish deleting"
            )
        if workload is None or not _controlled_by(workload, cluster):
            return False
        if _deleting(workload):
            raise BatchSchedulerError(f"Workload {ns}/{name} is being deleted, will retry")
        try:
            return await self._delete_with_uid(workload)
        except ApiError as exc:
            raise BatchSchedulerError(f"failed to delete Workload {ns}/{name}: {exc}") from exc


__all__ = [
    "API_VERSION",
    "CLUSTER_TEMPLATE_NAME",
    "DEFAULT_SCHEDULER_NAME",
    "PLUGIN_NAME",
    "POD_GROUP_KIND",
    "POD_GROUP_PROTECTION_FINALIZER",
    "WORKLOAD_KIND",
    "KubernetesWASScheduler",
    "build_pod_group",
    "build_workload",
    "pod_group_name",
    "skip_reason",
    "unavailable_reason",
    "workload_stale",
]
