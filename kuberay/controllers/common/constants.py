"""KubeRay's wire-level constants: label/annotation keys, env var names, ports, names.

Every string here is observable on objects KubeRay creates (or reads back from them), so the
values are exactly KubeRay v1.7's (``ray-operator/controllers/ray/utils/constant.go`` and
``common/*.go``).

``KUBERAY_VERSION`` is the one deliberate deviation: upstream stamps ``"nightly"`` (its
unreleased build string). We stamp our own string on head pods (``ray.io/kuberay-version``) and
in ``RAY_USAGE_STATS_EXTRA_TAGS`` so that, when we adopt a cluster whose pods were created by
KubeRay, the "operator version changed" path is taken (the head pod's recreate-hash annotation is
rewritten instead of all pods being recreated), exactly as when KubeRay itself is upgraded. The
builders take the version from :class:`~.options.BuildOptions`, so callers may override it.
"""

from __future__ import annotations

from typing import Final

# ----- version ---------------------------------------------------------------------------------
#: Version string this operator stamps (see module docstring). Upstream uses "nightly".
KUBERAY_VERSION: Final = "v1.7.0-python"
#: What upstream KubeRay (snapshot used as the reference) stamps.
UPSTREAM_KUBERAY_VERSION: Final = "nightly"

# ----- API identity ----------------------------------------------------------------------------
RAY_API_VERSION: Final = "ray.io/v1"
RAY_CLUSTER_KIND: Final = "RayCluster"
RAY_JOB_KIND: Final = "RayJob"
RAY_SERVICE_KIND: Final = "RayService"

# ----- node types (RayNodeType) ------------------------------------------------------------------
HEAD_NODE: Final = "head"
WORKER_NODE: Final = "worker"
REDIS_CLEANUP_NODE: Final = "redis-cleanup"

# ----- CRD types (utils.CRDType, also the value of ray.io/originated-from-crd) -------------------
RAY_CLUSTER_CRD: Final = "RayCluster"
RAY_JOB_CRD: Final = "RayJob"
RAY_SERVICE_CRD: Final = "RayService"

# ----- label keys ------------------------------------------------------------------------------
RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: Final = "ray.io/originated-from-cr-name"
RAY_ORIGINATED_FROM_CRD_LABEL_KEY: Final = "ray.io/originated-from-crd"
RAY_CLUSTER_LABEL_KEY: Final = "ray.io/cluster"
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

# ----- label values ----------------------------------------------------------------------------
RAY_NODE_LABEL_VALUE: Final = "yes"
RAY_NODE_HEAD_GROUP_LABEL_VALUE: Final = "headgroup"
RAY_NODE_SUBMITTER_GROUP_LABEL_VALUE: Final = "submittergroup"
APPLICATION_NAME: Final = "kuberay"
COMPONENT_NAME: Final = "kuberay-operator"
ENABLE_RAY_CLUSTER_SERVING_SERVICE_TRUE: Final = "true"
ENABLE_RAY_CLUSTER_SERVING_SERVICE_FALSE: Final = "false"

# ----- annotation keys -------------------------------------------------------------------------
HASH_WITHOUT_REPLICAS_AND_WORKERS_TO_DELETE_KEY: Final = (
    "ray.io/hash-without-replicas-and-workers-to-delete"
)
UPGRADE_STRATEGY_RECREATE_HASH_KEY: Final = "ray.io/upgrade-strategy-recreate-hash"
NUM_WORKER_GROUPS_KEY: Final = "ray.io/num-worker-groups"
KUBERAY_VERSION_ANNOTATION_KEY: Final = "ray.io/kuberay-version"
RAY_FT_ENABLED_ANNOTATION_KEY: Final = "ray.io/ft-enabled"
RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY: Final = "ray.io/external-storage-namespace"
RAY_CLUSTER_GCS_FT_DELETION_TIMEOUT_ANNOTATION: Final = "ray.io/gcs-ft-deletion-timeout"
RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY: Final = "ray.io/overwrite-container-cmd"
RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION: Final = "ray.io/initializing-timeout"
ENABLE_SERVE_SERVICE_KEY: Final = "ray.io/enable-serve-service"
ENABLE_SERVE_SERVICE_TRUE: Final = "true"
DISABLE_PROVISIONED_HEAD_RESTART_ANNOTATION_KEY: Final = "ray.io/disable-provisioned-head-restart"
RAY_CRONJOB_TIMESTAMP_ANNOTATION_KEY: Final = "ray.io/cronjob-scheduled-timestamp"
INGRESS_CLASS_ANNOTATION_KEY: Final = "kubernetes.io/ingress.class"

