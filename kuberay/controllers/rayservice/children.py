"""The RayService's children: its RayClusters (create, in-place update, delayed deletion of
dangling ones) and its head/serve Services (KubeRay ``reconcileRayCluster``,
``cleanUpRayClusterInstance``, ``reconcileServices``, ``deleteRayServiceOwnedResources``)."""

from __future__ import annotations

import datetime as dt

import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import API_VERSION, FIELD_MANAGER, KIND_RAYCLUSTER
from kuberay.api.v1.rules import ray_cluster_deletion_delay_seconds
from kuberay.controllers.builders.names import generate_ray_cluster_name
from kuberay.controllers.builders.owner import set_controller_reference
from kuberay.controllers.builders.service import (
    build_head_service_for_ray_service,
    build_serve_service_for_ray_service,
)
from kuberay.controllers.common.objects import as_list, as_map, as_str
from kuberay.controllers.rayservice.cluster_builder import (
    build_ray_cluster_for_ray_service,
    modify_ray_cluster,
    should_update_cluster,
)
from kuberay.controllers.rayservice.context import Ctx
from kuberay.controllers.rayservice.status import cluster_name
from kuberay.kube import NotFound
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, RequeueError
from kuberay.reconcile.children import ensure

log = structlog.get_logger("kuberay.rayservice")

__all__ = ["ChildReconciler", "ServiceConflict", "new_cluster_name"]


class ServiceConflict(RequeueError):
    """A Service the RayService would own exists and belongs to someone else."""


def new_cluster_name(rs_name: str) -> str:
    """``<rs>-<rand5>``."""
    return generate_ray_cluster_name(rs_name)


def _owned_by(obj: Obj, rs: Obj) -> bool:
    uid = rs["metadata"].get("uid")
    return any(
        as_map(r).get("controller") is True and as_map(r).get("uid") == uid
        for r in as_list(as_map(obj.get("metadata")).get("ownerReferences"))
    )


