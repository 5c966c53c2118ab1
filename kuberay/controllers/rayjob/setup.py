"""Wiring of the RayJob controller into a Manager."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER, KIND_RAYJOB
from kuberay.controllers.batchscheduler import new_batch_scheduler
from kuberay.controllers.common.mappers import head_pod_to_cluster_owner
from kuberay.controllers.rayjob.context import Ctx, JobDashboard, ObjectKey, RayJobSettings
from kuberay.controllers.rayjob.metrics import RayJobMetrics
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Controller, Manager, Reconciler, Request
from kuberay.reconcile.deferred import DeferredReconciler

#: controller-runtime's name for ``For(&rayv1.RayJob{})``.
CONTROLLER_NAME = "rayjob"
#: The component of the Events it records.
EVENT_COMPONENT = "rayjob-controller"

#: Kinds whose changes reconcile their owning RayJob (KubeRay's Owns).
OWNED_KINDS = (
    (API_VERSION, KIND_RAYCLUSTER),
    ("v1", "Service"),
    ("batch/v1", "Job"),
)


def head_pod_owner(mgr: Manager) -> Callable[[Obj], Iterable[Request]]:
    """Map a head pod to the RayJob owning its RayCluster (the pod's state feeds
    SidecarMode and the "why it waits" message; KubeRay does not watch pods)."""
    return head_pod_to_cluster_owner(mgr, KIND_RAYJOB)


def _reconciler(ctx: Ctx) -> Reconciler:
    """The reconciler, its modules imported with the first RayJob."""
    from kuberay.controllers.rayjob.reconciler import RayJobReconciler

    return RayJobReconciler(ctx)


def setup_rayjob_controller(
    mgr: Manager, settings: RayJobSettings, dashboard: JobDashboard
) -> Controller:
    """Register the RayJob controller: For(RayJob), owning RayClusters, Services and
    batch Jobs, watching head pods; the dashboard poller's finished calls enqueue the
    RayJob that asked."""
    ctx = Ctx(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(EVENT_COMPONENT),
        settings=settings,
        dashboard=dashboard,
        scheduler=new_batch_scheduler(settings.batch_scheduler, mgr.client),
    )
    if settings.enable_metrics:
        ctx.metrics = RayJobMetrics(mgr.cache, mgr.registry)
    builder = mgr.controller(CONTROLLER_NAME).for_(API_VERSION, KIND_RAYJOB)
    # As in KubeRay, only the RayCluster controller watches the scheduler's PodGroups.
    for api_version, kind in OWNED_KINDS:
        builder = builder.owns(api_version, kind)
    builder = builder.watches("v1", "Pod", head_pod_owner(mgr))
    controller = builder.complete(DeferredReconciler(lambda: _reconciler(ctx)))

    def on_result(owner: ObjectKey) -> None:
        controller.enqueue(Request(owner[0], owner[1]))

    dashboard.on_result = on_result
    return controller