# ----- finalizers ------------------------------------------------------------------------------
GCS_FAULT_TOLERANCE_REDIS_CLEANUP_FINALIZER: Final = "ray.io/gcs-ft-redis-cleanup-finalizer"
RAY_JOB_STOP_JOB_FINALIZER: Final = "ray.io/rayjob-finalizer"
RAY_SERVICE_FINALIZER: Final = "ray.io/rayservice-finalizer"

# ----- ports -----------------------------------------------------------------------------------
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

# ----- containers and volumes ------------------------------------------------------------------
RAY_CONTAINER_INDEX: Final = 0
AUTOSCALER_CONTAINER_NAME: Final = "autoscaler"
RAY_HEAD_CONTAINER: Final = "ray-head"
SUBMITTER_CONTAINER_NAME: Final = "ray-job-submitter"
COLLECTOR_CONTAINER_NAME: Final = "ray-history-collector"
WAIT_GCS_READY_INIT_CONTAINER_NAME: Final = "wait-gcs-ready"
WAIT_FOR_TLS_IP_SAN_INIT_CONTAINER_NAME: Final = "wait-for-tls-ip-san"
SHARED_MEMORY_VOLUME_NAME: Final = "shared-mem"
SHARED_MEMORY_VOLUME_MOUNT_PATH: Final = "/dev/shm"
RAY_LOG_VOLUME_NAME: Final = "ray-logs"
RAY_LOG_VOLUME_MOUNT_PATH: Final = "/tmp/ray"
GCS_STORAGE_VOLUME_NAME: Final = "gcs-storage"
GCS_STORAGE_MOUNT_PATH: Final = "/data/gcs"
GCS_STORAGE_ROCKSDB_VALUE: Final = "rocksdb"
GCS_STORAGE_PVC_SUFFIX: Final = "-gcs-pvc"
GCS_STORAGE_DEFAULT_SIZE: Final = "1Gi"
RAY_TLS_VOLUME_NAME: Final = "ray-tls"
RAY_TLS_CERT_MOUNT_PATH: Final = "/etc/ray/tls"
RAY_TOKEN_VOLUME_NAME: Final = "ray-token"
RAY_TOKEN_MOUNT_PATH: Final = "/var/run/secrets/ray.io/serviceaccount"
RAY_AUTH_TOKEN_SECRET_KEY: Final = "auth_token"

# ----- rayStartParams keys with special meaning -----------------------------------------------
PLASMA_DIRECTORY_PARAM_KEY: Final = "plasma-directory"
OBJECT_STORE_MEMORY_KEY: Final = "object-store-memory"

# ----- accelerators ----------------------------------------------------------------------------
NEURON_CORE_CONTAINER_RESOURCE_NAME: Final = "aws.amazon.com/neuroncore"
NEURON_CORE_RAY_RESOURCE_NAME: Final = "neuron_cores"
TPU_CONTAINER_RESOURCE_NAME: Final = "google.com/tpu"
TPU_RAY_RESOURCE_NAME: Final = "TPU"

