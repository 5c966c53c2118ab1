"""Wiring of the RayCronJob controller into a Manager (gate ``RayCronJob``)."""

from __future__ import annotations

from kuberay.api.v1.constants import API_VERSION, KIND_RAYCRONJOB
from kuberay.controllers.raycronjob.context import Ctx, RayCronJobSettings
from kuberay.controllers.raycronjob.reconciler import RayCronJobReconciler
from kuberay.reconcile import Controller, Manager

#: The controller's name, as controller-runtime's builder derives it from
#: ``For(&rayv1.RayCronJob{})``: the lowercased kind (label of its metrics).
CONTROLLER_NAME = "raycronjob"
#: The component of the Events it records (KubeRay's ``GetEventRecorderFor`` name).
EVENT_COMPONENT = "raycronjob-controller"


def setup_raycronjob_controller(mgr: Manager, settings: RayCronJobSettings) -> Controller:
    """Register the RayCronJob controller: For(RayCronJob), every change (status writes
    included: no predicates, as KubeRay); it only creates RayJobs and does not watch
    them."""
    ctx = Ctx(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(EVENT_COMPONENT),
        settings=settings,
    )
    builder = mgr.controller(CONTROLLER_NAME).for_(API_VERSION, KIND_RAYCRONJOB)
    return builder.complete(RayCronJobReconciler(ctx))
