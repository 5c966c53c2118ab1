"""Wiring of the RayJob controller into a Manager."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER, KIND_RAYJOB
from kuberay.controllers.batchscheduler import new_batch_scheduler
from kuberay.controllers.rayjob.context import Ctx, JobDashboard, ObjectKey, RayJobSettings
from kuberay.controllers.rayjob.metrics import RayJobMetrics
from kuberay.controllers.rayjob.reconciler import RayJobReconciler
from kuberay.kube import objects as k8s
from kuberay.reconcile import Controller, Manager, Request

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


def head_pod_owner(mgr: Manager) -> Any:
    """Map a head pod to the RayJob owning its RayCluster (the pod's state feeds
    SidecarMode and the "why it waits" message; KubeRay does not watch pods)."""

    def map_pod(pod: dict[str, Any]) -> Iterable[Request]:
        meta = k8s.meta(pod)
        labels = meta.get("labels") or {}
        if labels.get(C.RAY_NODE_TYPE_LABEL_KEY) != C.HEAD_NODE:
            return []
        cluster_name = labels.get(C.RAY_CLUSTER_LABEL_KEY)
        if not cluster_name:
            return []
        try:
            cluster = mgr.cache.get(
                API_VERSION, KIND_RAYCLUSTER, meta.get("namespace"), cluster_name
            )
        except LookupError:
            return []
        for ref in ((cluster or {}).get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("kind") == KIND_RAYJOB and ref.get("controller"):
                return [Request(str(meta.get("namespace")), str(ref.get("name")))]
        return []

    return map_pod


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
    controller = builder.complete(RayJobReconciler(ctx))

    def on_result(owner: ObjectKey) -> None:
        controller.enqueue(Request(owner[0], owner[1]))

    dashboard.on_result = on_result
    return controller
