"""The RayCluster controller's reconcile entry point (KubeRay's ``rayClusterReconcile``).

Order per pass: skip clusters another controller manages (``spec.managedBy``);
validate (an invalid spec gets an ``InvalidSpec`` condition and a Warning Event
naming every bad field; nothing is created or deleted); GCS-FT Redis cleanup
finalizer; then the named steps ``reconcile_autoscaler_rbac``,
``reconcile_ingress``, ``reconcile_auth_secret``, ``reconcile_head_service``,
``reconcile_headless_service``, ``reconcile_serve_service``,
``reconcile_gcs_storage_pvc`` and ``reconcile_pods``, stopping at the first
error; finally ``update_status`` writes the status only when it changed.
Requeue: 2 s after an error or a status write, else the steady-state period.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable

import structlog

from kuberay.api.v1.validation import validate_raycluster
from kuberay.controllers.common import constants as C
from kuberay.controllers.common.auth import (
    build_auth_secret,
    generate_auth_token,
    needs_auth_secret,
)
from kuberay.controllers.common.gcs_ft import build_gcs_storage_pvc
from kuberay.controllers.common.ingress import (
    build_head_ingress,
    ingress_enabled,
    ingress_needs_update,
)
from kuberay.controllers.common.names import auth_secret_name
from kuberay.controllers.common.predicates import (
    is_autoscaling_enabled,
    is_gcs_fault_tolerance_embedded,
    is_gcs_fault_tolerance_enabled,
    is_serve_service_enabled,
)
from kuberay.controllers.common.rbac import (
    build_autoscaler_role,
    build_autoscaler_role_binding,
    build_autoscaler_service_account,
    user_provided_service_account,
)
from kuberay.controllers.common.service import (
    build_head_service,
    build_headless_service,
    build_serve_service,
    needs_headless_service,
)
from kuberay.controllers.features import (
    GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE,
    RAY_CLUSTER_STATUS_CONDITIONS,
)
from kuberay.controllers.raycluster import conditions as cond
from kuberay.controllers.raycluster.context import RAY_API_VERSION, RAY_CLUSTER_KIND, Ctx, Obj
from kuberay.controllers.raycluster.gcs_ft import reconcile_gcs_ft_finalizer
from kuberay.controllers.raycluster.pods import PodReconciler
from kuberay.controllers.raycluster.status import ReconcileError, calculate_status, status_changed
from kuberay.kube import AlreadyExists, ApiError, NotFound
from kuberay.reconcile import NORMAL, WARNING, Request, Result

log = structlog.get_logger("kuberay.raycluster")

MANAGED_BY_KUBERAY = "ray.io/kuberay-operator"
INVALID_SPEC_CONDITION = "InvalidSpec"

Step = Callable[[Obj], Awaitable[None]]


class RayClusterReconciler:
    """Reconciles one RayCluster per call; safe to run with many workers."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
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
        cached = self.ctx.cache.get(
            RAY_API_VERSION, RAY_CLUSTER_KIND, request.namespace, request.name
        )
        if cached is None:
            for key in list(self.ctx.expectations._pending):
                if key.startswith(f"{request.namespace}/{request.name}/"):
                    self.ctx.expectations.delete(key)
            if self.ctx.metrics is not None:
                self.ctx.metrics.forget(request.namespace, request.name)
            return Result()
        spec = cached.get("spec") or {}
        managed_by = spec.get("managedBy")
        if managed_by and managed_by != MANAGED_BY_KUBERAY:
            log.debug("skipping cluster managed by another controller", managed_by=managed_by)
            return Result()
        cluster = copy.deepcopy(cached)
        cluster.setdefault("status", {})

        if await self._reject_if_invalid(cluster):
            return Result()

        finalizer_result = await reconcile_gcs_ft_finalizer(self.ctx, cluster)
        if finalizer_result is not None:
            return finalizer_result
        if cluster["metadata"].get("deletionTimestamp"):
            return Result()

        error: ReconcileError | None = None
        for step_name, step in self.steps:
            try:
                await step(cluster)
            except ReconcileError as exc:
                error = exc
            except ApiError as exc:
                error = ReconcileError(f"{step_name}: {exc}")
            if error is not None:
                log.info("reconcile step failed", step=step_name, error=str(error))
                break

        written = await self.update_status(cluster, error)
        if error is not None:
            raise error
        if written:
            return Result(requeue_after=self.ctx.settings.error_requeue_seconds)
        return Result(requeue_after=self.ctx.settings.requeue_seconds)

    # ----- validation ---------------------------------------------------------------------
    async def _reject_if_invalid(self, cluster: Obj) -> bool:
        errors = validate_raycluster(cluster, gates=self._features)
        meta = cluster["metadata"]
        conditions: list[Obj] = list((cluster.get("status") or {}).get("conditions") or [])
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
        status = dict(cluster.get("status") or {})
        status.update(fields)
        body = {
            "apiVersion": RAY_API_VERSION,
            "kind": RAY_CLUSTER_KIND,
            "metadata": {
                "name": meta["name"],
                "namespace": meta["namespace"],
                "resourceVersion": meta["resourceVersion"],
            },
            "status": status,
        }
        try:
            updated = await self.ctx.client.update_status(body)
        except NotFound:
            return
        # A Conflict propagates: the reconcile is retried at once (with backoff) on the
        # fresh object instead of waiting for the 2 s requeue.
        cluster["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]
        cluster["status"] = updated.get("status") or {}

    # ----- status -------------------------------------------------------------------------
    async def update_status(self, cluster: Obj, error: ReconcileError | None) -> bool:
        """Compute the status and write it if it changed; True when written."""
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
            )
        except LookupError:
            return False
        old = cluster.get("status") or {}
        if not status_changed(old, new):
            return False
        was = cond.is_true(old.get("conditions") or [], cond.RAY_CLUSTER_PROVISIONED)
        await self._write_status_fields(cluster, new)
        now_prov = cond.is_true(new.get("conditions") or [], cond.RAY_CLUSTER_PROVISIONED)
        if self.ctx.metrics is not None and now_prov and not was:
            self.ctx.metrics.observe_provisioned(cluster)
        return True

    def _head_services(self, cluster: Obj) -> list[Obj]:
        return self.ctx.children(
            "v1",
            "Service",
            cluster,
            **{
                C.RAY_NODE_TYPE_LABEL_KEY: C.HEAD_NODE,
                C.RAY_ID_LABEL_KEY: f"{cluster['metadata']['name']}-head",
            },
        )

    def _head_service(self, cluster: Obj) -> Obj | None:
        services = self._head_services(cluster)
        return services[0] if len(services) == 1 else None

    # ----- steps --------------------------------------------------------------------------
    async def _create_child(
        self, cluster: Obj, obj: Obj, kind_word: str, reason_ok: str, reason_fail: str
    ) -> None:
        meta = obj["metadata"]
        meta.setdefault("namespace", cluster["metadata"]["namespace"])
        where = f"{meta['namespace']}/{meta['name']}"
        try:
            await self.ctx.create(obj)
        except AlreadyExists:
            return
        except ApiError as exc:
            self.ctx.event(
                cluster,
                WARNING,
                reason_fail,
                f"Failed creating {kind_word} {where}, {exc}",
                "Create",
            )
            raise ReconcileError(f"failed to create {kind_word} {where}: {exc}") from exc
        if reason_ok:
            self.ctx.event(cluster, NORMAL, reason_ok, f"Created {kind_word} {where}", "Create")

    async def reconcile_autoscaler_rbac(self, cluster: Obj) -> None:
        """ServiceAccount, Role and RoleBinding the in-tree autoscaler needs."""
        if not is_autoscaling_enabled(cluster):
            return
        ns = cluster["metadata"]["namespace"]
        sa = build_autoscaler_service_account(cluster)
        if self.ctx.cached("v1", "ServiceAccount", ns, sa["metadata"]["name"]) is None:
            user_sa = user_provided_service_account(cluster)
            if user_sa:
                msg = (
                    f"RayCluster {ns}/{cluster['metadata']['name']} has head Pod spec "
                    f"serviceAccountName {user_sa} but the ServiceAccount does not exist; "
                    "please create it"
                )
                self.ctx.event(cluster, WARNING, "AutoscalerServiceAccountNotFound", msg, "Create")
                raise ReconcileError(msg)
            await self._create_child(
                cluster,
                sa,
                "service account",
                "CreatedServiceAccount",
                "FailedToCreateServiceAccount",
            )
        role = build_autoscaler_role(cluster)
        if (
            self.ctx.cached("rbac.authorization.k8s.io/v1", "Role", ns, role["metadata"]["name"])
            is None
        ):
            await self._create_child(cluster, role, "role", "CreatedRole", "FailedToCreateRole")
        binding = build_autoscaler_role_binding(cluster)
        if (
            self.ctx.cached(
                "rbac.authorization.k8s.io/v1", "RoleBinding", ns, binding["metadata"]["name"]
            )
            is None
        ):
            await self._create_child(
                cluster, binding, "role binding", "CreatedRoleBinding", "FailedToCreateRoleBinding"
            )

    async def reconcile_ingress(self, cluster: Obj) -> None:
        """The dashboard Ingress of ``headGroupSpec.enableIngress``; drift is repaired."""
        if not ingress_enabled(cluster):
            return
        desired = build_head_ingress(cluster)
        ns = cluster["metadata"]["namespace"]
        name = desired["metadata"]["name"]
        desired["metadata"].setdefault("namespace", ns)
        live = self.ctx.cached("networking.k8s.io/v1", "Ingress", ns, name)
        if live is None:
            await self._create_child(
                cluster, desired, "ingress", "CreatedIngress", "FailedToCreateIngress"
            )
            return
        owners = live["metadata"].get("ownerReferences") or []
        uid = cluster["metadata"].get("uid")
        if not any(o.get("controller") and o.get("uid") == uid for o in owners):
            self.ctx.event(
                cluster,
                WARNING,
                "FailedToCreateIngress",
                f"Ingress {ns}/{name} already exists and is not owned by this RayCluster",
                "Create",
            )
            return
        updated = ingress_needs_update(live, desired)
        if updated is None:
            return
        try:
            await self.ctx.client.update(updated)
        except ApiError as exc:
            self.ctx.event(
                cluster,
                WARNING,
                "FailedToUpdateIngress",
                f"Failed updating ingress {ns}/{name}, {exc}",
                "Update",
            )
            raise ReconcileError(str(exc)) from exc
        self.ctx.event(cluster, NORMAL, "UpdatedIngress", f"Updated ingress {ns}/{name}", "Update")

    async def reconcile_auth_secret(self, cluster: Obj) -> None:
        """The token-auth Secret (generated once, never rotated)."""
        if not needs_auth_secret(cluster):
            return
        ns = cluster["metadata"]["namespace"]
        name = auth_secret_name(cluster["metadata"]["name"])
        if self.ctx.cached("v1", "Secret", ns, name) is not None:
            return
        secret = build_auth_secret(cluster, generate_auth_token())
        await self._create_child(cluster, secret, "secret", "", "FailedToCreateSecret")

    async def reconcile_head_service(self, cluster: Obj) -> None:
        """Exactly one head Service; created once, never updated."""
        services = self._head_services(cluster)
        if len(services) == 1:
            return
        if len(services) > 1:
            raise ReconcileError(
                f"found {len(services)} head services for RayCluster "
                f"{cluster['metadata']['namespace']}/{cluster['metadata']['name']}"
            )
        service = build_head_service(cluster, self.ctx.settings.options)
        service["metadata"]["namespace"] = cluster["metadata"]["namespace"]
        await self._create_child(
            cluster, service, "service", "CreatedService", "FailedToCreateService"
        )

    async def reconcile_headless_service(self, cluster: Obj) -> None:
        """``<cluster>-headless`` for multi-host worker groups."""
        if not needs_headless_service(cluster):
            return
        service = build_headless_service(cluster)
        ns = cluster["metadata"]["namespace"]
        if self.ctx.cached("v1", "Service", ns, service["metadata"]["name"]) is None:
            await self._create_child(
                cluster, service, "service", "CreatedService", "FailedToCreateService"
            )

    async def reconcile_serve_service(self, cluster: Obj) -> None:
        """``<cluster>-serve-svc`` when annotated ``ray.io/enable-serve-service: "true"``."""
        if not is_serve_service_enabled(cluster):
            return
        try:
            service = build_serve_service(cluster)
        except ValueError as exc:
            raise ReconcileError(str(exc)) from exc
        ns = cluster["metadata"]["namespace"]
        if self.ctx.cached("v1", "Service", ns, service["metadata"]["name"]) is None:
            await self._create_child(cluster, service, "service", "", "FailedToCreateService")

    async def reconcile_gcs_storage_pvc(self, cluster: Obj) -> None:
        """The embedded (RocksDB) GCS storage claim, behind GCSFaultToleranceEmbeddedStorage."""
        if not (
            is_gcs_fault_tolerance_embedded(cluster)
            and self._gate(GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE, False)
        ):
            return
        ns = cluster["metadata"]["namespace"]
        storage = ((cluster.get("spec") or {}).get("gcsFaultToleranceOptions") or {}).get(
            "storage"
        ) or {}
        claim = storage.get("claimName")
        if claim:
            if self.ctx.cached("v1", "PersistentVolumeClaim", ns, claim) is None:
                self.ctx.event(
                    cluster,
                    WARNING,
                    "FailedToCreatePVC",
                    f"PersistentVolumeClaim {ns}/{claim} named by "
                    "gcsFaultToleranceOptions.storage.claimName does not exist",
                    "Create",
                )
            return
        pvc = build_gcs_storage_pvc(cluster)
        if self.ctx.cached("v1", "PersistentVolumeClaim", ns, pvc["metadata"]["name"]) is None:
            await self._create_child(cluster, pvc, "PVC", "CreatedPVC", "FailedToCreatePVC")

    async def reconcile_pods(self, cluster: Obj) -> None:
        """Head and worker pods (see :mod:`kuberay.controllers.raycluster.pods`)."""
        await PodReconciler(self.ctx, cluster).run()


def gcs_ft_uses_redis(cluster: Obj) -> bool:
    """GCS FT on, with the Redis backend (the cleanup finalizer applies)."""
    return is_gcs_fault_tolerance_enabled(cluster) and not is_gcs_fault_tolerance_embedded(cluster)


__all__ = ["RayClusterReconciler", "gcs_ft_uses_redis"]
