"""The RayService controller (KubeRay ``rayservice_controller.go``): a Ray Serve application
on a RayCluster, Serve config changes applied in place, cluster changes through a new
cluster and a traffic switch; see :mod:`.reconciler`."""

from kuberay.controllers.rayservice.context import RayServiceSettings
from kuberay.controllers.rayservice.reconciler import RayServiceReconciler
from kuberay.controllers.rayservice.setup import CONTROLLER_NAME, setup_rayservice_controller

__all__ = [
    "CONTROLLER_NAME",
    "RayServiceReconciler",
    "RayServiceSettings",
    "setup_rayservice_controller",
]
