"""Identity of the ray.io/v1 API and the constants its defaulting and validation use."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from kuberay.featuregates import kuberay_gates as _features

GROUP: Final = "ray.io"
VERSION: Final = "v1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
#: KubeRay still serves these kinds at ``ray.io/v1alpha1`` (deprecated, not stored).
DEPRECATED_VERSION: Final = "v1alpha1"

KIND_RAYCLUSTER: Final = "RayCluster"
KIND_RAYJOB: Final = "RayJob"
KIND_RAYSERVICE: Final = "RayService"
KIND_RAYCRONJOB: Final = "RayCronJob"
KINDS: Final = (KIND_RAYCLUSTER, KIND_RAYJOB, KIND_RAYSERVICE, KIND_RAYCRONJOB)

PLURAL_RAYCLUSTERS: Final = "rayclusters"
PLURAL_RAYJOBS: Final = "rayjobs"
PLURAL_RAYSERVICES: Final = "rayservices"
PLURAL_RAYCRONJOBS: Final = "raycronjobs"

#: kind -> plural resource name.
PLURALS: Final[Mapping[str, str]] = MappingProxyType(
    {
        KIND_RAYCLUSTER: PLURAL_RAYCLUSTERS,
        KIND_RAYJOB: PLURAL_RAYJOBS,
        KIND_RAYSERVICE: PLURAL_RAYSERVICES,
        KIND_RAYCRONJOB: PLURAL_RAYCRONJOBS,
    }
)
#: kind -> singular resource name.
SINGULARS: Final[Mapping[str, str]] = MappingProxyType({k: k.lower() for k in KINDS})

MAX_INT32: Final = 2**31 - 1

# --- name length limits (KubeRay utils/constant.go) ---
#: 63 - len("-serve-svc"): the serve Service name must stay a DNS label.
MAX_RAYCLUSTER_NAME_LENGTH: Final = 53
#: RayJob/RayService clusters are named ``<name>-<5 random chars>``.
MAX_RAYJOB_NAME_LENGTH: Final = MAX_RAYCLUSTER_NAME_LENGTH - 6
MAX_RAYSERVICE_NAME_LENGTH: Final = MAX_RAYCLUSTER_NAME_LENGTH - 6
#: RayCronJob children are named ``<name>-<unix minutes>`` (up to 11 chars of suffix).
MAX_RAYCRONJOB_NAME_LENGTH: Final = MAX_RAYJOB_NAME_LENGTH - 11

# --- managedBy ---
KUBERAY_CONTROLLER: Final = "ray.io/kuberay-operator"
MULTIKUEUE_CONTROLLER: Final = "kueue.x-k8s.io/multikueue"
MANAGED_BY_VALUES: Final = (KUBERAY_CONTROLLER, MULTIKUEUE_CONTROLLER)

# --- label / annotation keys consulted by defaulting and validation ---
RAY_CLUSTER_LABEL_KEY: Final = "ray.io/cluster"
RAY_JOB_CLUSTER_SELECTOR_KEY: Final = "ray.io/cluster"
RAY_ORIGINATED_FROM_CRD_LABEL_KEY: Final = "ray.io/originated-from-crd"
RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: Final = "ray.io/originated-from-cr-name"
RAY_FT_ENABLED_ANNOTATION_KEY: Final = "ray.io/ft-enabled"
RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY: Final = "ray.io/external-storage-namespace"
RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION: Final = "ray.io/initializing-timeout"

# --- environment variables / names the validation rules look at ---
RAY_REDIS_ADDRESS: Final = "RAY_REDIS_ADDRESS"
REDIS_PASSWORD: Final = "REDIS_PASSWORD"
REDIS_USERNAME: Final = "REDIS_USERNAME"
RAY_ENABLE_AUTOSCALER_V2: Final = "RAY_enable_autoscaler_v2"
KUBERAY_GEN_AUTOSCALER_START_CMD: Final = "KUBERAY_GEN_AUTOSCALER_START_CMD"
RAY_GCS_STORAGE: Final = "RAY_gcs_storage"
RAY_GCS_STORAGE_PATH: Final = "RAY_gcs_storage_path"
GCS_STORAGE_VOLUME_NAME: Final = "gcs-storage"
GCS_STORAGE_MOUNT_PATH: Final = "/data/gcs"
GCS_STORAGE_PVC_SUFFIX: Final = "-gcs-pvc"
GCS_STORAGE_DEFAULT_SIZE: Final = "1Gi"
RAY_USE_TLS: Final = "RAY_USE_TLS"
RAY_TLS_SERVER_CERT: Final = "RAY_TLS_SERVER_CERT"
RAY_TLS_SERVER_KEY: Final = "RAY_TLS_SERVER_KEY"
RAY_TLS_CA_CERT: Final = "RAY_TLS_CA_CERT"
RAY_TLS_VOLUME_NAME: Final = "ray-tls"
RAY_TLS_CERT_MOUNT_PATH: Final = "/etc/ray/tls"
COLLECTOR_CONTAINER_NAME: Final = "ray-history-collector"

# --- feature gates (KubeRay pkg/features) ---
# Gate names and defaults have one home, kuberay.featuregates.kuberay_gates (below both api and
# controllers); these aliases keep the API layer's spelling.
GATE_RAYCLUSTER_STATUS_CONDITIONS: Final = _features.RAY_CLUSTER_STATUS_CONDITIONS
GATE_RAYJOB_DELETION_POLICY: Final = _features.RAY_JOB_DELETION_POLICY
GATE_RAY_MULTI_HOST_INDEXING: Final = _features.RAY_MULTI_HOST_INDEXING
GATE_RAYSERVICE_INCREMENTAL_UPGRADE: Final = _features.RAY_SERVICE_INCREMENTAL_UPGRADE
GATE_RAYCRONJOB: Final = _features.RAY_CRON_JOB
GATE_SIDECAR_SUBMITTER_RESTART: Final = _features.SIDECAR_SUBMITTER_RESTART
GATE_RAYCLUSTER_NETWORK_POLICY: Final = _features.RAY_CLUSTER_NETWORK_POLICY
GATE_GCS_FT_EMBEDDED_STORAGE: Final = _features.GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE
GATE_RAYCLUSTER_MTLS: Final = _features.RAY_CLUSTER_MTLS
GATE_RAYCLUSTER_HISTORY_SERVER: Final = _features.RAY_CLUSTER_HISTORY_SERVER
GATE_KUBERNETES_WAS: Final = _features.KUBERNETES_WAS

DEFAULT_FEATURE_GATES: Final[Mapping[str, bool]] = MappingProxyType(
    {name: spec.default for name, spec in _features.KUBERAY_FEATURES.items()}
)
