"""Everything observable on the wire: the ray.io/v1 API's identity and KubeRay's label and
annotation keys, env var names, ports, container, volume and finalizer names.

Each value is defined here once, exactly as KubeRay v1.7 spells it
(``ray-operator/controllers/ray/utils/constant.go`` and ``common/*.go``); the defaulting,
validation and the controllers' builders all read it from here. Names only the controllers use
(the operator's own environment switches, internal thresholds) live in
``kuberay.controllers.common.constants``.
"""

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
#: The field manager of the operator's writes (``metadata.managedFields``).
FIELD_MANAGER: Final = "kuberay-operator"
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
#: ``spec.managedBy`` of objects this operator reconciles (absent means the same).
KUBERAY_CONTROLLER: Final = "ray.io/kuberay-operator"
MULTIKUEUE_CONTROLLER: Final = "kueue.x-k8s.io/multikueue"
MANAGED_BY_VALUES: Final = (KUBERAY_CONTROLLER, MULTIKUEUE_CONTROLLER)

# --- label / annotation keys consulted by defaulting and validation ---
RAY_CLUSTER_LABEL_KEY: Final = "ray.io/cluster"
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
GATE_NODE_LABEL_DELIVERY: Final = _features.NODE_LABEL_DELIVERY

DEFAULT_FEATURE_GATES: Final[Mapping[str, bool]] = MappingProxyType(
    {name: spec.default for name, spec in _features.KUBERAY_FEATURES.items()}
)

# ===== the objects the controllers build (KubeRay's utils/constant.go) =====

# --- version ---
#: The version this operator stamps on head pods (``ray.io/kuberay-version``) and in
#: ``RAY_USAGE_STATS_EXTRA_TAGS``: the one deliberate deviation from KubeRay, whose unreleased
#: build stamps ``"nightly"``. When we adopt a cluster whose pods KubeRay created, the "operator
#: version changed" path is taken (the head pod's recreate-hash annotation is rewritten instead
#: of all pods being recreated), exactly as when KubeRay itself is upgraded. The builders take
#: the version from ``BuildOptions``, so callers may override it.
KUBERAY_VERSION: Final = "v1.7.0-python"

# --- node types (RayNodeType) ---
HEAD_NODE: Final = "head"
WORKER_NODE: Final = "worker"
REDIS_CLEANUP_NODE: Final = "redis-cleanup"

# --- label keys ---
RAY_NODE_TYPE_LABEL_KEY: Final = "ray.io/node-type"
RAY_NODE_GROUP_LABEL_KEY: Final = "ray.io/group"
RAY_NODE_LABEL_KEY: Final = "ray.io/is-ray-node"
RAY_ID_LABEL_KEY: Final = "ray.io/identifier"
RAY_CLUSTER_SERVING_SERVICE_LABEL_KEY: Final = "ray.io/serve"
RAY_CLUSTER_HEADLESS_SERVICE_LABEL_KEY: Final = "ray.io/headless-worker-svc"
RAY_JOB_SUBMISSION_MODE_LABEL_KEY: Final = "ray.io/job-submission-mode"
RAY_CRONJOB_NAME_LABEL_KEY: Final = "ray.io/cronjob-name"
RAY_WORKER_REPLICA_NAME_KEY: Final = "ray.io/worker-group-replica-name"
RAY_WORKER_REPLICA_INDEX_KEY: Final = "ray.io/worker-group-replica-index"
RAY_HOST_INDEX_KEY: Final = "ray.io/replica-host-index"
RAY_PRIORITY_CLASS_NAME_LABEL_KEY: Final = "ray.io/priority-class-name"
RAY_GANG_SCHEDULING_ENABLED_LABEL_KEY: Final = "ray.io/gang-scheduling-enabled"
KUBERNETES_APPLICATION_NAME_LABEL_KEY: Final = "app.kubernetes.io/name"
KUBERNETES_CREATED_BY_LABEL_KEY: Final = "app.kubernetes.io/created-by"

