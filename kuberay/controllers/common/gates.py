"""The feature-gate lookup the builders use (names and defaults live in
:mod:`kuberay.featuregates.kuberay_gates`).

Builders receive the gates as a plain ``Mapping[str, bool]``; a gate missing from the mapping
takes KubeRay v1.7's default (``pkg/features/features.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from kuberay.api.v1.gates import gate_enabled
from kuberay.featuregates.kuberay_gates import (
    GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE,
    KUBERAY_FEATURES,
    KUBERNETES_WAS,
    RAY_CLUSTER_HISTORY_SERVER,
    RAY_CLUSTER_MTLS,
    RAY_CLUSTER_NETWORK_POLICY,
    RAY_CLUSTER_STATUS_CONDITIONS,
    RAY_CRON_JOB,
    RAY_JOB_DELETION_POLICY,
    RAY_MULTI_HOST_INDEXING,
    RAY_SERVICE_INCREMENTAL_UPGRADE,
    SIDECAR_SUBMITTER_RESTART,
)

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

KUBERAY_FEATURE_DEFAULTS: Final[Mapping[str, bool]] = MappingProxyType(
    {name: spec.default for name, spec in KUBERAY_FEATURES.items()}
)


def feature_enabled(features: Mapping[str, bool] | None, name: str) -> bool:
    """Whether gate ``name`` is on (missing gates fall back to KubeRay's default)."""
    return gate_enabled(features, name)
