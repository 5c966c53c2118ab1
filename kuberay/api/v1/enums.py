"""String enumerations of the ray.io/v1 API.

All are :class:`enum.StrEnum`, so a member compares equal to its plain string value
(``JobSubmissionMode.K8S_JOB_MODE == "K8sJobMode"``). Fields whose CRD schema carries an
``enum`` are typed with the enum class; fields that KubeRay leaves open (status values,
``submissionMode``, RayService ``upgradeStrategy.type``) are typed ``str`` and the enum
class only provides the known values.
"""

from __future__ import annotations

from enum import StrEnum


# --- RayCluster -----------------------------------------------------------------------------
class RayClusterUpgradeType(StrEnum):
    """``spec.upgradeStrategy.type`` of a RayCluster (CRD enum)."""

    RECREATE = "Recreate"
    NONE = "None"


class AuthMode(StrEnum):
    """``spec.authOptions.mode`` (CRD enum). Auth is active only for ``token``."""

    DISABLED = "disabled"
    TOKEN = "token"


class GcsFaultToleranceBackend(StrEnum):
    """``spec.gcsFaultToleranceOptions.backend`` (CRD enum; empty means ``redis``)."""

    REDIS = "redis"
    ROCKSDB = "rocksdb"


class GCSStorageDeletionPolicy(StrEnum):
    """``gcsFaultToleranceOptions.storage.deletionPolicy`` (CRD enum)."""

    DELETE_WITH_CLUSTER = "DeleteWithCluster"
    RETAIN = "Retain"


class NetworkPolicyMode(StrEnum):
    """``spec.networkPolicy.mode`` (CRD enum, CRD default ``DenyAll``)."""

    DENY_ALL = "DenyAll"
    DENY_ALL_INGRESS = "DenyAllIngress"
    DENY_ALL_EGRESS = "DenyAllEgress"


class IngressPathType(StrEnum):
    """``headGroupSpec.ingressOptions.pathType`` (CRD enum; operator default Prefix)."""

    EXACT = "Exact"
    PREFIX = "Prefix"
    IMPLEMENTATION_SPECIFIC = "ImplementationSpecific"


class UpscalingMode(StrEnum):
    """``spec.autoscalerOptions.upscalingMode`` (CRD enum)."""

    DEFAULT = "Default"
    AGGRESSIVE = "Aggressive"
    CONSERVATIVE = "Conservative"


class AutoscalerVersion(StrEnum):
    """``spec.autoscalerOptions.version`` (CRD enum)."""

    V1 = "v1"
    V2 = "v2"


class ClusterState(StrEnum):
    """``status.state`` of a RayCluster (deprecated in favour of conditions; no CRD enum)."""

    READY = "ready"
    FAILED = "failed"  # deprecated, never set
    SUSPENDED = "suspended"


class RayClusterConditionType(StrEnum):
    """Condition types of ``RayCluster.status.conditions``."""

    PROVISIONED = "RayClusterProvisioned"
    HEAD_POD_READY = "HeadPodReady"
    REPLICA_FAILURE = "ReplicaFailure"
    SUSPENDING = "RayClusterSuspending"
    SUSPENDED = "RayClusterSuspended"


class RayClusterConditionReason(StrEnum):
    """Reasons used on RayCluster conditions."""

    ALL_POD_RUNNING_AND_READY_FIRST_TIME = "AllPodRunningAndReadyFirstTime"
    PODS_PROVISIONING = "RayClusterPodsProvisioning"
    HEAD_POD_NOT_FOUND = "HeadPodNotFound"
    HEAD_POD_RUNNING_AND_READY = "HeadPodRunningAndReady"
    UNKNOWN = "Unknown"
    FAILED_DELETE_ALL_PODS = "FailedDeleteAllPods"
    FAILED_DELETE_HEAD_POD = "FailedDeleteHeadPod"
    FAILED_CREATE_HEAD_POD = "FailedCreateHeadPod"
    FAILED_DELETE_WORKER_POD = "FailedDeleteWorkerPod"
    FAILED_CREATE_WORKER_POD = "FailedCreateWorkerPod"


class RayNodeType(StrEnum):
    """Value of the ``ray.io/node-type`` label."""

    HEAD = "head"
    WORKER = "worker"
    REDIS_CLEANUP = "redis-cleanup"


# --- RayJob ---------------------------------------------------------------------------------
class JobStatus(StrEnum):
    """Ray job status as reported by the dashboard (``status.jobStatus``)."""

    NEW = ""
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    STOPPED = "STOPPED"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


