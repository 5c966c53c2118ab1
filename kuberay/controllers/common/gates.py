"""KubeRay feature-gate names and defaults, and the lookup the builders use.

Builders receive the gates as a plain ``Mapping[str, bool]``; a gate missing from the mapping
takes KubeRay v1.7's default (``pkg/features/features.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = [
    "GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE",
    "KUBERAY_FEATURE_DEFAULTS",
    "KUBERNETES_WAS",
    "RAY_CLUSTER_HISTORY_SERVER",
    "RAY_CLUSTER_MTLS",
    "RAY_CLUSTER_NETWORK_POLICY",
    "RAY_CLUSTER_STATUS_CONDITIONS",
    "RAY_CRON_JOB",
    "RAY_JOB_DELETION_POLICY",
    "RAY_MULTI_HOST_INDEXING",
    "RAY_SERVICE_INCREMENTAL_UPGRADE",
    "SIDECAR_SUBMITTER_RESTART",
    "feature_enabled",
]

RAY_CLUSTER_STATUS_CONDITIONS: Final = "RayClusterStatusConditions"
RAY_JOB_DELETION_POLICY: Final = "RayJobDeletionPolicy"
RAY_MULTI_HOST_INDEXING: Final = "RayMultiHostIndexing"
RAY_SERVICE_INCREMENTAL_UPGRADE: Final = "RayServiceIncrementalUpgrade"
RAY_CRON_JOB: Final = "RayCronJob"
SIDECAR_SUBMITTER_RESTART: Final = "SidecarSubmitterRestart"
RAY_CLUSTER_NETWORK_POLICY: Final = "RayClusterNetworkPolicy"
GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE: Final = "GCSFaultToleranceEmbeddedStorage"
RAY_CLUSTER_MTLS: Final = "RayClusterMTLS"
RAY_CLUSTER_HISTORY_SERVER: Final = "RayClusterHistoryServer"
KUBERNETES_WAS: Final = "KubernetesWAS"

KUBERAY_FEATURE_DEFAULTS: Final[Mapping[str, bool]] = MappingProxyType(
    {
        RAY_CLUSTER_STATUS_CONDITIONS: True,
        RAY_JOB_DELETION_POLICY: True,
        RAY_MULTI_HOST_INDEXING: True,
        RAY_SERVICE_INCREMENTAL_UPGRADE: True,
        RAY_CRON_JOB: False,
        SIDECAR_SUBMITTER_RESTART: False,
        RAY_CLUSTER_NETWORK_POLICY: False,
        GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE: False,
        RAY_CLUSTER_MTLS: False,
        RAY_CLUSTER_HISTORY_SERVER: False,
        KUBERNETES_WAS: False,
    }
)


def feature_enabled(features: Mapping[str, bool] | None, name: str) -> bool:
    """Whether gate ``name`` is on (missing gates fall back to KubeRay's default)."""
    if features is not None and name in features:
        return bool(features[name])
    return KUBERAY_FEATURE_DEFAULTS.get(name, False)
