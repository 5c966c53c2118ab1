"""Names only the controllers use: the operator's own environment switches (read by the
caller, passed in ``BuildOptions``), internal thresholds and defaults.

Everything observable on the objects KubeRay creates or reads back (label and annotation keys,
env var names on Ray containers, ports, names) is in :mod:`kuberay.api.v1.constants`.
"""

from __future__ import annotations

from typing import Final

#: What upstream KubeRay (snapshot used as the reference) stamps.
UPSTREAM_KUBERAY_VERSION: Final = "nightly"

#: The Ray container's index in a Ray pod's containers.
RAY_CONTAINER_INDEX: Final = 0

# --- operator environment switches (read by the caller, passed in BuildOptions) ---
ENABLE_INIT_CONTAINER_INJECTION: Final = "ENABLE_INIT_CONTAINER_INJECTION"
ENABLE_PROBES_INJECTION: Final = "ENABLE_PROBES_INJECTION"
ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE: Final = "ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE"
CLUSTER_DOMAIN_ENV_KEY: Final = "CLUSTER_DOMAIN"
USE_INGRESS_ON_OPENSHIFT: Final = "USE_INGRESS_ON_OPENSHIFT"
RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV: Final = "RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV"
ENABLE_GCS_FT_REDIS_CLEANUP: Final = "ENABLE_GCS_FT_REDIS_CLEANUP"
ENABLE_RANDOM_POD_DELETE: Final = "ENABLE_RANDOM_POD_DELETE"
ENABLE_LOGIN_SHELL: Final = "ENABLE_LOGIN_SHELL"
ENABLE_DETERMINISTIC_HEAD_POD_NAME: Final = "ENABLE_DETERMINISTIC_HEAD_POD_NAME"
DEFAULT_DOMAIN_NAME: Final = "cluster.local"
LOCAL_HOST: Final = "127.0.0.1"

# --- thresholds and naming ---
#: First Ray version whose agent serves the unified ``/api/healthz`` endpoint (HTTP probes).
UNIFIED_HEALTH_CHECK_MIN_RAY_VERSION: Final = (2, 53, 0)
DASH_SYMBOL: Final = "-"