class JobDeploymentStatus(StrEnum):
    """RayJob lifecycle (``status.jobDeploymentStatus``)."""

    NEW = ""
    INITIALIZING = "Initializing"
    RUNNING = "Running"
    COMPLETE = "Complete"
    FAILED = "Failed"
    VALIDATION_FAILED = "ValidationFailed"
    SUSPENDING = "Suspending"
    SUSPENDED = "Suspended"
    RETRYING = "Retrying"
    WAITING = "Waiting"


class JobFailedReason(StrEnum):
    """``status.reason`` of a RayJob."""

    SUBMISSION_FAILED = "SubmissionFailed"
    DEADLINE_EXCEEDED = "DeadlineExceeded"
    PRE_RUNNING_DEADLINE_EXCEEDED = "PreRunningDeadlineExceeded"
    APP_FAILED = "AppFailed"
    JOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_EXCEEDED = (
        "JobDeploymentStatusTransitionGracePeriodExceeded"
    )
    JOB_STATUS_CHECK_TIMEOUT_EXCEEDED = "JobStatusCheckTimeoutExceeded"
    VALIDATION_FAILED = "ValidationFailed"


class JobSubmissionMode(StrEnum):
    """``spec.submissionMode`` (no CRD enum; CRD default ``K8sJobMode``)."""

    K8S_JOB_MODE = "K8sJobMode"
    HTTP_MODE = "HTTPMode"
    INTERACTIVE_MODE = "InteractiveMode"
    SIDECAR_MODE = "SidecarMode"


class DeletionPolicyType(StrEnum):
    """Deletion policies of ``spec.deletionStrategy`` (CRD enum)."""

    DELETE_CLUSTER = "DeleteCluster"
    DELETE_WORKERS = "DeleteWorkers"
    DELETE_SELF = "DeleteSelf"
    DELETE_NONE = "DeleteNone"


def is_job_terminal(status: str) -> bool:
    """True for the terminal Ray job statuses STOPPED, SUCCEEDED and FAILED."""
    return status in (JobStatus.STOPPED, JobStatus.SUCCEEDED, JobStatus.FAILED)


def is_job_deployment_terminal(status: str) -> bool:
    """True for the terminal RayJob deployment statuses Complete and Failed."""
    return status in (JobDeploymentStatus.COMPLETE, JobDeploymentStatus.FAILED)


# --- RayService -----------------------------------------------------------------------------
class ServiceStatus(StrEnum):
    """Deprecated ``status.serviceStatus`` of a RayService (== the Ready condition)."""

    RUNNING = "Running"
    NOT_RUNNING = ""


class RayServiceUpgradeType(StrEnum):
    """``spec.upgradeStrategy.type`` of a RayService (no CRD enum; validated by the operator)."""

    NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE = "NewClusterWithIncrementalUpgrade"
    NEW_CLUSTER = "NewCluster"
    NONE = "None"


class RayServiceConditionType(StrEnum):
    """Condition types of ``RayService.status.conditions``."""

    READY = "Ready"
    UPGRADE_IN_PROGRESS = "UpgradeInProgress"
    ROLLBACK_IN_PROGRESS = "RollbackInProgress"
    SUSPENDING = "Suspending"
    SUSPENDED = "Suspended"


class RayServiceConditionReason(StrEnum):
    """Reasons used on RayService conditions."""

    INITIALIZING = "Initializing"
    INITIALIZING_TIMEOUT = "InitializingTimeout"
    ZERO_SERVE_ENDPOINTS = "ZeroServeEndpoints"
    NON_ZERO_SERVE_ENDPOINTS = "NonZeroServeEndpoints"
    BOTH_ACTIVE_PENDING_CLUSTERS_EXIST = "BothActivePendingClustersExist"
    NO_PENDING_CLUSTER = "NoPendingCluster"
    NO_ACTIVE_CLUSTER = "NoActiveCluster"
    VALIDATION_FAILED = "ValidationFailed"
    DESIRED_CLUSTER_SPEC_CHANGED = "DesiredClusterSpecChanged"
    SUSPEND_REQUESTED = "SuspendRequested"
    SUSPEND_IN_PROGRESS = "SuspendInProgress"
    SUSPEND_COMPLETE = "SuspendComplete"
    RAY_SERVICE_RESUMED = "RayServiceResumed"


class ApplicationStatus(StrEnum):
    """Ray Serve application statuses."""

    NOT_STARTED = "NOT_STARTED"
    DEPLOYING = "DEPLOYING"
    RUNNING = "RUNNING"
    DEPLOY_FAILED = "DEPLOY_FAILED"
    DELETING = "DELETING"
    UNHEALTHY = "UNHEALTHY"


class DeploymentStatus(StrEnum):
    """Ray Serve deployment statuses."""

    UPDATING = "UPDATING"
    HEALTHY = "HEALTHY"
    UNHEALTHY = "UNHEALTHY"