# ----- env vars set on Ray containers ----------------------------------------------------------
RAY_CLUSTER_NAME: Final = "RAY_CLUSTER_NAME"
RAY_CLUSTER_NAMESPACE: Final = "RAY_CLUSTER_NAMESPACE"
RAY_IP: Final = "RAY_IP"
FQ_RAY_IP: Final = "FQ_RAY_IP"
RAY_PORT: Final = "RAY_PORT"
RAY_ADDRESS: Final = "RAY_ADDRESS"
RAY_REDIS_ADDRESS: Final = "RAY_REDIS_ADDRESS"
REDIS_PASSWORD: Final = "REDIS_PASSWORD"
REDIS_USERNAME: Final = "REDIS_USERNAME"
RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE: Final = "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE"
RAY_EXTERNAL_STORAGE_NS: Final = "RAY_external_storage_namespace"
RAY_GCS_STORAGE: Final = "RAY_gcs_storage"
RAY_GCS_STORAGE_PATH: Final = "RAY_gcs_storage_path"
RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S: Final = "RAY_gcs_rpc_server_reconnect_timeout_s"
RAY_TIMEOUT_MS_TASK_WAIT_FOR_DEATH_INFO: Final = "RAY_timeout_ms_task_wait_for_death_info"
RAY_GCS_SERVER_REQUEST_TIMEOUT_SECONDS: Final = "RAY_gcs_server_request_timeout_seconds"
RAY_SERVE_KV_TIMEOUT_S: Final = "RAY_SERVE_KV_TIMEOUT_S"
RAY_USAGE_STATS_KUBERAY_IN_USE: Final = "RAY_USAGE_STATS_KUBERAY_IN_USE"
RAY_USAGE_STATS_EXTRA_TAGS: Final = "RAY_USAGE_STATS_EXTRA_TAGS"
KUBERAY_GEN_RAY_START_CMD: Final = "KUBERAY_GEN_RAY_START_CMD"
KUBERAY_GEN_AUTOSCALER_START_CMD: Final = "KUBERAY_GEN_AUTOSCALER_START_CMD"
RAY_START_ULIMIT_OPEN_FILES: Final = "RAY_START_ULIMIT_OPEN_FILES"
RAY_USE_TLS: Final = "RAY_USE_TLS"
RAY_TLS_SERVER_CERT: Final = "RAY_TLS_SERVER_CERT"
RAY_TLS_SERVER_KEY: Final = "RAY_TLS_SERVER_KEY"
RAY_TLS_CA_CERT: Final = "RAY_TLS_CA_CERT"
RAY_DASHBOARD_ADDRESS: Final = "RAY_DASHBOARD_ADDRESS"
RAY_JOB_SUBMISSION_ID: Final = "RAY_JOB_SUBMISSION_ID"
RAY_CLOUD_INSTANCE_ID: Final = "RAY_CLOUD_INSTANCE_ID"
RAY_NODE_TYPE_NAME: Final = "RAY_NODE_TYPE_NAME"
RAY_ENABLE_AUTOSCALER_V2: Final = "RAY_enable_autoscaler_v2"
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

# ----- operator environment switches (read by the caller, passed in BuildOptions) -------------
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
KUBERAY_GEN_RAY_START_CMD_ENV: Final = KUBERAY_GEN_RAY_START_CMD
DEFAULT_DOMAIN_NAME: Final = "cluster.local"
LOCAL_HOST: Final = "127.0.0.1"

# ----- ray core defaults -----------------------------------------------------------------------
DEFAULT_WORKER_RAY_GCS_RECONNECT_TIMEOUT_S: Final = "600"

# ----- probes ----------------------------------------------------------------------------------
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
#: First Ray version whose agent serves the unified ``/api/healthz`` endpoint (HTTP probes).
UNIFIED_HEALTH_CHECK_MIN_RAY_VERSION: Final = (2, 53, 0)

# ----- naming ----------------------------------------------------------------------------------
DASH_SYMBOL: Final = "-"
HEADLESS_SERVICE_SUFFIX: Final = "headless"
SERVE_NAME: Final = "serve"
MAX_RAY_CLUSTER_NAME_LENGTH: Final = 53

# ----- misc ------------------------------------------------------------------------------------
KUBERAY_CONTROLLER: Final = "ray.io/kuberay-operator"
AUTH_MODE_TOKEN: Final = "token"
AUTH_MODE_DISABLED: Final = "disabled"
AUTOSCALER_VERSION_V1: Final = "v1"
AUTOSCALER_VERSION_V2: Final = "v2"
GCS_FT_BACKEND_REDIS: Final = "redis"
GCS_FT_BACKEND_ROCKSDB: Final = "rocksdb"
GCS_STORAGE_DELETION_POLICY_RETAIN: Final = "Retain"
UPGRADE_STRATEGY_RECREATE: Final = "Recreate"
