"""``spec.managedBy``: whether KubeRay or another controller reconciles a ray.io object.

Light on purpose (constants only): every reconciler checks it first, before anything loads
the typed API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1.constants import KUBERAY_CONTROLLER

__all__ = ["managed_elsewhere"]


def managed_elsewhere(obj: Mapping[str, Any]) -> str | None:
    """The controller a plain-dict RayCluster/RayJob/RayService's ``spec.managedBy`` names when
    that is not KubeRay (``ray.io/kuberay-operator``), else ``None`` (unset, null or empty
    means KubeRay). The reconcilers skip such objects: the one check they all share."""
    spec = obj.get("spec")
    managed_by = spec.get("managedBy") if isinstance(spec, Mapping) else None
    if managed_by and managed_by != KUBERAY_CONTROLLER:
        return str(managed_by)
    return None
