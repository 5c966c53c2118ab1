"""The RayCluster controller's reconcile entry point (KubeRay's ``rayClusterReconcile``).

Order per pass: skip clusters another controller manages (``spec.managedBy``);
validate (an invalid spec gets an ``InvalidSpec`` condition and a Warning Event
naming every bad field; nothing is created or deleted); warn (once per distinct
message) about worker restartPolicy under autoscaler v1; GCS-FT Redis cleanup
finalizer; then the named steps ``reconcile_autoscaler_rbac``,
``reconcile_ingress`` (an OpenShift Route instead when the apiserver serves
``route.openshift.io`` and ``USE_INGRESS_ON_OPENSHIFT`` is unset),
``reconcile_auth_secret``, ``reconcile_head_service``,
``reconcile_headless_service``, ``reconcile_serve_service``,
``reconcile_gcs_storage_pvc`` (see :mod:`~kuberay.controllers.raycluster.children`)
and ``reconcile_pods``, stopping at the first error. A child whose name is taken
by someone else's object stops the pass before any pod is created and sets the
``ChildResourceConflict`` condition (removed once the name is free); finally
``update_status`` writes the status only when it changed -- one status write per
pass, the conflict condition included.

Read-your-writes: a status write returns the object at its new resourceVersion.
Until the cache shows that write (or anything newer), a pass starts from that
returned object instead of the cached one it overwrote, so a pass that events
start right after a write does not send a status write bound to fail with 409.
Requeue: 2 s after an error or a status write, else the steady-state period
(none when it is 0 or less).
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable

import structlog

from kuberay.api.v1 import validation  # its validators load on first use
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER
from kuberay.api.v1.rules import (
    is_autoscaling_enabled,
    is_autoscaling_v1_enabled,
    is_gcs_fault_tolerance_embedded,
    is_gcs_fault_tolerance_enabled,
    is_tls_enabled,
    managed_elsewhere,
)
from kuberay.controllers.raycluster import conditions as cond
from kuberay.controllers.raycluster.children import (
    CONFLICT_CONDITION,
    ChildConflict,
    ChildReconciler,
)
from kuberay.controllers.raycluster.context import Ctx
from kuberay.controllers.raycluster.gcs_ft import reconcile_gcs_ft_finalizer
from kuberay.controllers.raycluster.pods import PodReconciler
from kuberay.controllers.raycluster.status import (
    ReconcileError,
    calculate_status,
    go_status,
    status_changed,
)
from kuberay.featuregates.kuberay_gates import (
    GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE,
    NODE_LABEL_DELIVERY,
    RAY_CLUSTER_STATUS_CONDITIONS,
)
from kuberay.kube import ApiError, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import WARNING, Request, Result
from kuberay.reconcile.written import WrittenObjects

log = structlog.get_logger("kuberay.raycluster")

INVALID_SPEC_CONDITION = "InvalidSpec"

Step = Callable[[Obj], Awaitable[None]]


class RayClusterReconciler:
    """Reconciles one RayCluster per call; safe to run with many workers."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.children = ChildReconciler(ctx)
        # (namespace, name) -> (resourceVersions our status writes replaced, the object
        # the last write returned); see _freshest.
        self._written = WrittenObjects()
        self.steps: list[tuple[str, Step]] = [
            ("reconcile_autoscaler_rbac", self.reconcile_autoscaler_rbac),
            ("reconcile_ingress", self.reconcile_ingress),
            ("reconcile_auth_secret", self.reconcile_auth_secret),
            ("reconcile_head_service", self.reconcile_head_service),
            ("reconcile_headless_service", self.reconcile_headless_service),
            ("reconcile_serve_service", self.reconcile_serve_service),
            ("reconcile_gcs_storage_pvc", self.reconcile_gcs_storage_pvc),
            ("reconcile_pods", self.reconcile_pods),
        ]

    @property
    def _features(self) -> dict[str, bool]:
        return dict(self.ctx.settings.features)

    def _gate(self, name: str, default: bool) -> bool:
        return bool(self.ctx.settings.features.get(name, default))

    # ----- entry point --------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result:
        cached = self.ctx.cache.get(API_VERSION, KIND_RAYCLUSTER, request.namespace, request.name)
        if cached is None:
            self._written.forget(request.namespace, request.name)
            self.ctx.expectations.delete_prefix(f"{request.namespace}/{request.name}/")
            if self.ctx.metrics is not None:
                self.ctx.metrics.forget(request.namespace, request.name)
            self.children.forget(request.namespace, request.name)
            return Result()
        managed_by = managed_elsewhere(cached)
        if managed_by:
            log.debug("skipping cluster managed by another controller", managed_by=managed_by)
            return Result()
        cluster = copy.deepcopy(self._written.freshest(cached))
        cluster.setdefault("status", {})

        if await self._reject_if_invalid(cluster):
            return Result()
        self._warn_autoscaler_v1_restart_policy(cluster)
        if is_tls_enabled(cluster, self._features) and not self.ctx.settings.cert_manager_available:
            # KubeRay: fail fast (an Event, no status, no requeue) when mTLS needs cert-manager.
            meta = cluster["metadata"]
            self.ctx.event(
                cluster,
                WARNING,
                "InvalidRayClusterSpec",
                f"The RayCluster spec is invalid {meta['namespace']}/{meta['name']}: "
                "tlsOptions requires cert-manager, but cert-manager is not installed",
                "Validate",
            )
            return Result()

        rv = cluster["metadata"]["resourceVersion"]
        finalizer_result = await reconcile_gcs_ft_finalizer(self.ctx, cluster)
        if cluster["metadata"]["resourceVersion"] != rv:  # the finalizer was written
            self._written.remember(rv, cluster)
        if finalizer_result is not None:
            return finalizer_result
        if cluster["metadata"].get("deletionTimestamp"):
            return Result()

        error: ReconcileError | None = None
        failed_step = ""
        for step_name, step in self.steps:
            try:
                await step(cluster)
            except ReconcileError as exc:
                error = exc
            except ApiError as exc:
                error = ReconcileError(f"{step_name}: {exc}")
            if error is not None:
                failed_step = step_name
                log.info("reconcile step failed", step=step_name, error=str(error))
                break

        before = copy.deepcopy(cluster["status"])
        conflict_changed = self._record_conflict(cluster, error, failed_step)
        written = await self.update_status(
            cluster, error, previous=before, must_write=conflict_changed
        )
        if error is not None:
            raise error
        if written:
            return Result(requeue_after=self.ctx.settings.error_requeue_seconds)
        return Result(requeue_after=self._steady_requeue(request))

    def _steady_requeue(self, request: Request) -> float:
        """The steady-state requeue, shortened to when a pending pod-creation
        expectation of this cluster expires (a group waiting on one is not scaled
        again until then, and no watch event would wake it)."""
        wait = self.ctx.settings.requeue_seconds
        expectations = self.ctx.expectations
        for owner in expectations.owners(f"{request.namespace}/{request.name}/"):
            due = expectations.expires_in(owner)
            if due is not None:
                wait = min(wait, due + 0.1) if wait > 0 else due + 0.1
        return wait

    # ----- validation ---------------------------------------------------------------------
    async def _reject_if_invalid(self, cluster: Obj) -> bool:
        errors = validation.validate_raycluster(cluster, gates=self._features)
        if not self.ctx.settings.webhooks_served and self._features.get(NODE_LABEL_DELIVERY):
            from kuberay.api.v1.validation.label_refs import (
                cluster_spec_of,
                webhooks_required_error,
            )

            found = cluster_spec_of(KIND_RAYCLUSTER, cluster)
            missing = webhooks_required_error(found[0]) if found is not None else None
            errors.extend([missing] if missing is not None else [])
        meta = cluster["metadata"]
        conditions: list[Obj] = list(k8s.status(cluster).get("conditions") or [])
        had = cond.find(conditions, INVALID_SPEC_CONDITION) is not None
        fatal = [e for e in errors if e.source != "webhook"]
        if not fatal:
            if had:
                cond.remove_condition(conditions, INVALID_SPEC_CONDITION)
                await self._write_status_fields(cluster, {"conditions": conditions})
            return False
        is_metadata = any(e.path.startswith("metadata") for e in fatal)
        reason = "InvalidRayClusterMetadata" if is_metadata else "InvalidRayClusterSpec"
        what = "metadata" if is_metadata else "spec"
        detail = "; ".join(str(e) for e in fatal)
        message = f"The RayCluster {what} is invalid {meta['namespace']}/{meta['name']}: {detail}"
        message = message[:32768]  # the Condition schema's maxLength; a longer one is a 422
        if any(e.source == "status" for e in fatal) and not is_metadata:
            reason = "InvalidRayClusterStatus"
        previous = cond.find(conditions, INVALID_SPEC_CONDITION)
        if (
            previous is None
            or previous.get("message") != message
            or previous.get("reason") != reason
        ):
            self.ctx.event(cluster, WARNING, reason, message, "Validate")
            cond.set_condition(
                conditions, INVALID_SPEC_CONDITION, True, reason, message, self.ctx.now()
            )
            await self._write_status_fields(cluster, {"conditions": conditions})
        return True

    async def _write_status_fields(self, cluster: Obj, fields: Obj) -> None:
        meta = cluster["metadata"]
        status = dict(k8s.status(cluster))
        status.update(fields)
        body = {
            "apiVersion": API_VERSION,
            "kind": KIND_RAYCLUSTER,
            "metadata": {
                "name": meta["name"],
                "namespace": meta["namespace"],
                "resourceVersion": meta["resourceVersion"],
            },
            "status": go_status(status),
        }
        try:
            updated = await self.ctx.client.update_status(body)
        except NotFound:
            return
        # A Conflict propagates: the reconcile is retried at once (with backoff) on the
        # fresh object instead of waiting for the 2 s requeue.
        self._written.remember(meta["resourceVersion"], updated)
        cluster["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]
        cluster["status"] = k8s.status(updated)

    def _warn_autoscaler_v1_restart_policy(self, cluster: Obj) -> None:
        """KubeRay's warning (not an error): autoscaler v1 wants worker restartPolicy
        Never or unset."""
        topic = "autoscaler-v1-restart-policy"
        message: str | None = None
        if is_autoscaling_enabled(cluster) and is_autoscaling_v1_enabled(cluster):
            groups = [
                str(g.get("groupName"))
                for g in k8s.spec(cluster).get("workerGroupSpecs") or []
                if ((g.get("template") or {}).get("spec") or {}).get("restartPolicy")
                not in (None, "", "Never")
            ]
            if groups:
                meta = cluster["metadata"]
                message = (
                    f"RayCluster spec warning {meta['namespace']}/{meta['name']}: restartPolicy "
                    f"for worker groups [{', '.join(groups)}] should be Never or unset when "
                    "using autoscaler V1"
                )
        self.children.warn_once(cluster, topic, "InvalidRayClusterSpec", message, "Validate")

    def _record_conflict(
        self, cluster: Obj, error: ReconcileError | None, failed_step: str
    ) -> bool:
        """Keep the ``ChildResourceConflict`` condition in line with this pass: set when a
        child's name is taken, removed once every child step got past its check. Changes
        ``cluster``'s status in place (written by :meth:`update_status`); True if changed."""
        status = cluster.setdefault("status", {})
        conditions: list[Obj] = list(status.get("conditions") or [])
        previous = cond.find(conditions, CONFLICT_CONDITION)
        if isinstance(error, ChildConflict):
            if (
                previous is not None
                and previous.get("message") == error.message
                and previous.get("reason") == error.event_reason
            ):
                return False
            cond.set_condition(
                conditions,
                CONFLICT_CONDITION,
                True,
                error.event_reason,
                error.message,
                self.ctx.now(),
            )
        elif previous is not None and failed_step in ("", "reconcile_pods"):
            cond.remove_condition(conditions, CONFLICT_CONDITION)
        else:
            return False
        status["conditions"] = conditions
        return True

    # ----- status -------------------------------------------------------------------------
    async def update_status(
        self,
        cluster: Obj,
        error: ReconcileError | None,
        *,
        previous: Obj | None = None,
        must_write: bool = False,
    ) -> bool:
        """Compute the status and write it if it changed from ``previous`` (default:
        ``cluster``'s status) or ``must_write``; True when written. Without a head
        Service KubeRay computes no status: then only a ``must_write`` change of
        ``cluster``'s status (a condition of this pass) is written, as it is."""
        pods = self.ctx.children("v1", "Pod", cluster)
        try:
            head_service = self._head_service(cluster)
            new = calculate_status(
                cluster,
                pods,
                head_service,
                reconcile_error=error,
                status_conditions_enabled=self._gate(RAY_CLUSTER_STATUS_CONDITIONS, True),
                now=self.ctx.now(),
                creations_pending=self._creations_pending(cluster, pods),
            )
        except LookupError:
            if must_write:
                await self._write_status_fields(cluster, {})
            return must_write
        old = previous if previous is not None else k8s.status(cluster)
        if not must_write and not status_changed(old, new):
            return False
        was = cond.is_true(old.get("conditions") or [], cond.RAY_CLUSTER_PROVISIONED)
        await self._write_status_fields(cluster, new)
        now_prov = cond.is_true(new.get("conditions") or [], cond.RAY_CLUSTER_PROVISIONED)
        if self.ctx.metrics is not None and now_prov and not was:
            self.ctx.metrics.observe_provisioned(cluster)
        return True

    def _creations_pending(self, cluster: Obj, pods: list[Obj]) -> bool:
        """Some pod created for ``cluster`` is not in the cache (``pods``) yet."""
        meta = cluster["metadata"]
        names = {p["metadata"]["name"] for p in pods}
        expectations = self.ctx.expectations
        for owner in expectations.owners(f"{meta['namespace']}/{meta['name']}/"):
            expectations.observe(owner, lambda n: n in names)
            if expectations.creations_pending(owner):
                return True
        return False

    def _head_service(self, cluster: Obj) -> Obj | None:
        services = self.children.head_services(cluster)
        return services[0] if len(services) == 1 else None

    # ----- steps (children in :mod:`~kuberay.controllers.raycluster.children`) -----------
    async def reconcile_autoscaler_rbac(self, cluster: Obj) -> None:
        await self.children.reconcile_autoscaler_rbac(cluster)

    async def reconcile_ingress(self, cluster: Obj) -> None:
        await self.children.reconcile_ingress(cluster)

    async def reconcile_auth_secret(self, cluster: Obj) -> None:
        await self.children.reconcile_auth_secret(cluster)

    async def reconcile_head_service(self, cluster: Obj) -> None:
        await self.children.reconcile_head_service(cluster)

    async def reconcile_headless_service(self, cluster: Obj) -> None:
        await self.children.reconcile_headless_service(cluster)

    async def reconcile_serve_service(self, cluster: Obj) -> None:
        await self.children.reconcile_serve_service(cluster)

    async def reconcile_gcs_storage_pvc(self, cluster: Obj) -> None:
        await self.children.reconcile_gcs_storage_pvc(
            cluster, self._gate(GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE, False)
        )

    async def reconcile_pods(self, cluster: Obj) -> None:
        """Head and worker pods (see :mod:`kuberay.controllers.raycluster.pods`)."""
        await PodReconciler(self.ctx, cluster).run()


def gcs_ft_uses_redis(cluster: Obj) -> bool:
    """GCS FT on, with the Redis backend (the cleanup finalizer applies)."""
    return is_gcs_fault_tolerance_enabled(cluster) and not is_gcs_fault_tolerance_embedded(cluster)


__all__ = ["RayClusterReconciler", "gcs_ft_uses_redis"]
