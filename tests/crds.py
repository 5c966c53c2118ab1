"""Re-export of :mod:`kuberay.testing.crds` (installing the ray.io CRDs), where tests import it."""

from kuberay.testing.crds import (
    CRD_API_VERSION,
    CRD_DIR,
    FIELD_MANAGER,
    crd_established,
    install_crds,
    load_crds,
)

__all__ = [
    "CRD_API_VERSION",
    "CRD_DIR",
    "FIELD_MANAGER",
    "crd_established",
    "install_crds",
    "load_crds",
]
