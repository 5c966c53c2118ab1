"""Wiring of the RayCluster controller into a Manager."""

from __future__ import annotations

import structlog

from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER
from kuberay.controllers.batchscheduler import new_batch_scheduler
from kuberay.controllers.raycluster.context import (
    CLUSTER_INDEX,
    OPENSHIFT_API_GROUPS,
    ROUTE_API_VERSION,
    ROUTE_KIND,
    Ctx,
    RayClusterSettings,
    cluster_index,
)
from kuberay.controllers.raycluster.metrics import RayClusterMetrics
from kuberay.kube import Client
from kuberay.reconcile import (
    AnnotationChangedPredicate,
    Controller,
    Expectations,
    GenerationChangedPredicate,
    LabelChangedPredicate,
    Manager,
    Reconciler,
    or_,
)
from kuberay.reconcile.deferred import DeferredReconciler

log = structlog.get_logger("kuberay.raycluster")

#: The controller's name, as controller-runtime's builder derives it from
#: ``For(&rayv1.RayCluster{})`` (the lowercased kind; KubeRay sets no ``Named``):
#: the ``controller`` label of the ``controller_runtime_*`` series and the ``name``
#: and ``controller`` labels of the ``workqueue_*`` series.
CONTROLLER_NAME = "raycluster"
#: The component of the Events it records (KubeRay's ``GetEventRecorder`` name).
EVENT_COMPONENT = "raycluster-controller"

#: Kinds whose changes reconcile their owning RayCluster.
OWNED_KINDS = (
    ("v1", "Pod"),
    ("v1", "Service"),
    ("v1", "Secret"),
    ("v1", "ServiceAccount"),
    ("v1", "PersistentVolumeClaim"),
    ("batch/v1", "Job"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("networking.k8s.io/v1", "Ingress"),
)


async def detect_openshift_api_groups(client: Client) -> frozenset[str]:
    """KubeRay ``IsOpenShiftCluster``: which of route/security/config.openshift.io the
    apiserver serves (one discovery GET of ``/apis``; errors propagate, as KubeRay
    refuses to start when it cannot tell)."""
    doc = await client.request("GET", "/apis", verb="get")
    served = {str(g.get("name")) for g in doc.get("groups") or []}
    found = frozenset(g for g in OPENSHIFT_API_GROUPS if g in served)
    if found:
        log.info("OpenShift API groups found", groups=sorted(found))
    return found


def setup_raycluster_controller(mgr: Manager, settings: RayClusterSettings) -> Controller:
    """Register the RayCluster controller: For(RayCluster) ignoring status-only
    writes, owning pods, services, secrets, RBAC, PVCs, jobs, ingresses and, on
    OpenShift with Routes enabled, routes."""
    owned = list(OWNED_KINDS)
    indexed = [("v1", "Pod"), ("v1", "Service"), ("v1", "Secret"), ("batch/v1", "Job")]
    if settings.routes_enabled:
        owned.append((ROUTE_API_VERSION, ROUTE_KIND))
        indexed.append((ROUTE_API_VERSION, ROUTE_KIND))
    for api_version, kind in indexed:
        mgr.cache.add_index(api_version, kind, CLUSTER_INDEX, cluster_index)
    scheduler = new_batch_scheduler(settings.batch_scheduler, mgr.client)
    if scheduler is not None:
        owned.extend(k for k in scheduler.owned_kinds if k not in owned)
    ctx = Ctx(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(EVENT_COMPONENT),
        settings=settings,
        expectations=Expectations(ttl=settings.expectation_timeout),
        scheduler=scheduler,
    )
    if settings.enable_metrics:
        ctx.metrics = RayClusterMetrics(mgr.cache, mgr.registry)
    builder = mgr.controller(CONTROLLER_NAME).for_(
        API_VERSION,
        KIND_RAYCLUSTER,
        predicates=[
            or_(GenerationChangedPredicate, LabelChangedPredicate, AnnotationChangedPredicate)
        ],
    )
    for api_version, kind in owned:
        builder = builder.owns(api_version, kind)
    return builder.complete(DeferredReconciler(lambda: _reconciler(ctx)))


def _reconciler(ctx: Ctx) -> Reconciler:
    """The reconciler, its modules imported with the first RayCluster."""
    from kuberay.controllers.raycluster.reconciler import RayClusterReconciler

    return RayClusterReconciler(ctx)
