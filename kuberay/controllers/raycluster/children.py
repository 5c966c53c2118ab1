"""The RayCluster's children other than pods: autoscaler RBAC, Ingress or OpenShift Route,
token-auth Secret, head/headless/serve Services and the embedded-GCS PVC.

Every child is created under a fixed name. When that name is already taken by an
object this RayCluster does not control (no controller owner reference with its
uid), the step stops the reconcile with a :class:`ChildConflict`: a Warning Event
(the kind's ``FailedToCreate*`` reason) names the object and its owner, the
reconciler records the ``ChildResourceConflict`` condition, no pods are created
and the foreign object is never modified. Exceptions, as in KubeRay: a
ServiceAccount the user named in the head template is theirs by design, and an
unowned ``<cluster>-gcs-pvc`` is adopted (the documented recovery path of
``deletionPolicy: Retain``).
"""

from __future__ import annotations

import json

import attrs
import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1.rules import (
    is_autoscaling_enabled,
    is_gcs_fault_tolerance_embedded,
    is_serve_service_enabled,
)
from kuberay.controllers.builders.auth import (
    build_auth_secret,
    generate_auth_token,
    needs_auth_secret,
)
from kuberay.controllers.builders.gcs_ft import (
    build_gcs_storage_pvc,
    gcs_storage_retained_on_deletion,
)
from kuberay.controllers.builders.ingress import (
    build_head_ingress,
    build_head_route,
    ingress_enabled,
    ingress_needs_update,
)
from kuberay.controllers.builders.names import auth_secret_name
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.controllers.builders.rbac import (
    build_autoscaler_role,
    build_autoscaler_role_binding,
    build_autoscaler_service_account,
    user_provided_service_account,
)
from kuberay.controllers.builders.service import (
    build_head_service,
    build_headless_service,
    build_serve_service,
    needs_headless_service,
)
from kuberay.controllers.raycluster.context import ROUTE_API_VERSION, ROUTE_KIND, Ctx
from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.gocompat.quantity import Quantity, QuantityError
from kuberay.kube import ApiError, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING

log = structlog.get_logger("kuberay.raycluster")

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
CONFLICT_CONDITION = "ChildResourceConflict"


@attrs.frozen
class ChildConflict(ReconcileError):
    """A child's name is taken by an object this RayCluster does not control."""

    event_reason: str = ""


def controlled_by(obj: Obj, cluster: Obj) -> bool:
    """``obj`` has a controller owner reference to ``cluster`` (by uid)."""
    uid = cluster["metadata"].get("uid")
    refs = obj.get("metadata", {}).get("ownerReferences") or []
    return any(r.get("controller") and r.get("uid") == uid for r in refs)


def _foreign_controller(obj: Obj, cluster: Obj) -> Obj | None:
    uid = cluster["metadata"].get("uid")
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid") != uid:
            return dict(ref)
    return None


def _owner_text(obj: Obj, cluster: Obj) -> str:
    ref = _foreign_controller(obj, cluster)
    if ref is not None:
        return f"controlled by {ref.get('kind')} {ref.get('name')}"
    return "not controlled by any owner"


def _go_list(values: object) -> str:
    items = values if isinstance(values, list) else []
    return "[" + " ".join(str(v) for v in items) + "]"


def gcs_pvc_drift(desired: Obj, live: Obj) -> str:
    """What differs between the desired and the live GCS PVC among the fields a PVC
    cannot change in place (size, explicit storageClassName, accessModes); "" if none."""
    diffs: list[str] = []
    want_spec, live_spec = desired.get("spec") or {}, live.get("spec") or {}
    want_raw = ((want_spec.get("resources") or {}).get("requests") or {}).get("storage")
    got_raw = ((live_spec.get("resources") or {}).get("requests") or {}).get("storage")
    try:
        want = Quantity.from_json(want_raw if want_raw is not None else "0")
        got = Quantity.from_json(got_raw if got_raw is not None else "0")
        if want.cmp(got) != 0:
            diffs.append(f"requested size {want} != current {got}")
    except QuantityError:
        if want_raw != got_raw:
            diffs.append(f"requested size {want_raw} != current {got_raw}")
    want_class = want_spec.get("storageClassName")
    got_class = live_spec.get("storageClassName")
    if want_class is not None and want_class != got_class:
        diffs.append(f"storageClassName {want_class} != current {got_class or '<default>'}")
    want_modes = list(want_spec.get("accessModes") or [])
    got_modes = list(live_spec.get("accessModes") or [])
    if sorted(want_modes) != sorted(got_modes):
        diffs.append(f"accessModes {_go_list(want_modes)} != current {_go_list(got_modes)}")
    return "; ".join(diffs)