class ChildReconciler:
    """Creates, updates and deletes what a RayService owns."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx

    # ----- clusters -----------------------------------------------------------------------
    def clusters_of(self, rs: Obj) -> list[Obj]:
        """Cached RayClusters labelled as originating from this RayService."""
        meta = rs["metadata"]
        found = self.ctx.cache.list(API_VERSION, KIND_RAYCLUSTER, meta["namespace"])
        return [
            c
            for c in found
            if as_map(c["metadata"].get("labels")).get(C.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY)
            == meta["name"]
            and as_map(c["metadata"].get("labels")).get(C.RAY_ORIGINATED_FROM_CRD_LABEL_KEY)
            == C.KIND_RAYSERVICE
        ]

    async def clean_up_clusters(self, rs: Obj) -> bool:
        """Delete clusters that are neither active nor pending once their delay has passed
        (all at once when the RayService is being deleted); True while any remain."""
        deleting = bool(rs["metadata"].get("deletionTimestamp"))
        delay = float(ray_cluster_deletion_delay_seconds(rs))
        if deleting:
            delay = 0.0
        keep = {cluster_name(rs, "activeServiceStatus"), cluster_name(rs, "pendingServiceStatus")}
        remaining = False
        now = self.ctx.now()
        for cluster in self.clusters_of(rs):
            name = cluster["metadata"]["name"]
            if not deleting and name in keep:
                continue
            remaining = True
            key = f"{cluster['metadata']['namespace']}/{name}"
            due = self.ctx.deletion_times.get(key)
            if due is None and not deleting:
                self.ctx.deletion_times[key] = now + dt.timedelta(seconds=delay)
                log.info("scheduled dangling RayCluster for deletion", cluster=name, delay=delay)
                continue
            if not deleting and due is not None and now <= due:
                continue
            if cluster["metadata"].get("deletionTimestamp"):
                continue
            await self._delete_cluster(rs, cluster, "")
        return remaining

    def next_deletion_in(self, rs: Obj) -> float | None:
        """Seconds until the earliest scheduled deletion of this RayService's clusters."""
        now = self.ctx.now()
        waits = [
            (self.ctx.deletion_times[k] - now).total_seconds()
            for k in (
                f"{c['metadata']['namespace']}/{c['metadata']['name']}"
                for c in self.clusters_of(rs)
            )
            if k in self.ctx.deletion_times
        ]
        return max(0.0, min(waits)) if waits else None

    async def _delete_cluster(self, rs: Obj, cluster: Obj, suffix: str) -> None:
        meta = cluster["metadata"]
        try:
            await self.ctx.client.delete(
                API_VERSION,
                KIND_RAYCLUSTER,
                meta["name"],
                meta["namespace"],
                propagation_policy="Background",
                preconditions={"uid": meta["uid"]},
            )
        except NotFound:
            pass
        except Exception as exc:
            self.ctx.event(
                rs,
                WARNING,
                "FailedToDeleteRayCluster",
                f"Failed to delete the RayCluster {meta['namespace']}/{meta['name']}{suffix}: "
                f"{exc}",
                "Delete",
            )
            raise
        else:
            self.ctx.event(
                rs,
                NORMAL,
                "DeletedRayCluster",
                f"Deleted the RayCluster {meta['namespace']}/{meta['name']}{suffix}",
                "Delete",
            )
        self.ctx.deletion_times.pop(f"{meta['namespace']}/{meta['name']}", None)

    async def reconcile_ray_cluster(self, rs: Obj) -> tuple[Obj | None, Obj | None]:
        """Active and pending clusters; create the pending one when named but absent
        (skipping the in-place checks that pass); update clusters in place when only
        worker groups were appended (or, for the active one, the operator version changed)."""
        ns = rs["metadata"]["namespace"]
        active_name = cluster_name(rs, "activeServiceStatus")
        pending_name = cluster_name(rs, "pendingServiceStatus")
        active = self.ctx.cached(API_VERSION, KIND_RAYCLUSTER, ns, active_name)
        pending = self.ctx.cached(API_VERSION, KIND_RAYCLUSTER, ns, pending_name)
        if pending_name and pending is None:
            return active, await self._create_cluster(rs, pending_name)
        features = self.ctx.settings.features
        for cluster, is_active, label in ((active, True, "active"), (pending, False, "pending")):
            if not should_update_cluster(rs, cluster, is_active=is_active):
                continue
            assert cluster is not None
            goal = build_ray_cluster_for_ray_service(
                rs, cluster["metadata"]["name"], features=features
            )
            updated = modify_ray_cluster(cluster, goal)
            name = cluster["metadata"]["name"]
            try:
                written = await self.ctx.client.update(updated, field_manager=FIELD_MANAGER)
            except Exception as exc:
                self.ctx.event(
                    rs,
                    WARNING,
                    "FailedToUpdateRayCluster",
                    f"Failed to update the {label} RayCluster {ns}/{name}: {exc}",
                    "Update",
                )
                raise
            self.ctx.event(
                rs,
                NORMAL,
                "UpdatedRayCluster",
                f"Updated the {label} RayCluster {ns}/{name}",
                "Update",
            )
            if is_active:
                active = written
            else:
                pending = written
        return active, pending

    async def _create_cluster(self, rs: Obj, name: str) -> Obj:
        ns = rs["metadata"]["namespace"]
        cluster = build_ray_cluster_for_ray_service(rs, name, features=self.ctx.settings.features)
        try:
            done = await ensure(self.ctx.client, cluster, field_manager=FIELD_MANAGER)
        except Exception as exc:
            self.ctx.event(
                rs,
                WARNING,
                "FailedToCreateRayCluster",
                f"Failed to create the RayCluster {ns}/{name}: {exc}",
                "Create",
            )
            raise
        if not done.created:
            existing: Obj = await self.ctx.client.get(API_VERSION, KIND_RAYCLUSTER, name, ns)
            if not _owned_by(existing, rs):
                raise RequeueError(
                    f"RayCluster {ns}/{name} exists and is not owned by RayService "
                    f"{rs['metadata']['name']}"
                )
            return existing
        assert done.object is not None
        log.info("created RayCluster for RayService", cluster=name)
        self.ctx.event(
            rs, NORMAL, "CreatedRayCluster", f"Created the RayCluster {ns}/{name}", "Create"
        )
        return done.object

    # ----- services -----------------------------------------------------------------------
    async def reconcile_services(self, rs: Obj, cluster: Obj) -> tuple[Obj, Obj]:
        """``<rs>-head-svc`` and the serve Service pointed at ``cluster``: created, or their
        spec replaced (ClusterIP kept) only when the selected cluster changes. A Service of
        that name owned by anything else is never taken over (beyond KubeRay, #2433)."""
        head = build_head_service_for_ray_service(rs, cluster, self.ctx.settings.options)
        serve = build_serve_service_for_ray_service(rs, cluster, self.ctx.settings.features)
        return await self._reconcile_service(rs, head), await self._reconcile_service(rs, serve)

    async def _reconcile_service(self, rs: Obj, svc: Obj) -> Obj:
        ns = rs["metadata"]["namespace"]
        svc["metadata"]["namespace"] = ns
        name = svc["metadata"]["name"]
        old = self.ctx.cached("v1", "Service", ns, name)
        if old is None:
            try:
                old = await self.ctx.client.get("v1", "Service", name, ns)
            except NotFound:
                old = None
        if old is not None:
            if not _owned_by(old, rs) and not self._owned_by_cluster(old, rs):
                message = (
                    f"Service {ns}/{name} already exists and is not owned by RayService "
                    f"{rs['metadata']['name']}; refusing to point it at this RayService's "
                    "cluster (choose another serveService name or delete that Service)"
                )
                self.ctx.event(rs, WARNING, "ServiceNameConflict", message, "Update")
                raise ServiceConflict(message)
            wanted = as_map(svc["spec"].get("selector")).get(C.RAY_CLUSTER_LABEL_KEY)
            if (
                as_map(as_map(old.get("spec")).get("selector")).get(C.RAY_CLUSTER_LABEL_KEY)
                == wanted
            ):
                return old
            updated = dict(old)
            new_spec = dict(svc["spec"])
            cluster_ip = as_map(old.get("spec")).get("clusterIP")
            if cluster_ip:
                new_spec["clusterIP"] = cluster_ip
            for key in ("clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                value = as_map(old.get("spec")).get(key)
                if value is not None and key not in new_spec:
                    new_spec[key] = value
            updated["spec"] = new_spec
            try:
                written: Obj = await self.ctx.client.update(updated, field_manager=FIELD_MANAGER)
            except Exception as exc:
                self.ctx.event(
                    rs,
                    WARNING,
                    "FailedToUpdateService",
                    f"Failed to update the service {ns}/{name}, {exc}",
                    "Update",
                )
                raise
            self.ctx.event(
                rs, NORMAL, "UpdatedService", f"Updated the service {ns}/{name}", "Update"
            )
            return written
        set_controller_reference(svc, rs, C.KIND_RAYSERVICE)
        try:
            done = await ensure(self.ctx.client, svc, field_manager=FIELD_MANAGER)
        except Exception as exc:
            self.ctx.event(
                rs,
                WARNING,
                "FailedToCreateService",
                f"Failed to create the service {ns}/{name}, {exc}",
                "Create",
            )
            raise
        if not done.created:
            raise RequeueError(f"Service {ns}/{name} appeared while being created")
        assert done.object is not None
        self.ctx.event(rs, NORMAL, "CreatedService", f"Created the service {ns}/{name}", "Create")
        return done.object

    def _owned_by_cluster(self, svc: Obj, rs: Obj) -> bool:
        """``svc`` is controlled by one of ``rs``'s RayClusters (the per-cluster serve
        Service of an incremental upgrade, which KubeRay also uses as the serve Service)."""
        mine = {c["metadata"].get("uid") for c in self.clusters_of(rs)}
        return any(
            as_map(r).get("controller") is True
            and as_map(r).get("kind") == C.KIND_RAYCLUSTER
            and as_map(r).get("uid") in mine
            for r in as_list(as_map(svc.get("metadata")).get("ownerReferences"))
        )

    # ----- suspend ------------------------------------------------------------------------
    async def delete_owned(self, rs: Obj) -> bool:
        """Delete every RayCluster and Service of this RayService; True when none remained."""
        all_deleted = True
        ns = rs["metadata"]["namespace"]
        for cluster in self.clusters_of(rs):
            all_deleted = False
            if not cluster["metadata"].get("deletionTimestamp"):
                await self._delete_cluster(rs, cluster, " during suspend")
        labels = {
            C.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: rs["metadata"]["name"],
            C.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: C.KIND_RAYSERVICE,
        }
        for svc in self.ctx.cache.list("v1", "Service", ns):
            svc_labels = as_map(svc["metadata"].get("labels"))
            if any(svc_labels.get(k) != v for k, v in labels.items()):
                continue
            all_deleted = False
            if svc["metadata"].get("deletionTimestamp"):
                continue
            name = svc["metadata"]["name"]
            try:
                await self.ctx.client.delete(
                    "v1", "Service", name, ns, propagation_policy="Background"
                )
            except NotFound:
                pass
            except Exception as exc:
                self.ctx.event(
                    rs,
                    WARNING,
                    "FailedToDeleteService",
                    f"Failed to delete the Service {ns}/{name} during suspend: {exc}",
                    "Delete",
                )
                raise
            else:
                self.ctx.event(
                    rs,
                    NORMAL,
                    "DeletedService",
                    f"Deleted the Service {ns}/{name} during suspend",
                    "Delete",
                )
        return all_deleted

    def serve_endpoint_slices(self, rs: Obj, service_name: str) -> list[Obj]:
        """Cached EndpointSlices labelled ``kubernetes.io/service-name=<service_name>``."""
        ns = rs["metadata"]["namespace"]
        return [
            s
            for s in self.ctx.cache.list("discovery.k8s.io/v1", "EndpointSlice", ns)
            if as_str(as_map(s["metadata"].get("labels")).get("kubernetes.io/service-name"))
            == service_name
        ]
