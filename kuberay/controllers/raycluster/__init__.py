"""The RayCluster controller (KubeRay v1.7 parity)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.lazy import lazy_exports

if TYPE_CHECKING:
    from kuberay.controllers.raycluster.context import (
        RayClusterSettings,
    )
    from kuberay.controllers.raycluster.setup import (
        detect_openshift_api_groups,
        setup_raycluster_controller,
    )

# The reconciler's modules load with the first object of the kind, not with this package.
_EXPORTS = {
    "kuberay.controllers.raycluster.context": ("RayClusterSettings",),
    "kuberay.controllers.raycluster.setup": (
        "detect_openshift_api_groups",
        "setup_raycluster_controller",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "RayClusterSettings",
    "detect_openshift_api_groups",
    "setup_raycluster_controller",
]