# --- label values ---
RAY_NODE_LABEL_VALUE: Final = "yes"
RAY_NODE_HEAD_GROUP_LABEL_VALUE: Final = "headgroup"
RAY_NODE_SUBMITTER_GROUP_LABEL_VALUE: Final = "submittergroup"
APPLICATION_NAME: Final = "kuberay"
COMPONENT_NAME: Final = "kuberay-operator"
ENABLE_RAY_CLUSTER_SERVING_SERVICE_TRUE: Final = "true"
ENABLE_RAY_CLUSTER_SERVING_SERVICE_FALSE: Final = "false"

# --- annotation keys ---
HASH_WITHOUT_REPLICAS_AND_WORKERS_TO_DELETE_KEY: Final = (
    "ray.io/hash-without-replicas-and-workers-to-delete"
)
UPGRADE_STRATEGY_RECREATE_HASH_KEY: Final = "ray.io/upgrade-strategy-recreate-hash"
NUM_WORKER_GROUPS_KEY: Final = "ray.io/num-worker-groups"
KUBERAY_VERSION_ANNOTATION_KEY: Final = "ray.io/kuberay-version"
RAY_CLUSTER_GCS_FT_DELETION_TIMEOUT_ANNOTATION: Final = "ray.io/gcs-ft-deletion-timeout"
RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY: Final = "ray.io/overwrite-container-cmd"
ENABLE_SERVE_SERVICE_KEY: Final = "ray.io/enable-serve-service"
ENABLE_SERVE_SERVICE_TRUE: Final = "true"
DISABLE_PROVISIONED_HEAD_RESTART_ANNOTATION_KEY: Final = "ray.io/disable-provisioned-head-restart"
RAY_CRONJOB_TIMESTAMP_ANNOTATION_KEY: Final = "ray.io/cronjob-scheduled-timestamp"
INGRESS_CLASS_ANNOTATION_KEY: Final = "kubernetes.io/ingress.class"
#: This operator's own: a RayService's deadline for a zero-downtime upgrade (a Go duration or
#: integer seconds), after which the upgrade is abandoned.
RAY_SERVICE_UPGRADE_TIMEOUT_ANNOTATION: Final = "ray.io/upgrade-timeout"
#: This operator's own (KubeRay stamps no such thing): on every pod it creates, the hash of the
#: pod's group template, so the status can name pods that run an older one
#: (``kuberay.controllers.raycluster.templates``).
POD_TEMPLATE_HASH_KEY: Final = "ray.io/pod-template-hash"

# --- node label delivery (KubeRay v1.8, gate NodeLabelDelivery) ---
#: The env var the pods webhook adds to a labelRefs worker's Ray container: a downward API
#: reference to :data:`RAY_NODE_LABELS_ANNOTATION_KEY`, the JSON of its Ray node labels.
RAY_NODE_LABELS_JSON: Final = "RAY_NODE_LABELS_JSON"
#: The Pod annotation the pods/binding webhook writes at bind time (KubeRay's
#: ``RayNodeLabelsAnnotationKey``; its value was not seen upstream, an earlier revision
#: used ``ray.io/topology-labels``).
RAY_NODE_LABELS_ANNOTATION_KEY: Final = "ray.io/node-labels"
#: Where the wrapped ``ray start`` writes that JSON for ``--labels-file``.
RAY_NODE_LABELS_FILE_PATH: Final = "/tmp/ray-labels.yaml"
#: The only ``labelRefs[].valueFrom.nodeRef.fieldPath`` form: ``metadata.labels['<key>']``.
NODE_LABEL_FIELD_PATH_PREFIX: Final = "metadata.labels['"
#: Ray's ``ray start --labels-file`` exists since this version.
NODE_LABEL_DELIVERY_MIN_RAY_VERSION: Final = "2.45.0"

# --- finalizers ---
GCS_FAULT_TOLERANCE_REDIS_CLEANUP_FINALIZER: Final = "ray.io/gcs-ft-redis-cleanup-finalizer"
RAY_JOB_STOP_JOB_FINALIZER: Final = "ray.io/rayjob-finalizer"
RAY_SERVICE_FINALIZER: Final = "ray.io/rayservice-finalizer"

