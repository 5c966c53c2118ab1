"""The RayService controller's reconcile entry point (KubeRay ``RayServiceReconciler.Reconcile``).

Order per pass (§5.1): skip another controller's object (``managedBy``);
``clean_up_serve_config_cache``; ``clean_up_clusters`` (dangling clusters deleted after
``rayClusterDeletionDelaySeconds``); the finalizer (removed once no cluster remains of a
deleted RayService; added first, alone); ``validate`` (Ready=False/ValidationFailed and a
Warning Event naming the field); ``handle_suspend``; the terminal initializing timeout;
``reconcile_ray_cluster``; with the incremental strategy the rollback state;
``update_head_pod_serve_label`` (active, pending); ``reconcile_serve`` (pending; active when no
upgrade is wanted, or during an incremental upgrade); with the incremental strategy the
per-cluster serve Services, Gateway, HTTPRoute and ``target_capacity`` (``traffic``);
``reconcile_services`` (to the pending cluster once ready, else the active one; always the
active one during an incremental upgrade); ``calculate_status`` and one status write when it
changed. Every pass requeues after 2 s, as KubeRay.

Dashboard calls go through the poller; a RayService whose dashboard hangs only waits itself.
Differences from KubeRay (all beyond it, documented in docs/rayservice.md): a pending cluster
becomes serving only when its head's Serve proxy (or, with ``excludeHeadPodFromServeSvc``, a
worker) is ready too; why a cluster is not ready is written into the condition messages; the
``ray.io/upgrade-timeout`` deadline; a Service owned by someone else is never taken over;
with ``NewClusterWithIncrementalUpgrade`` (see ``traffic``), a Gateway or HTTPRoute that is not
ready is named in the ``UpgradeInProgress`` message and missing Gateway API CRDs fail
validation with a condition and Event.
"""

from __future__ import annotations

import copy
from typing import Any

import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1 import validation  # its validators load on first use
from kuberay.api.v1.constants import API_VERSION, KIND_RAYSERVICE
from kuberay.api.v1.rules import is_incremental_upgrade_enabled, managed_elsewhere
from kuberay.controllers.builders.names import serve_service_name
from kuberay.controllers.builders.service import ServiceBuildError
from kuberay.controllers.common.objects import as_map, as_str
from kuberay.controllers.common.pod_health import is_running_and_ready
from kuberay.controllers.rayservice import status as S
from kuberay.controllers.rayservice.abandon import (
    abandon_if_overdue,
    explain_abandoning,
    retire_pending,
)
from kuberay.controllers.rayservice.children import ChildReconciler, new_cluster_name
from kuberay.controllers.rayservice.cluster_builder import (
    goal_cluster_hash,
    should_prepare_new_cluster,
)
from kuberay.controllers.rayservice.context import Ctx, ObjectKey, owner_key
from kuberay.controllers.rayservice.head_label import update_head_pod_serve_label
from kuberay.controllers.rayservice.incremental import rollback_complete, upgrade_complete
from kuberay.controllers.rayservice.incremental_status import (
    initial_pending_capacity,
    record_routing,
    share_of,
)
from kuberay.controllers.rayservice.serve import (
    ServeReconciler,
    ServeResult,
    has_ready_serving_worker,
    head_pod_ready,
)
from kuberay.controllers.rayservice.suspend import handle_suspend, suspend_operative
from kuberay.controllers.rayservice.traffic import Routing, TrafficReconciler, gateway_api_missing
from kuberay.controllers.rayservice.upgrade import abandoned_hash, explain_upgrade
from kuberay.featuregates.kuberay_gates import RAY_CLUSTER_STATUS_CONDITIONS
from kuberay.kube import Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import WARNING, Request, RequeueError, Result
from kuberay.reconcile.clock import format_time as rfc3339
from kuberay.reconcile.written import WrittenObjects

log = structlog.get_logger("kuberay.rayservice")

