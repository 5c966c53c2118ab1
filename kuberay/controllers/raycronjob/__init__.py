"""The RayCronJob controller (KubeRay v1.7 parity, gate ``RayCronJob``)."""

from kuberay.controllers.raycronjob.builder import build_rayjob, rayjob_name
from kuberay.controllers.raycronjob.context import RayCronJobSettings
from kuberay.controllers.raycronjob.reconciler import RayCronJobReconciler
from kuberay.controllers.raycronjob.setup import (
    CONTROLLER_NAME,
    EVENT_COMPONENT,
    setup_raycronjob_controller,
)
from kuberay.controllers.raycronjob.ticks import next_tick
from kuberay.reconcile.clock import utc_now

__all__ = [
    "CONTROLLER_NAME",
    "EVENT_COMPONENT",
    "RayCronJobReconciler",
    "RayCronJobSettings",
    "build_rayjob",
    "next_tick",
    "rayjob_name",
    "setup_raycronjob_controller",
    "utc_now",
]