# --- ports ---
DEFAULT_CLIENT_PORT: Final = 10001
DEFAULT_GCS_SERVER_PORT: Final = 6379
DEFAULT_DASHBOARD_PORT: Final = 8265
DEFAULT_METRICS_PORT: Final = 8080
DEFAULT_DASHBOARD_AGENT_LISTEN_PORT: Final = 52365
DEFAULT_SERVING_PORT: Final = 8000
CLIENT_PORT_NAME: Final = "client"
GCS_SERVER_PORT_NAME: Final = "gcs-server"
DASHBOARD_PORT_NAME: Final = "dashboard"
METRICS_PORT_NAME: Final = "metrics"
SERVING_PORT_NAME: Final = "serve"
GATEWAY_LISTENER_PORT_NAME: Final = "http"
DEFAULT_GATEWAY_LISTENER_PORT: Final = 80
DEFAULT_SERVICE_APP_PROTOCOL: Final = "tcp"
#: Port the history-server collector sidecar receives Ray events on.
DEFAULT_EVENTS_PORT: Final = "8084"
#: The header carrying a Ray auth token (``Bearer <token>``) to the Ray dashboard: sent by the
#: operator's dashboard client and the history server, relayed by the API server (KubeRay
#: ``utils.RayAuthHeader``).
RAY_AUTH_HEADER: Final = "x-ray-authorization"

# --- containers and volumes ---
AUTOSCALER_CONTAINER_NAME: Final = "autoscaler"
RAY_HEAD_CONTAINER: Final = "ray-head"
SUBMITTER_CONTAINER_NAME: Final = "ray-job-submitter"
WAIT_GCS_READY_INIT_CONTAINER_NAME: Final = "wait-gcs-ready"
WAIT_FOR_TLS_IP_SAN_INIT_CONTAINER_NAME: Final = "wait-for-tls-ip-san"
SHARED_MEMORY_VOLUME_NAME: Final = "shared-mem"
SHARED_MEMORY_VOLUME_MOUNT_PATH: Final = "/dev/shm"
RAY_LOG_VOLUME_NAME: Final = "ray-logs"
RAY_LOG_VOLUME_MOUNT_PATH: Final = "/tmp/ray"
GCS_STORAGE_ROCKSDB_VALUE: Final = "rocksdb"
RAY_TOKEN_VOLUME_NAME: Final = "ray-token"
RAY_TOKEN_MOUNT_PATH: Final = "/var/run/secrets/ray.io/serviceaccount"
RAY_AUTH_TOKEN_SECRET_KEY: Final = "auth_token"

# --- rayStartParams keys with special meaning ---
PLASMA_DIRECTORY_PARAM_KEY: Final = "plasma-directory"
OBJECT_STORE_MEMORY_KEY: Final = "object-store-memory"

# --- accelerators ---
NEURON_CORE_CONTAINER_RESOURCE_NAME: Final = "aws.amazon.com/neuroncore"
NEURON_CORE_RAY_RESOURCE_NAME: Final = "neuron_cores"
TPU_CONTAINER_RESOURCE_NAME: Final = "google.com/tpu"
TPU_RAY_RESOURCE_NAME: Final = "TPU"
#: Huawei Ascend NPUs (KubeRay v1.8, #5071): a lowercased container resource key with this prefix
#: (except the ``-memory`` / ``-core`` slices device plugins such as HAMi expose beside it) or
#: equal to :data:`NPU_CONTAINER_RESOURCE_NAME` is an NPU, advertised to Ray as ``NPU``.
ASCEND_CONTAINER_RESOURCE_PREFIX: Final = "huawei.com/ascend"
ASCEND_NON_DEVICE_SUFFIXES: Final = ("-memory", "-core")
NPU_CONTAINER_RESOURCE_NAME: Final = "huawei.com/npu"
NPU_RAY_RESOURCE_NAME: Final = "NPU"

