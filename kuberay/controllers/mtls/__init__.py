"""The mTLS controller (KubeRay v1.7 parity, gate ``RayClusterMTLS``, needs cert-manager)."""

from kuberay.controllers.mtls.reconciler import MTLSReconciler, MTLSSettings
from kuberay.controllers.mtls.setup import (
    CONTROLLER_NAME,
    EVENT_COMPONENT,
    cert_manager_available,
    setup_mtls_controller,
)

__all__ = [
    "CONTROLLER_NAME",
    "EVENT_COMPONENT",
    "MTLSReconciler",
    "MTLSSettings",
    "cert_manager_available",
    "setup_mtls_controller",
]
