"""The RayJob controller (KubeRay v1.7 parity, plus "why it waits" status messages)."""

from kuberay.controllers.rayjob.context import JobDashboard, RayJobSettings
from kuberay.controllers.rayjob.reconciler import RayJobReconciler
from kuberay.controllers.rayjob.setup import (
    CONTROLLER_NAME,
    EVENT_COMPONENT,
    setup_rayjob_controller,
)

__all__ = [
    "CONTROLLER_NAME",
    "EVENT_COMPONENT",
    "JobDashboard",
    "RayJobReconciler",
    "RayJobSettings",
    "setup_rayjob_controller",
]
