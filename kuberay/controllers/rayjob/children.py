"""Running a :class:`~kuberay.controllers.rayjob.machine.Decision`'s actions: the writes
KubeRay makes for a RayJob, each with KubeRay's Event.

Creates tolerate AlreadyExists (a cache that lags a create of ours); deletes tolerate
NotFound. Any other API error records KubeRay's ``FailedTo*`` Warning and propagates:
the pass ends without a status write and is retried with backoff.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping
from typing import Final

import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import API_VERSION, FIELD_MANAGER, KIND_RAYCLUSTER, KIND_RAYJOB
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.controllers.batchscheduler import BatchSchedulerError
from kuberay.controllers.builders.service import build_rayjob_head_service
from kuberay.controllers.builders.submit_command import RayJobBuildError
from kuberay.controllers.builders.submitter import build_submitter_job
from kuberay.controllers.dashboard.target import DashboardTarget
from kuberay.controllers.rayjob import machine as M
from kuberay.controllers.rayjob import status as S
from kuberay.controllers.rayjob import world as W
from kuberay.controllers.rayjob.context import Ctx
from kuberay.controllers.rayjob.rayjob_cluster import build_rayjob_cluster
from kuberay.controllers.rayjob.submit_body import build_job_submit_body
from kuberay.kube import ApiError, Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, RequeueError
from kuberay.reconcile.children import ensure

log = structlog.get_logger("kuberay.rayjob")


CREATE, DELETE, UPDATE, VALIDATE = "Create", "Delete", "Update", "Validate"
CLEANUP = "Cleanup"


class Children:
    """Executes actions for one RayJob pass. ``job`` carries the decided status (the
    builders read ``status.jobId``, ``dashboardURL`` and ``rayClusterName``)."""

    def __init__(self, ctx: Ctx, job: Obj, world: M.World) -> None:
        self.ctx = ctx
        self.job = job
        self.world = world
        self.namespace = str(job["metadata"]["namespace"])
        self.cluster: Obj | None = world.cluster
        #: The RayJob as the apiserver returned it after a metadata write of this pass.
        self.patched: Obj | None = None

    def _event(self, etype: str, reason: str, message: str, action: str) -> None:
        self.ctx.event(self.job, etype, reason, message, action)

    async def run(self, actions: list[M.Action]) -> None:
        """Run ``actions`` in order, each by its handler in :data:`HANDLERS`; the first
        failure propagates."""
        for action in actions:
            handler = HANDLERS[action.kind]
            try:
                await handler(self, action.name)
            except RayJobBuildError as exc:  # KubeRay: a reconcile error, retried
                raise RequeueError(f"{action.kind} {action.name}: {exc}") from exc

    # ----- batch scheduler ----------------------------------------------------------------
    async def batch_submit(self, _name: str) -> None:
        assert self.ctx.scheduler is not None
        try:
            await self.ctx.scheduler.do_batch_scheduling_on_submission(self.job)
        except BatchSchedulerError as exc:
            raise RequeueError(str(exc)) from exc

    async def _cleanup(self, cluster_name: str) -> None:
        """KubeRay ``cleanupBatchSchedulerResources`` on the RayJob as it was before this
        pass reset ``status.rayClusterName``."""
        assert self.ctx.scheduler is not None
        job = copy.deepcopy(self.job)
        job.setdefault("status", {})["rayClusterName"] = cluster_name
        meta = self.job["metadata"]
        where = f"{meta['namespace']}/{meta['name']}"
        try:
            cleaned = await self.ctx.scheduler.cleanup_on_completion(job)
        except BatchSchedulerError as exc:
            self._event(
                WARNING,
                "FailedToCleanupBatchScheduler",
                f"Failed to cleanup batch scheduler resources for RayJob {where}: {exc}",
                CLEANUP,
            )
            raise RequeueError(f"failed to cleanup batch scheduler resources: {exc}") from exc
        if cleaned:
            self._event(
                NORMAL,
                "BatchSchedulerCleanedUp",
                f"Cleaned up batch scheduler resources for RayJob {where}",
                CLEANUP,
            )

    async def batch_cleanup(self, cluster_name: str) -> None:
        await self._cleanup(cluster_name)

    async def batch_cleanup_terminal(self, cluster_name: str) -> None:
        try:
            await self._cleanup(cluster_name)
        except RequeueError as exc:  # KubeRay only logs it on a finished RayJob
            log.warning("failed to cleanup batch scheduler resources", error=str(exc))

    # ----- metadata -----------------------------------------------------------------------
    async def add_finalizer(self, _name: str) -> None:
        meta = self.job["metadata"]
        finalizers = [*(meta.get("finalizers") or []), S.RAYJOB_FINALIZER]
        updated = await self.ctx.client.patch(
            API_VERSION,
            KIND_RAYJOB,
            meta["name"],
            {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}},
            self.namespace,
        )
        self.job["metadata"] = updated["metadata"]
        self.patched = updated

    # ----- RayCluster ---------------------------------------------------------------------
    async def create_cluster(self, name: str) -> None:
        settings = self.ctx.settings
        cluster = build_rayjob_cluster(
            self.job, name, gates=dict(settings.features), options=settings.options
        )
        if self.ctx.scheduler is not None and self.world.spec.submission_mode == (
            JobSubmissionMode.K8S_JOB_MODE
        ):
            self.ctx.scheduler.add_metadata_to_child_resource(self.job, cluster, "")
        try:
            done = await ensure(self.ctx.client, cluster, field_manager=FIELD_MANAGER)
        except ApiError as exc:
            self._event(
                WARNING,
                "FailedToCreateRayCluster",
                f"Failed to create RayCluster {self.namespace}/{name}: {exc}",
                CREATE,
            )
            raise
        if not done.created:
            self.cluster = cluster
            return
        self.cluster = done.object
        self._event(
            NORMAL, "CreatedRayCluster", f"Created RayCluster {self.namespace}/{name}", CREATE
        )

    async def delete_cluster(self, name: str) -> None:
        try:
            await self.ctx.client.delete(API_VERSION, KIND_RAYCLUSTER, name, self.namespace)
        except NotFound:
            return
        except ApiError as exc:
            self._event(
                WARNING,
                "FailedToDeleteRayCluster",
                f"Failed to delete cluster {self.namespace}/{name}: {exc}",
                DELETE,
            )
            raise
        self._event(NORMAL, "DeletedRayCluster", f"Deleted cluster {self.namespace}/{name}", DELETE)

    async def suspend_workers(self, name: str) -> None:
        cluster = self.world.cluster
        if cluster is None:
            return
        groups = k8s.spec(cluster).get("workerGroupSpecs") or []
        # Pinned to each group's name, not the resourceVersion: the RayCluster controller
        # rewrites the cluster's status all the time, its worker groups rarely change.
        ops: list[Obj] = []
        for i, group in enumerate(groups):
            path = f"/spec/workerGroupSpecs/{i}"
            ops.append({"op": "test", "path": f"{path}/groupName", "value": group.get("groupName")})
            ops.append({"op": "add", "path": f"{path}/suspend", "value": True})
        try:
            await self.ctx.client.patch(
                API_VERSION, KIND_RAYCLUSTER, name, ops, self.namespace, patch_type="json"
            )
        except NotFound:
            return
        except ApiError as exc:
            self._event(
                WARNING,
                "FailedToUpdateRayCluster",
                f"Failed to suspend worker groups in cluster {self.namespace}/{name}: {exc}",
                UPDATE,
            )
            raise
        self._event(
            NORMAL,
            "UpdatedRayCluster",
            "Set the `suspend` field to true for all worker groups in cluster "
            f"{self.namespace}/{name}",
            UPDATE,
        )

    async def warn_cluster_not_found(self, name: str) -> None:
        self._event(
            WARNING,
            "RayClusterNotFound",
            f"RayCluster {self.namespace}/{name} set in the clusterSelector is not found. "
            "It must be created manually",
            VALIDATE,
        )

    # ----- the Ray job ---------------------------------------------------------------------
    async def stop_job(self, job_id: str) -> None:
        """Ask the poller to stop Ray job ``job_id`` (once; it runs off this worker, bounded
        by the dashboard client's timeout); the pass that reads its outcome reports it."""
        assert self.cluster is not None
        meta = self.job["metadata"]
        target = DashboardTarget.from_cluster(self.cluster)
        self.ctx.dashboard.stop_job((meta["namespace"], meta["name"]), target, job_id)
        log.debug("stopping the Ray job of a RayJob that gave up", job_id=job_id)

    async def submit_job(self, job_id: str) -> None:
        """Ask the poller to submit the HTTPMode Ray job ``job_id`` the dashboard did not know
        (in the background; a success is not repeated unless the job was lost since the
        lookup that found none was sent)."""
        assert self.cluster is not None and self.world.job_info is not None
        try:
            body = build_job_submit_body(self.job)
        except RayJobBuildError as exc:
            raise RequeueError(f"cannot build the job submission: {exc}") from exc
        meta = self.job["metadata"]
        target = DashboardTarget.from_cluster(self.cluster)
        self.ctx.dashboard.submit_job(
            (meta["namespace"], meta["name"]),
            target,
            body,
            job_id,
            not_found_at=self.world.job_info.started_at,
        )

    # ----- submitter Job ------------------------------------------------------------------
    async def create_submitter(self, name: str) -> None:
        assert self.cluster is not None
        settings = self.ctx.settings
        job = build_submitter_job(
            self.job, self.cluster, gates=dict(settings.features), options=settings.options
        )
        if self.ctx.scheduler is not None:
            template = job.setdefault("spec", {}).setdefault("template", {})
            self.ctx.scheduler.add_metadata_to_child_resource(
                self.job, template, C.RAY_NODE_SUBMITTER_GROUP_LABEL_VALUE
            )
        try:
            done = await ensure(self.ctx.client, job, field_manager=FIELD_MANAGER)
        except ApiError as exc:
            self._event(
                WARNING,
                "FailedToCreateRayJobSubmitter",
                f"Failed to create new Kubernetes Job {self.namespace}/{name}: {exc}",
                CREATE,
            )
            raise
        if not done.created:
            return
        self._event(
            NORMAL,
            "CreatedRayJobSubmitter",
            f"Created Kubernetes Job {self.namespace}/{name}",
            CREATE,
        )

    async def delete_submitter(self, name: str) -> None:
        try:
            await self.ctx.client.delete(
                "batch/v1", "Job", name, self.namespace, propagation_policy="Background"
            )
        except NotFound:
            return
        except ApiError as exc:
            self._event(
                WARNING,
                "FailedToDeleteRayJobSubmitter",
                f"Failed to delete submitter K8s Job {self.namespace}/{name}: {exc}",
                DELETE,
            )
            raise
        self._event(
            NORMAL,
            "DeletedRayJobSubmitter",
            f"Deleted submitter K8s Job {self.namespace}/{name}",
            DELETE,
        )

    # ----- RayJob head Service ------------------------------------------------------------
    async def create_service(self, name: str) -> None:
        assert self.cluster is not None
        service = build_rayjob_head_service(
            self.job, self.cluster, options=self.ctx.settings.options
        )
        try:
            done = await ensure(self.ctx.client, service, field_manager=FIELD_MANAGER)
        except ApiError as exc:
            self._event(
                WARNING,
                "FailedToCreateService",
                f"Failed to create the service {self.namespace}/{name}, {exc}",
                CREATE,
            )
            raise
        if not done.created:
            return
        self._event(
            NORMAL, "CreatedService", f"Created the service {self.namespace}/{name}", CREATE
        )

    async def update_service(self, name: str) -> None:
        assert self.cluster is not None and self.world.rayjob_service is not None
        desired = build_rayjob_head_service(
            self.job, self.cluster, options=self.ctx.settings.options
        )
        service = copy.deepcopy(self.world.rayjob_service)
        spec = copy.deepcopy(k8s.spec(desired))
        old_spec = k8s.spec(service)
        if old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if old_spec.get("clusterIPs"):
            spec["clusterIPs"] = old_spec["clusterIPs"]
        service["spec"] = spec
        try:
            await self.ctx.client.update(service, field_manager=FIELD_MANAGER)
        except Conflict:  # a newer Service in the cache soon: retried quietly
            raise
        except ApiError as exc:
            self._event(
                WARNING,
                "FailedToUpdateService",
                f"Failed to update the service {self.namespace}/{name}, {exc}",
                UPDATE,
            )
            raise
        self._event(
            NORMAL, "UpdatedService", f"Updated the service {self.namespace}/{name}", UPDATE
        )

    # ----- the RayJob itself --------------------------------------------------------------
    async def delete_self(self, name: str) -> None:
        try:
            await self.ctx.client.delete(
                API_VERSION,
                KIND_RAYJOB,
                name,
                self.namespace,
                preconditions={"uid": self.job["metadata"]["uid"]},
            )
        except NotFound:
            return
        log.info("RayJob deleted by its deletion policy", rayjob=name)


#: The handler of each action kind (:mod:`~kuberay.controllers.rayjob.world`'s constants).
HANDLERS: Final[Mapping[str, Callable[[Children, str], Awaitable[None]]]] = {
    W.ADD_FINALIZER: Children.add_finalizer,
    W.BATCH_SUBMIT: Children.batch_submit,
    W.BATCH_CLEANUP: Children.batch_cleanup,
    W.BATCH_CLEANUP_TERMINAL: Children.batch_cleanup_terminal,
    W.CREATE_CLUSTER: Children.create_cluster,
    W.DELETE_CLUSTER: Children.delete_cluster,
    W.SUSPEND_WORKERS: Children.suspend_workers,
    W.WARN_CLUSTER_NOT_FOUND: Children.warn_cluster_not_found,
    W.SUBMIT_JOB: Children.submit_job,
    W.STOP_JOB: Children.stop_job,
    W.CREATE_SUBMITTER: Children.create_submitter,
    W.DELETE_SUBMITTER: Children.delete_submitter,
    W.CREATE_SERVICE: Children.create_service,
    W.UPDATE_SERVICE: Children.update_service,
    W.DELETE_SELF: Children.delete_self,
}

__all__ = ["HANDLERS", "Children"]
