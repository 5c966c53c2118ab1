"""The RayService controller (KubeRay ``rayservice_controller.go``): a Ray Serve application
on a RayCluster, Serve config changes applied in place, cluster changes through a new
cluster and a traffic switch; see :mod:`.reconciler`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.lazy import lazy_exports

if TYPE_CHECKING:
    from kuberay.controllers.rayservice.context import (
        RayServiceSettings,
    )
    from kuberay.controllers.rayservice.setup import (
        setup_rayservice_controller,
    )

# The reconciler's modules load with the first object of the kind, not with this package.
_EXPORTS = {
    "kuberay.controllers.rayservice.context": ("RayServiceSettings",),
    "kuberay.controllers.rayservice.setup": ("setup_rayservice_controller",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "RayServiceSettings",
    "setup_rayservice_controller",
]
