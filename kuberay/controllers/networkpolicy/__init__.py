"""The NetworkPolicy controller (KubeRay v1.7 parity, gate ``RayClusterNetworkPolicy``)."""

from kuberay.controllers.networkpolicy.reconciler import NetworkPolicyReconciler
from kuberay.controllers.networkpolicy.setup import (
    CONTROLLER_NAME,
    EVENT_COMPONENT,
    setup_networkpolicy_controller,
)

__all__ = [
    "CONTROLLER_NAME",
    "EVENT_COMPONENT",
    "NetworkPolicyReconciler",
    "setup_networkpolicy_controller",
]
