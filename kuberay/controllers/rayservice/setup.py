"""Wiring of the RayService controller into a Manager."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER, KIND_RAYSERVICE
from kuberay.controllers.common.mappers import (
    cluster_owner_requests,
    controller_owner_name,
    head_pod_to_cluster_owner,
)
from kuberay.controllers.rayservice.context import (
    OWNER_PREFIX,
    Ctx,
    ObjectKey,
    RayServiceSettings,
    ServeDashboard,
)
from kuberay.controllers.rayservice.metrics import RayServiceMetrics
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import (
    AnnotationChangedPredicate,
    Controller,
    GenerationChangedPredicate,
    LabelChangedPredicate,
    Manager,
    Reconciler,
    Request,
    or_,
)
from kuberay.reconcile.deferred import DeferredReconciler

#: controller-runtime's name for ``For(&rayv1.RayService{})``.
CONTROLLER_NAME = "rayservice"
#: The component of the Events it records.
EVENT_COMPONENT = "rayservice-controller"


def head_pod_owner(mgr: Manager) -> Callable[[Obj], Iterable[Request]]:
    """A head pod -> the RayService owning its RayCluster (its readiness gates Serve calls)."""
    return head_pod_to_cluster_owner(mgr, KIND_RAYSERVICE)


def endpoint_slice_owner(mgr: Manager) -> Callable[[Obj], Iterable[Request]]:
    """An EndpointSlice -> the RayService owning its Service (numServeEndpoints)."""

    def map_slice(eps: Obj) -> Iterable[Request]:
        meta = k8s.meta(eps)
        svc_name = (meta.get("labels") or {}).get("kubernetes.io/service-name")
        if not svc_name:
            return []
        try:
            svc = mgr.cache.get("v1", "Service", meta.get("namespace"), svc_name)
        except LookupError:
            return []
        owner = controller_owner_name(svc or {}, KIND_RAYSERVICE)
        if owner:
            return [Request(str(meta.get("namespace")), owner)]
        cluster = controller_owner_name(svc or {}, KIND_RAYCLUSTER)  # per-cluster serve Service
        if not cluster:
            return []
        return cluster_owner_requests(mgr, str(meta.get("namespace")), cluster, KIND_RAYSERVICE)

    return map_slice


def _reconciler(ctx: Ctx) -> Reconciler:
    """The reconciler, its modules imported with the first RayService."""
    from kuberay.controllers.rayservice.reconciler import RayServiceReconciler

    return RayServiceReconciler(ctx)


def setup_rayservice_controller(
    mgr: Manager, settings: RayServiceSettings, dashboard: ServeDashboard
) -> Controller:
    """Register the RayService controller: For(RayService) ignoring status-only writes,
    owning RayClusters and Services, watching head pods and EndpointSlices; the dashboard
    poller's changed outcomes enqueue the RayService that asked."""
    ctx = Ctx(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(EVENT_COMPONENT),
        settings=settings,
        dashboard=dashboard,
    )
    if settings.enable_metrics:
        ctx.metrics = RayServiceMetrics(mgr.cache, mgr.registry)
    builder = mgr.controller(CONTROLLER_NAME).for_(
        API_VERSION,
        KIND_RAYSERVICE,
        predicates=[
            or_(GenerationChangedPredicate, LabelChangedPredicate, AnnotationChangedPredicate)
        ],
    )
    builder = builder.owns(API_VERSION, KIND_RAYCLUSTER).owns("v1", "Service")
    builder = builder.watches("v1", "Pod", head_pod_owner(mgr))
    builder = builder.watches("discovery.k8s.io/v1", "EndpointSlice", endpoint_slice_owner(mgr))
    controller = builder.complete(DeferredReconciler(lambda: _reconciler(ctx)))
    previous = dashboard.on_result

    def on_result(owner: ObjectKey) -> None:
        if not owner[1].startswith(OWNER_PREFIX):
            if previous is not None:
                previous(owner)
            return
        if controller.queue is not None:
            controller.queue.add(Request(owner[0], owner[1][len(OWNER_PREFIX) :]))

    dashboard.on_result = on_result
    return controller
