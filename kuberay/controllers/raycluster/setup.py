"""Wiring of the RayCluster controller into a Manager."""

from __future__ import annotations

from kuberay.controllers.raycluster.context import (
    CLUSTER_INDEX,
    RAY_API_VERSION,
    RAY_CLUSTER_KIND,
    Ctx,
    RayClusterSettings,
    cluster_index,
)
from kuberay.controllers.raycluster.metrics import RayClusterMetrics
from kuberay.controllers.raycluster.reconciler import RayClusterReconciler
from kuberay.reconcile import (
    AnnotationChangedPredicate,
    Controller,
    Expectations,
    GenerationChangedPredicate,
    LabelChangedPredicate,
    Manager,
    or_,
)

CONTROLLER_NAME = "raycluster-controller"

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


def setup_raycluster_controller(mgr: Manager, settings: RayClusterSettings) -> Controller:
    """Register the RayCluster controller: For(RayCluster) ignoring status-only
    writes, owning pods, services, secrets, RBAC, PVCs, jobs and ingresses."""
    for api_version, kind in (
        ("v1", "Pod"),
        ("v1", "Service"),
        ("v1", "Secret"),
        ("batch/v1", "Job"),
    ):
        mgr.cache.add_index(api_version, kind, CLUSTER_INDEX, cluster_index)
    ctx = Ctx(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(CONTROLLER_NAME),
        settings=settings,
        expectations=Expectations(ttl=settings.expectation_timeout),
    )
    if settings.enable_metrics:
        ctx.metrics = RayClusterMetrics(mgr.cache, mgr.registry)
    builder = mgr.controller(CONTROLLER_NAME).for_(
        RAY_API_VERSION,
        RAY_CLUSTER_KIND,
        predicates=[
            or_(GenerationChangedPredicate, LabelChangedPredicate, AnnotationChangedPredicate)
        ],
    )
    for api_version, kind in OWNED_KINDS:
        builder = builder.owns(api_version, kind)
    return builder.complete(RayClusterReconciler(ctx))
