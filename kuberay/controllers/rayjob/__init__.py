"""The RayJob controller (KubeRay v1.7 parity, plus "why it waits" status messages)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.lazy import lazy_exports

if TYPE_CHECKING:
    from kuberay.controllers.rayjob.context import (
        JobDashboard,
        RayJobSettings,
    )
    from kuberay.controllers.rayjob.reconciler import (
        RayJobReconciler,
    )
    from kuberay.controllers.rayjob.setup import (
        CONTROLLER_NAME,
        EVENT_COMPONENT,
        setup_rayjob_controller,
    )

# The reconciler's modules load with the first object of the kind, not with this package.
_EXPORTS = {
    "kuberay.controllers.rayjob.context": ("JobDashboard", "RayJobSettings"),
    "kuberay.controllers.rayjob.reconciler": ("RayJobReconciler",),
    "kuberay.controllers.rayjob.setup": (
        "CONTROLLER_NAME",
        "EVENT_COMPONENT",
        "setup_rayjob_controller",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CONTROLLER_NAME",
    "EVENT_COMPONENT",
    "JobDashboard",
    "RayJobReconciler",
    "RayJobSettings",
    "setup_rayjob_controller",
]