# --- env vars set on Ray containers ---
RAY_CLUSTER_NAME: Final = "RAY_CLUSTER_NAME"
RAY_CLUSTER_NAMESPACE: Final = "RAY_CLUSTER_NAMESPACE"
RAY_IP: Final = "RAY_IP"
FQ_RAY_IP: Final = "FQ_RAY_IP"
RAY_PORT: Final = "RAY_PORT"
RAY_ADDRESS: Final = "RAY_ADDRESS"
RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE: Final = "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE"
RAY_EXTERNAL_STORAGE_NS: Final = "RAY_external_storage_namespace"
RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S: Final = "RAY_gcs_rpc_server_reconnect_timeout_s"
RAY_TIMEOUT_MS_TASK_WAIT_FOR_DEATH_INFO: Final = "RAY_timeout_ms_task_wait_for_death_info"
RAY_GCS_SERVER_REQUEST_TIMEOUT_SECONDS: Final = "RAY_gcs_server_request_timeout_seconds"
RAY_SERVE_KV_TIMEOUT_S: Final = "RAY_SERVE_KV_TIMEOUT_S"
RAY_USAGE_STATS_KUBERAY_IN_USE: Final = "RAY_USAGE_STATS_KUBERAY_IN_USE"
RAY_USAGE_STATS_EXTRA_TAGS: Final = "RAY_USAGE_STATS_EXTRA_TAGS"
KUBERAY_GEN_RAY_START_CMD: Final = "KUBERAY_GEN_RAY_START_CMD"
RAY_START_ULIMIT_OPEN_FILES: Final = "RAY_START_ULIMIT_OPEN_FILES"
RAY_DASHBOARD_ADDRESS: Final = "RAY_DASHBOARD_ADDRESS"
RAY_JOB_SUBMISSION_ID: Final = "RAY_JOB_SUBMISSION_ID"
RAY_CLOUD_INSTANCE_ID: Final = "RAY_CLOUD_INSTANCE_ID"
RAY_NODE_TYPE_NAME: Final = "RAY_NODE_TYPE_NAME"
RAY_HEAD_POD_NAME: Final = "RAY_HEAD_POD_NAME"
KUBERAY_CRD_VER: Final = "KUBERAY_CRD_VER"
RAY_AUTH_MODE_ENV_VAR: Final = "RAY_AUTH_MODE"
RAY_AUTH_TOKEN_ENV_VAR: Final = "RAY_AUTH_TOKEN"
RAY_ENABLE_K8S_TOKEN_AUTH_ENV_VAR: Final = "RAY_ENABLE_K8S_TOKEN_AUTH"
RAY_REDIS_DB_CONNECT_RETRIES: Final = "RAY_redis_db_connect_retries"
RAY_REDIS_DB_CONNECT_WAIT_MILLISECONDS: Final = "RAY_redis_db_connect_wait_milliseconds"
# history-server collector
POD_IP: Final = "POD_IP"
RAY_ROLE: Final = "RAY_ROLE"
OWNER_KIND: Final = "OWNER_KIND"
OWNER_NAME: Final = "OWNER_NAME"
EVENTS_PORT: Final = "EVENTS_PORT"
STORAGE_BACKEND: Final = "STORAGE_BACKEND"
RAY_ENABLE_RAY_EVENT: Final = "RAY_enable_ray_event"
RAY_ENABLE_CORE_WORKER_RAY_EVENT_TO_AGGREGATOR: Final = (
    "RAY_enable_core_worker_ray_event_to_aggregator"
)
RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR: Final = (
    "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR"
)
RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES: Final = (
    "RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES"
)
RAY_DASHBOARD_AGGREGATOR_AGENT_PUBLISHER_HTTP_ENDPOINT_EXPOSABLE_EVENT_TYPES: Final = (
    "RAY_DASHBOARD_AGGREGATOR_AGENT_PUBLISHER_HTTP_ENDPOINT_EXPOSABLE_EVENT_TYPES"
)
DEFAULT_RAY_EXPOSABLE_EVENT_TYPES: Final = ",".join(
    (
        "TASK_DEFINITION_EVENT",
        "TASK_LIFECYCLE_EVENT",
        "ACTOR_TASK_DEFINITION_EVENT",
        "TASK_PROFILE_EVENT",
        "DRIVER_JOB_DEFINITION_EVENT",
        "DRIVER_JOB_LIFECYCLE_EVENT",
        "ACTOR_DEFINITION_EVENT",
        "ACTOR_LIFECYCLE_EVENT",
        "NODE_DEFINITION_EVENT",
        "NODE_LIFECYCLE_EVENT",
    )
)
DEFAULT_COLLECTOR_DASHBOARD_ADDRESS: Final = "http://localhost:8265"
DEFAULT_EVENTS_EXPORT_ADDR: Final = "http://localhost:8084/v1/events"

