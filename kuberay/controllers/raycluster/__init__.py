"""The RayCluster controller (KubeRay v1.7 parity)."""

from kuberay.controllers.raycluster.context import RayClusterSettings
from kuberay.controllers.raycluster.reconciler import RayClusterReconciler
from kuberay.controllers.raycluster.setup import (
    CONTROLLER_NAME,
    EVENT_COMPONENT,
    detect_openshift_api_groups,
    setup_raycluster_controller,
)

__all__ = [
    "CONTROLLER_NAME",
    "EVENT_COMPONENT",
    "RayClusterReconciler",
    "RayClusterSettings",
    "detect_openshift_api_groups",
    "setup_raycluster_controller",
]