class ChildReconciler:
    """The non-pod child steps; one per controller (it remembers warnings it gave)."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        # (namespace/name, uid, topic) -> last warning message, so an unchanged problem
        # is reported once instead of on every pass.
        self._warned: dict[tuple[str, str, str], str] = {}

    # ----- helpers ------------------------------------------------------------------------
    def warn_once(
        self, cluster: Obj, topic: str, reason: str, message: str | None, action: str
    ) -> None:
        """A Warning Event unless the same ``message`` was the last one for ``topic``;
        ``message=None`` forgets the topic (the problem went away)."""
        meta = cluster["metadata"]
        key = (f"{meta['namespace']}/{meta['name']}", str(meta.get("uid")), topic)
        if message is None:
            self._warned.pop(key, None)
            return
        if self._warned.get(key) == message:
            return
        self._warned[key] = message
        self.ctx.event(cluster, WARNING, reason, message, action)

    def forget(self, namespace: str, name: str) -> None:
        """Drop what was remembered about a deleted cluster."""
        for key in [k for k in self._warned if k[0] == f"{namespace}/{name}"]:
            del self._warned[key]

    def _conflict(self, cluster: Obj, live: Obj, reason: str) -> ChildConflict:
        meta = live["metadata"]
        cmeta = cluster["metadata"]
        message = (
            f"{live.get('kind') or 'Object'} {meta.get('namespace')}/{meta.get('name')} already "
            f"exists and is owned by someone else ({_owner_text(live, cluster)}), not by "
            f"RayCluster {cmeta['namespace']}/{cmeta['name']}; not modifying it. Delete or "
            "rename it so the RayCluster can create its own."
        )
        self.ctx.event(cluster, WARNING, reason, message, "Create")
        return ChildConflict(message, event_reason=reason)

    async def _live(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        try:
            obj = await self.ctx.client.get(api_version, kind, name, namespace)
        except NotFound:
            return None
        obj.setdefault("apiVersion", api_version)
        obj.setdefault("kind", kind)
        return obj

    def _cached(self, desired: Obj) -> Obj | None:
        meta = desired["metadata"]
        found = self.ctx.cached(
            desired["apiVersion"], desired["kind"], meta["namespace"], meta["name"]
        )
        if found is not None and "kind" not in found:
            found = {**found, "apiVersion": desired["apiVersion"], "kind": desired["kind"]}
        return found

    async def ensure(
        self,
        cluster: Obj,
        desired: Obj,
        word: str,
        reason_ok: str,
        reason_fail: str,
        *,
        check_cache: bool = True,
    ) -> Obj | None:
        """Create ``desired`` unless it exists. Returns the existing object when this
        cluster controls it (None after creating); raises :class:`ChildConflict` when
        the name is taken by someone else's object."""
        meta = desired["metadata"]
        meta.setdefault("namespace", cluster["metadata"]["namespace"])
        ns, name = meta["namespace"], meta["name"]
        live = self._cached(desired) if check_cache else None
        if live is None:
            try:
                created = await self.ctx.create_if_absent(desired)
            except ApiError as exc:
                self.ctx.event(
                    cluster,
                    WARNING,
                    reason_fail,
                    f"Failed creating {word} {ns}/{name}, {exc}",
                    "Create",
                )
                raise ReconcileError(f"failed to create {word} {ns}/{name}: {exc}") from exc
            if created:
                if reason_ok:
                    self.ctx.event(
                        cluster, NORMAL, reason_ok, f"Created {word} {ns}/{name}", "Create"
                    )
                return None
            # Not in the cache: cache lag, or a kind the cache is scoped away from
            # (Secrets are cached by label). A bounded live read decides.
            live = await self._live(desired["apiVersion"], desired["kind"], ns, name)
            if live is None:
                raise ReconcileError(f"{word} {ns}/{name} vanished while being created")
        if not controlled_by(live, cluster):
            raise self._conflict(cluster, live, reason_fail)
        return live

    # ----- steps --------------------------------------------------------------------------
    async def reconcile_autoscaler_rbac(self, cluster: Obj) -> None:
        """ServiceAccount, Role and RoleBinding the in-tree autoscaler needs."""
        if not is_autoscaling_enabled(cluster):
            return
        ns = cluster["metadata"]["namespace"]
        user_sa = user_provided_service_account(cluster)
        if user_sa:
            # The user's own account, looked up by exactly the name they wrote; any
            # owner is fine (it is theirs by design).
            if self.ctx.cached("v1", "ServiceAccount", ns, user_sa) is None:
                msg = (
                    f"RayCluster {ns}/{cluster['metadata']['name']} has head Pod spec "
                    f"serviceAccountName {user_sa} but the ServiceAccount does not exist; "
                    "please create it"
                )
                self.ctx.event(cluster, WARNING, "AutoscalerServiceAccountNotFound", msg, "Create")
                raise ReconcileError(msg)
        else:
            await self.ensure(
                cluster,
                build_autoscaler_service_account(cluster),
                "service account",
                "CreatedServiceAccount",
                "FailedToCreateServiceAccount",
            )
        await self.ensure(
            cluster, build_autoscaler_role(cluster), "role", "CreatedRole", "FailedToCreateRole"
        )
        await self.ensure(
            cluster,
            build_autoscaler_role_binding(cluster),
            "role binding",
            "CreatedRoleBinding",
            "FailedToCreateRoleBinding",
        )

    async def reconcile_ingress(self, cluster: Obj) -> None:
        """``headGroupSpec.enableIngress``: an OpenShift Route or a networking/v1 Ingress."""
        if not ingress_enabled(cluster):
            return
        if self.ctx.settings.routes_enabled:
            await self.reconcile_route(cluster)
            return
        desired = build_head_ingress(cluster)
        live = await self.ensure(
            cluster, desired, "ingress", "CreatedIngress", "FailedToCreateIngress"
        )
        if live is None:
            return
        updated = ingress_needs_update(live, desired)
        if updated is None:
            return
        ns, name = desired["metadata"]["namespace"], desired["metadata"]["name"]
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

    async def reconcile_route(self, cluster: Obj) -> None:
        """The head Route (OpenShift): created once when no Route carries the cluster's
        label, never updated (KubeRay)."""
        if self.ctx.children(ROUTE_API_VERSION, ROUTE_KIND, cluster):
            return
        try:
            desired = build_head_route(cluster)
        except ValueError as exc:
            raise ReconcileError(str(exc)) from exc
        await self.ensure(cluster, desired, "route", "CreatedRoute", "FailedToCreateRoute")

    async def reconcile_auth_secret(self, cluster: Obj) -> None:
        """The token-auth Secret (generated once, never rotated)."""
        if not needs_auth_secret(cluster):
            return
        ns = cluster["metadata"]["namespace"]
        name = auth_secret_name(cluster["metadata"]["name"])
        cached = self.ctx.cached("v1", "Secret", ns, name)
        if cached is not None:
            if not controlled_by(cached, cluster):
                raise self._conflict(
                    cluster,
                    {"apiVersion": "v1", "kind": "Secret", **cached},
                    "FailedToCreateSecret",
                )
            return
        secret = build_auth_secret(cluster, generate_auth_token())
        await self.ensure(cluster, secret, "secret", "", "FailedToCreateSecret", check_cache=False)

    def head_services(self, cluster: Obj) -> list[Obj]:
        """Services labelled as this cluster's head Service (KubeRay's lookup)."""
        return self.ctx.children(
            "v1",
            "Service",
            cluster,
            **{
                C.RAY_NODE_TYPE_LABEL_KEY: C.HEAD_NODE,
                C.RAY_ID_LABEL_KEY: f"{cluster['metadata']['name']}-head",
            },
        )

    async def reconcile_head_service(self, cluster: Obj) -> None:
        """Exactly one head Service; created once, never updated."""
        services = self.head_services(cluster)
        if len(services) == 1:
            return
        if len(services) > 1:
            raise ReconcileError(
                f"found {len(services)} head services for RayCluster "
                f"{cluster['metadata']['namespace']}/{cluster['metadata']['name']}"
            )
        service = build_head_service(cluster, self.ctx.settings.options)
        service["metadata"]["namespace"] = cluster["metadata"]["namespace"]
        await self.ensure(cluster, service, "service", "CreatedService", "FailedToCreateService")

    async def reconcile_headless_service(self, cluster: Obj) -> None:
        """``<cluster>-headless`` for multi-host worker groups."""
        if not needs_headless_service(cluster):
            return
        await self.ensure(
            cluster,
            build_headless_service(cluster),
            "service",
            "CreatedService",
            "FailedToCreateService",
        )

    async def reconcile_serve_service(self, cluster: Obj) -> None:
        """``<cluster>-serve-svc`` when annotated ``ray.io/enable-serve-service: "true"``
        (created without an Event, as KubeRay)."""
        if not is_serve_service_enabled(cluster):
            return
        try:
            service = build_serve_service(cluster)
        except ValueError as exc:
            raise ReconcileError(str(exc)) from exc
        await self.ensure(cluster, service, "service", "", "FailedToCreateService")

    async def reconcile_gcs_storage_pvc(self, cluster: Obj, gate_enabled: bool) -> None:
        """The embedded (RocksDB) GCS claim: created if absent; an existing one gets a
        drift warning and its controller reference aligned with ``deletionPolicy``."""
        if not (is_gcs_fault_tolerance_embedded(cluster) and gate_enabled):
            return
        ns = cluster["metadata"]["namespace"]
        storage = (k8s.spec(cluster).get("gcsFaultToleranceOptions") or {}).get("storage") or {}
        claim = storage.get("claimName")
        if claim:
            if self.ctx.cached("v1", "PersistentVolumeClaim", ns, claim) is None:
                self.ctx.event(
                    cluster,
                    WARNING,
                    "FailedToCreatePVC",
                    f"GcsFaultToleranceOptions.Storage.ClaimName {json.dumps(claim)} not found in "
                    f"namespace {ns}; the head Pod will not start until it exists",
                    "Validate",
                )
            return
        desired = build_gcs_storage_pvc(cluster)
        name = desired["metadata"]["name"]
        live = self._cached(desired)
        if live is None:
            try:
                created = await self.ctx.create_if_absent(desired)
            except ApiError as exc:
                self.ctx.event(
                    cluster,
                    WARNING,
                    "FailedToCreatePVC",
                    f"Failed to create GCS storage PVC {ns}/{name}, {exc}",
                    "Create",
                )
                raise ReconcileError(f"failed to create PVC {ns}/{name}: {exc}") from exc
            if created:
                self.ctx.event(
                    cluster, NORMAL, "CreatedPVC", f"Created GCS storage PVC {ns}/{name}", "Create"
                )
                return
            live = await self._live("v1", "PersistentVolumeClaim", ns, name)
            if live is None:
                raise ReconcileError(f"PVC {ns}/{name} vanished while being created")
        if _foreign_controller(live, cluster) is not None:
            raise self._conflict(cluster, live, "FailedToCreatePVC")
        drift = gcs_pvc_drift(desired, live)
        self.warn_once(
            cluster,
            "gcs-pvc-drift",
            "FailedToCreatePVC",
            (
                f"GCS storage PVC {ns}/{name} already exists and cannot be reconfigured in "
                f"place ({drift}); delete the PVC to recreate it with the new settings"
            )
            if drift
            else None,
            "Update",
        )
        await self._align_gcs_pvc_owner(cluster, live)

    async def _align_gcs_pvc_owner(self, cluster: Obj, live: Obj) -> None:
        """``Retain``: no controller reference to the cluster (the claim outlives it);
        ``DeleteWithCluster``: one (garbage-collected with it)."""
        retain = gcs_storage_retained_on_deletion(cluster)
        owned = controlled_by(live, cluster)
        if retain != owned:
            return
        meta = live["metadata"]
        refs = [dict(r) for r in meta.get("ownerReferences") or []]
        uid = cluster["metadata"].get("uid")
        if retain:
            refs = [r for r in refs if not (r.get("controller") and r.get("uid") == uid)]
        else:
            refs = [r for r in refs if r.get("uid") != uid]
            refs.append(controller_owner_reference(cluster))
        await self.ctx.client.patch(
            "v1",
            "PersistentVolumeClaim",
            meta["name"],
            {"metadata": {"ownerReferences": refs, "resourceVersion": meta["resourceVersion"]}},
            meta["namespace"],
        )
        log.info(
            "aligned GCS storage PVC owner reference with deletionPolicy",
            pvc=meta["name"],
            retain=retain,
        )


__all__ = [
    "CONFLICT_CONDITION",
    "ROUTE_API_VERSION",
    "ROUTE_KIND",
    "ChildConflict",
    "ChildReconciler",
    "controlled_by",
    "gcs_pvc_drift",
]