# --- ray core defaults ---
DEFAULT_WORKER_RAY_GCS_RECONNECT_TIMEOUT_S: Final = "600"

# --- probes ---
DEFAULT_READINESS_PROBE_INITIAL_DELAY_SECONDS: Final = 10
DEFAULT_READINESS_PROBE_TIMEOUT_SECONDS: Final = 2
DEFAULT_HEAD_READINESS_PROBE_TIMEOUT_SECONDS: Final = 5
DEFAULT_READINESS_PROBE_PERIOD_SECONDS: Final = 5
DEFAULT_READINESS_PROBE_SUCCESS_THRESHOLD: Final = 1
DEFAULT_READINESS_PROBE_FAILURE_THRESHOLD: Final = 10
SERVE_READINESS_PROBE_FAILURE_THRESHOLD: Final = 1
DEFAULT_LIVENESS_PROBE_INITIAL_DELAY_SECONDS: Final = 30
DEFAULT_LIVENESS_PROBE_TIMEOUT_SECONDS: Final = 2
DEFAULT_HEAD_LIVENESS_PROBE_TIMEOUT_SECONDS: Final = 5
DEFAULT_LIVENESS_PROBE_PERIOD_SECONDS: Final = 5
DEFAULT_LIVENESS_PROBE_SUCCESS_THRESHOLD: Final = 1
DEFAULT_LIVENESS_PROBE_FAILURE_THRESHOLD: Final = 120
RAY_AGENT_RAYLET_HEALTH_PATH: Final = "api/local_raylet_healthz"
RAY_DASHBOARD_GCS_HEALTH_PATH: Final = "api/gcs_healthz"
RAY_SERVE_PROXY_HEALTH_PATH: Final = "-/healthz"
RAY_NODE_HEALTH_PATH: Final = "/api/healthz"

# --- naming ---
HEADLESS_SERVICE_SUFFIX: Final = "headless"
SERVE_NAME: Final = "serve"

# --- misc ---
AUTH_MODE_TOKEN: Final = "token"
AUTH_MODE_DISABLED: Final = "disabled"
AUTOSCALER_VERSION_V1: Final = "v1"
AUTOSCALER_VERSION_V2: Final = "v2"
GCS_FT_BACKEND_REDIS: Final = "redis"
GCS_FT_BACKEND_ROCKSDB: Final = "rocksdb"
GCS_STORAGE_DELETION_POLICY_RETAIN: Final = "Retain"
UPGRADE_STRATEGY_RECREATE: Final = "Recreate"

# --- KubeRay's API server: compute templates (apiserver/pkg/util/cluster.go, config.go) ---
#: Label of every compute-template ConfigMap, with the value :data:`COMPUTE_TEMPLATE_CONFIG_TYPE`.
CONFIG_TYPE_LABEL_KEY: Final = "ray.io/config-type"
COMPUTE_TEMPLATE_CONFIG_TYPE: Final = "compute-template"
#: A template's name: a label of its ConfigMap and the annotation set on each templated
#: group's Pod template.
COMPUTE_TEMPLATE_KEY: Final = "ray.io/compute-template"