#: Seconds between checks for the Gateway API CRDs while they are missing.
GATEWAY_API_RECHECK_SECONDS = 30.0
_HEAD_SVC_NAME_PATH = "spec.rayClusterConfig.headGroupSpec.headService.metadata.name"


class RayServiceReconciler:
    """Reconciles one RayService per call."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.children = ChildReconciler(ctx)
        self.serve = ServeReconciler(ctx)
        self.traffic = TrafficReconciler(ctx)
        self._written = WrittenObjects()

    # ----- entry point --------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result:
        key: ObjectKey = (request.namespace, request.name)
        cached = self.ctx.cache.get(API_VERSION, KIND_RAYSERVICE, *key)
        if cached is None:
            self._forget(key)
            return Result()
        managed_by = managed_elsewhere(cached)
        if managed_by:
            log.debug("skipping RayService managed by another controller", managed_by=managed_by)
            return Result()
        rs = copy.deepcopy(self._written.freshest(cached))
        if not isinstance(rs.get("status"), dict):
            rs["status"] = {}
        original = copy.deepcopy(rs["status"])
        requeue = Result(requeue_after=self.ctx.settings.requeue_seconds)

        self.clean_up_serve_config_cache(rs)
        has_clusters = await self.children.clean_up_clusters(rs)
        meta = rs["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if meta.get("deletionTimestamp"):
            if has_clusters:
                return requeue
            if C.RAY_SERVICE_FINALIZER in finalizers:
                finalizers.remove(C.RAY_SERVICE_FINALIZER)
                await self._patch_finalizers(rs, finalizers)
            self._forget(key)
            return Result()
        if C.RAY_SERVICE_FINALIZER not in finalizers:
            await self._patch_finalizers(rs, [*finalizers, C.RAY_SERVICE_FINALIZER])
            return requeue

        incremental = is_incremental_upgrade_enabled(rs, self.ctx.settings.features)
        invalid = await self.validate(rs)
        if invalid is not None:
            return invalid

        suspend_result = await handle_suspend(
            self.ctx, self.children, rs, self.traffic.delete_routing if incremental else None
        )
        if suspend_operative(rs):
            await self.write_status(rs, original)
            return suspend_result
        ready = S.find(rs, S.READY)
        if (
            ready is not None
            and ready.get("status") == "False"
            and ready.get("reason") == S.INITIALIZING_TIMEOUT
        ):
            await self.write_status(rs, original)
            return requeue if has_clusters else Result()

        active, pending = await self.children.reconcile_ray_cluster(rs)
        if incremental:
            self.traffic.rollback_state(rs, active, pending, rfc3339(self.ctx.now()))
        active_pod = self._head_pod(active)
        pending_pod = self._head_pod(pending)
        await update_head_pod_serve_label(self.ctx, self.serve, rs, active, active_pod)
        await update_head_pod_serve_label(self.ctx, self.serve, rs, pending, pending_pod)

        active_serve, pending_serve = self.serve.reconcile_clusters(
            rs,
            active,
            pending,
            active_pod,
            pending_pod,
            incremental=incremental,
            active_wanted=active is not None
            and pending is None
            and not self._should_prepare(rs, active, None, pending_serving=False),
            held=self._serve_held(rs),
        )
        pending_ready = pending_serve.ready and self._proxies_ready(
            rs, pending, pending_pod, upgrade=active is not None
        )
        if pending is not None and pending_serve.ready and not pending_ready:
            pending_serve.ready = False
            pending_serve.problem = (
                f"the Serve proxy of RayCluster {pending['metadata']['name']} is not ready"
            )

        routing: Routing | None = None
        if incremental:
            routing = await self.traffic.reconcile(
                rs,
                active,
                pending,
                pending_ready=pending_ready,
                pending_head_ready=self._head_ready(pending, pending_pod),
                serve={
                    c["metadata"]["name"]: r
                    for c, r in ((active, active_serve), (pending, pending_serve))
                    if c is not None
                },
            )

        head_svc: Obj | None = None
        serve_svc: Obj | None = None
        target = pending if pending_ready else (active if active_serve.ready else None)
        if incremental and S.is_true(rs, S.UPGRADE_IN_PROGRESS):
            # the pending cluster gets traffic through the HTTPRoute, not these Services
            target = active if (pending_ready or active_serve.ready) else None
        if target is not None:
            try:
                head_svc, serve_svc = await self.children.reconcile_services(rs, target)
            except ServiceBuildError as exc:
                raise RequeueError(str(exc)) from None

        self.calculate_status(
            rs,
            active,
            pending,
            active_serve,
            pending_serve,
            head_svc,
            serve_svc,
            pending_pod,
            routing,
        )
        await self.write_status(rs, original)
        wait = self.children.next_deletion_in(rs)
        if wait is not None and wait < self.ctx.settings.requeue_seconds:
            return Result(requeue_after=max(wait, 0.1))
        return requeue

    # ----- steps --------------------------------------------------------------------------
    def clean_up_serve_config_cache(self, rs: Obj) -> None:
        """Forget Serve configs sent to clusters that are neither active nor pending."""
        keep = {
            S.cluster_name(rs, "activeServiceStatus"),
            S.cluster_name(rs, "pendingServiceStatus"),
        }
        keep.discard("")
        meta = rs["metadata"]
        self.ctx.serve_configs.keep_only(f"{meta['namespace']}/{meta['name']}", keep)
        self.serve.forget(owner_key(meta["namespace"], meta["name"]), keep)
        self.traffic.forget(owner_key(meta["namespace"], meta["name"]), keep)

    async def validate(self, rs: Obj) -> Result | None:
        """KubeRay ``validateRayService``, plus (beyond KubeRay) the Gateway API CRDs an
        incremental upgrade needs; None when the RayService is valid, else the pass's result
        (status and Event written once per message): no requeue, or a recheck after
        ``GATEWAY_API_RECHECK_SECONDS`` while only the CRDs are missing (nothing watched
        announces their installation). The answer is this RayService's alone: concurrent
        reconciles share this reconciler."""
        recheck = False
        errors = validation.validate_rayservice(rs, gates=dict(self.ctx.settings.features))
        fatal = [e for e in errors if e.source in ("metadata", "spec")] or [
            e for e in errors if e.source not in ("webhook",)
        ]
        meta = rs["metadata"]
        reason = ""
        message = ""
        if fatal:
            first = fatal[0]
            reason = (
                "InvalidRayServiceMetadata"
                if first.source == "metadata"
                else "InvalidRayServiceSpec"
            )
            message = str(first)  # KubeRay's text, prefixed by the field when it names none
            if first.path == _HEAD_SVC_NAME_PATH:
                message += (
                    " (a fixed head Service name would be claimed by both the active and the "
                    "pending RayCluster during an upgrade; the operator names it per cluster)"
                )
        elif is_incremental_upgrade_enabled(rs, self.ctx.settings.features):
            missing = await gateway_api_missing(self.ctx)
            if missing is not None:
                recheck = True
                reason = "InvalidRayServiceSpec"
                message = missing
        if not reason:
            return None
        result = Result(requeue_after=GATEWAY_API_RECHECK_SECONDS) if recheck else Result()
        previous = S.find(rs, S.READY)
        if (
            previous is not None
            and previous.get("reason") == S.VALIDATION_FAILED
            and previous.get("message") == message
        ):
            return result  # already reported; KubeRay rewrites it each pass, we do not
        self.ctx.event(
            rs, WARNING, reason, f"{meta['namespace']}/{meta['name']}: {message}", "Validate"
        )
        S.set_cond(rs, S.READY, False, S.VALIDATION_FAILED, message, rfc3339(self.ctx.now()))
        rs["status"]["lastUpdateTime"] = rfc3339(self.ctx.now())
        await self._update_status(rs)
        return result

    def calculate_status(
        self,
        rs: Obj,
        active: Obj | None,
        pending: Obj | None,
        active_serve: ServeResult,
        pending_serve: ServeResult,
        head_svc: Obj | None,
        serve_svc: Obj | None,
        pending_pod: Obj | None,
        routing: Routing | None = None,
    ) -> None:
        """KubeRay ``calculateStatus``: mirror cluster statuses and app statuses, record the
        incremental upgrade's traffic and capacities, promote, end a finished rollback, name
        a new pending cluster when one is wanted, count serve endpoints, conditions."""
        status = rs["status"]
        now_dt = self.ctx.now()
        now = rfc3339(now_dt)
        status["observedGeneration"] = rs["metadata"].get("generation", 0)
        active_status = dict(as_map(status.get("activeServiceStatus")))
        pending_status = dict(as_map(status.get("pendingServiceStatus")))
        for block, cluster, serve in (
            (active_status, active, active_serve),
            (pending_status, pending, pending_serve),
        ):
            if cluster is not None and cluster.get("status"):
                block["rayClusterStatus"] = copy.deepcopy(cluster["status"])
            else:
                block.pop("rayClusterStatus", None)
            if serve.applications is not None:
                block["applicationStatuses"] = serve.applications
            elif cluster is None:
                block.pop("applicationStatuses", None)
        if routing is not None:
            record_routing(
                active_status,
                pending_status if pending is not None else None,
                routing.weights,
                routing.plan,
                routing.confirmed,
                now_dt,
            )
        retired = routing is not None and routing.retire
        if retired:
            pending_status = retire_pending(rs)
        pending_serving = False
        promoted = False
        if head_svc is not None and serve_svc is not None:
            points_to = as_map(as_map(serve_svc.get("spec")).get("selector")).get(
                C.RAY_CLUSTER_LABEL_KEY
            )
            pending_name = as_str(pending_status.get("rayClusterName"))
            pending_serving = bool(pending_name) and points_to == pending_name
            promote = points_to != as_str(active_status.get("rayClusterName")) and pending_serving
            if (
                routing is not None
                and pending is not None
                and S.is_true(rs, S.UPGRADE_IN_PROGRESS)
                and not S.is_true(rs, S.ROLLBACK_IN_PROGRESS)
                and not routing.abandoning
                and upgrade_complete(share_of(active_status), share_of(pending_status))
            ):
                promote = True  # KubeRay: traffic all moved and the old capacity at 0
            if promote:
                log.info(
                    "promoting the pending cluster",
                    old=active_status.get("rayClusterName"),
                    new=pending_name,
                )
                active_status, pending_status = pending_status, {}
                promoted = active is not None and pending is not None
        rolled_back = (
            routing is not None
            and S.is_true(rs, S.ROLLBACK_IN_PROGRESS)
            and rollback_complete(
                share_of(active_status),
                share_of(pending_status),
                pending_ready=self._head_ready(pending, pending_pod),
            )
        )
        if rolled_back:
            log.info(
                "rollback complete; dropping the pending cluster",
                cluster=S.cluster_name(rs, "pendingServiceStatus"),
            )
            pending_status = {}
            S.conditions_of(rs)[:] = [
                c for c in S.conditions_of(rs) if c.get("type") != S.ROLLBACK_IN_PROGRESS
            ]
            S.set_cond(
                rs,
                S.UPGRADE_IN_PROGRESS,
                False,
                S.NO_PENDING_CLUSTER,
                "Rollback complete, active Ray cluster exists and no pending Ray cluster",
                now,
            )
        status["activeServiceStatus"] = _prune(active_status)
        status["pendingServiceStatus"] = _prune(pending_status)
        cur_active = active if not promoted else pending
        cur_pending = None if promoted or rolled_back or retired else pending
        abandoned = abandoned_hash(rs)
        if abandoned not in (None, goal_cluster_hash(rs)) and not status["pendingServiceStatus"]:
            S.conditions_of(rs)[:] = [
                c for c in S.conditions_of(rs) if c.get("type") != S.UPGRADE_ABANDONED
            ]
        if self._should_prepare(rs, cur_active, cur_pending, pending_serving=pending_serving):
            name = new_cluster_name(rs["metadata"]["name"])
            status["pendingServiceStatus"] = {"rayClusterName": name}
            if routing is not None:
                status["pendingServiceStatus"]["targetCapacity"] = initial_pending_capacity(
                    status["activeServiceStatus"]
                )
            log.info("preparing a new pending RayCluster", cluster=name)
        service_name = as_str(as_map(serve_svc.get("metadata")).get("name")) if serve_svc else ""
        if not service_name:
            service_name = self._serve_service_name(rs)
        names = [service_name]
        if routing is not None:
            # KubeRay: the per-cluster Services of the active and the pending cluster
            names = [serve_service_name(active["metadata"]["name"]) if active else service_name]
            if pending is not None and not rolled_back and not retired:
                names.append(serve_service_name(pending["metadata"]["name"]))
        status["numServeEndpoints"] = sum(
            S.count_serve_endpoints(self.children.serve_endpoint_slices(rs, n)) for n in names
        )
        S.calculate_conditions(rs, now)
        if status["numServeEndpoints"] == 0 and not S.is_true(rs, S.READY):
            spent = S.initializing_timed_out(rs, now_dt)
            if spent is not None:
                event = S.mark_initializing_timeout(rs, spent, now)
                self.ctx.event(rs, WARNING, "RayServiceInitializingTimeout", event, "Reconcile")
        extra = routing.problem if routing is not None else None
        if cur_pending is not None and routing is not None and routing.abandoning:
            explain_abandoning(rs, extra, now)
        elif cur_pending is not None:
            explain_upgrade(rs, self._problem(cur_pending, pending_serve, pending_pod), extra, now)
        overdue = abandon_if_overdue(
            rs,
            now_dt,
            problem=(self._problem(cur_pending, pending_serve, pending_pod) or extra)
            if cur_pending is not None
            else "it was never created",
            sending=routing.plan.send_active if routing and routing.plan else None,
            reported=routing.reported if routing is not None else None,
            pending_exists=cur_pending is not None and routing is not None,
        )
        if overdue is not None:
            self.ctx.event(rs, WARNING, "RayServiceUpgradeTimeout", overdue, "Reconcile")
        if S.is_true(rs, S.READY):
            status["serviceStatus"] = S.RUNNING
        else:
            status.pop("serviceStatus", None)

    # ----- helpers ------------------------------------------------------------------------
    def _head_ready(self, cluster: Obj | None, pod: Obj | None) -> bool:
        if cluster is None:
            return False
        return head_pod_ready(
            cluster, pod, self.ctx.settings.gate(RAY_CLUSTER_STATUS_CONDITIONS, True)
        )

    def _should_prepare(
        self, rs: Obj, active: Obj | None, pending: Obj | None, *, pending_serving: bool
    ) -> bool:
        if not should_prepare_new_cluster(
            rs,
            active,
            pending,
            pending_serving=pending_serving,
            features=self.ctx.settings.features,
            env=self.ctx.settings.env,
        ):
            return False
        abandoned = abandoned_hash(rs)
        return abandoned is None or abandoned != goal_cluster_hash(rs)

    def _serve_held(self, rs: Obj) -> bool:
        """An abandoned upgrade's Serve config is not sent to the old cluster."""
        abandoned = abandoned_hash(rs)
        return abandoned is not None and abandoned == goal_cluster_hash(rs)

    def _proxies_ready(
        self, rs: Obj, cluster: Obj | None, head_pod: Obj | None, *, upgrade: bool
    ) -> bool:
        """Beyond KubeRay (#1559): traffic moves to a new cluster during an upgrade only when
        its head's Serve proxy answers (with excludeHeadPodFromServeSvc: a worker is ready)."""
        if cluster is None:
            return False
        if not upgrade:
            return True
        if k8s.spec(rs).get("excludeHeadPodFromServeSvc"):
            pods = self.ctx.cache.list("v1", "Pod", cluster["metadata"]["namespace"])
            name = cluster["metadata"]["name"]
            return has_ready_serving_worker(
                [
                    p
                    for p in pods
                    if as_map(p["metadata"].get("labels")).get(C.RAY_CLUSTER_LABEL_KEY) == name
                ]
            )
        if head_pod is None:
            return False
        return self.serve.proxy_healthy(rs, cluster, head_pod) is True

    def _head_pod(self, cluster: Obj | None) -> Obj | None:
        if cluster is None:
            return None
        name = cluster["metadata"]["name"]
        for pod in self.ctx.cache.list("v1", "Pod", cluster["metadata"]["namespace"]):
            labels = as_map(pod["metadata"].get("labels"))
            if (
                labels.get(C.RAY_CLUSTER_LABEL_KEY) == name
                and labels.get(C.RAY_NODE_TYPE_LABEL_KEY) == C.HEAD_NODE
            ):
                return pod
        return None

    @staticmethod
    def _serve_service_name(rs: Obj) -> str:
        custom = as_map(k8s.spec(rs).get("serveService"))
        name = as_str(as_map(custom.get("metadata")).get("name"))
        return name or f"{rs['metadata']['name']}-serve-svc"

    def _problem(self, cluster: Obj | None, serve: ServeResult, pod: Obj | None) -> str | None:
        if cluster is None:
            return None
        gated = self.ctx.settings.gate(RAY_CLUSTER_STATUS_CONDITIONS, True)
        if not head_pod_ready(cluster, pod, gated) or (
            pod is not None and not is_running_and_ready(pod)
        ):
            return f"RayCluster {cluster['metadata']['name']}: {S.head_pod_problem(pod)}"
        if serve.ready:
            return None
        return serve.problem

    # ----- writes -------------------------------------------------------------------------
    async def write_status(self, rs: Obj, original: Obj) -> bool:
        """Write the status when KubeRay's consistency check says it changed."""
        incremental = is_incremental_upgrade_enabled(rs, self.ctx.settings.features)
        if not S.status_changed(original, rs["status"], incremental=incremental):
            return False
        rs["status"]["lastUpdateTime"] = rfc3339(self.ctx.now())
        await self._update_status(rs)
        return True

    async def _update_status(self, rs: Obj) -> None:
        old_rv = rs["metadata"].get("resourceVersion", "")
        try:
            written = await self.ctx.client.update_status(rs)
        except Conflict:
            raise RequeueError("the RayService changed while its status was written") from None
        self._written.remember(old_rv, written)
        if self.ctx.metrics is not None:
            self.ctx.metrics.observe(written)

    async def _patch_finalizers(self, rs: Obj, finalizers: list[str]) -> None:
        meta = rs["metadata"]
        try:
            await self.ctx.client.patch(
                API_VERSION,
                KIND_RAYSERVICE,
                meta["name"],
                {
                    "metadata": {
                        "finalizers": finalizers,
                        "resourceVersion": meta.get("resourceVersion"),
                    }
                },
                meta["namespace"],
            )
        except (NotFound, Conflict):
            raise RequeueError("the RayService changed while its finalizers were written") from None

    def _forget(self, key: ObjectKey) -> None:
        self._written.forget(*key)
        self.ctx.dashboard.forget(owner_key(*key))
        self.serve.forget(owner_key(*key))
        self.traffic.forget(owner_key(*key))
        self.ctx.serve_configs.forget(f"{key[0]}/{key[1]}")
        if self.ctx.metrics is not None:
            self.ctx.metrics.forget(*key)


def _prune(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if v not in (None, "", {}, [])}


__all__ = ["RayServiceReconciler"]
