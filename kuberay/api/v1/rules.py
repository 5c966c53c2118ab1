"""The effective values of the ray.io spec: the one place deciding them.

Every rule takes the object as the plain dict the API server returns (camelCase keys, never
mutated) and returns what KubeRay's controllers use when a field is absent, empty or out of
range. The controllers call these with their cached objects; validation calls them with
:func:`~kuberay.api.v1.convert.unstructure` of its typed models, so both always agree. CRD
defaulting of stored objects (``default_raycluster`` & co.) stays in
:mod:`kuberay.api.v1.defaults`.

Argument names say what is passed: ``cluster`` / ``rayjob`` / ``rayservice`` are whole objects
(``metadata`` + ``spec``); ``group`` a ``workerGroupSpecs[]`` entry; ``job_spec`` a RayJob
``spec``. ``gates`` is a :data:`~kuberay.api.v1.gates.FeatureGates` (``None``: KubeRay's
defaults). Cheap to import: no cattrs, no models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.api.v1.enums import (
    AuthMode,
    AutoscalerVersion,
    GcsFaultToleranceBackend,
    GCSStorageDeletionPolicy,
    IngressPathType,
    JobSubmissionMode,
    NetworkPolicyMode,
    RayServiceUpgradeType,
)
from kuberay.api.v1.gates import FeatureGates, gate_enabled

__all__ = [
    "DEFAULT_INGRESS_PATH",
    "DEFAULT_INGRESS_PATH_TYPE",
    "DEFAULT_RAYCLUSTER_DELETION_DELAY_SECONDS",
    "DEFAULT_SUBMITTER_BACKOFF_LIMIT",
    "ZERO_DOWNTIME_ENV",
    "EffectiveRayJobSpec",
    "autoscaler_v2_env_enabled",
    "backoff_limit",
    "calculate_desired_replicas",
    "calculate_max_replicas",
    "calculate_min_replicas",
    "clamp_replicas",
    "cluster_upgrade_max_surge_percent",
    "creator_crd_type",
    "effective_rayjob_spec",
    "gcs_fault_tolerance_backend",
    "gcs_storage_access_modes",
    "gcs_storage_deletion_policy",
    "gcs_storage_pvc_name",
    "gcs_storage_size",
    "head_port",
    "ingress_path",
    "ingress_path_type",
    "is_auth_enabled",
    "is_autoscaling_enabled",
    "is_autoscaling_v1_enabled",
    "is_autoscaling_v2_enabled",
    "is_gcs_fault_tolerance_embedded",
    "is_gcs_fault_tolerance_enabled",
    "is_history_server_enabled",
    "is_incremental_upgrade_enabled",
    "is_k8s_auth_enabled",
    "is_overwrite_ray_container_cmd",
    "is_serve_service_enabled",
    "is_tls_enabled",
    "is_worker_group_suspended",
    "is_zero_downtime_upgrade_enabled",
    "managed_by_external_controller",
    "managed_elsewhere",
    "network_policy_mode",
    "num_of_hosts",
    "ray_cluster_deletion_delay_seconds",
    "should_skip_head_pod_restart",
    "shutdown_after_job_finishes",
    "submission_mode",
    "submitter_backoff_limit",
    "ttl_seconds_after_finished",
    "uses_cluster_selector",
    "worker_group_desired_replicas",
    "workers_to_delete",
]

#: Ingress path when ``ingressOptions.path`` is unset (``common/ingress.go``).
DEFAULT_INGRESS_PATH: Final = "/"
#: Ingress pathType when ``ingressOptions.pathType`` is unset.
DEFAULT_INGRESS_PATH_TYPE: Final = IngressPathType.PREFIX
#: Delay before a RayService deletes an old RayCluster (``RayClusterDeletionDelayDuration``).
DEFAULT_RAYCLUSTER_DELETION_DELAY_SECONDS: Final = 60
#: K8s Job backoffLimit of the RayJob submitter / SidecarMode restart budget.
DEFAULT_SUBMITTER_BACKOFF_LIMIT: Final = 2
#: The operator env var that, set to ``false``, turns zero-downtime RayService upgrades off.
ZERO_DOWNTIME_ENV: Final = "ENABLE_ZERO_DOWNTIME"


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(obj.get("spec"))


def _meta(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return _map(_map(obj.get("metadata")).get(key))


def _int(value: object, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def _wrap_int32(value: int) -> int:
    """Go int32 arithmetic wraps around."""
    return (value + 2**31) % 2**32 - 2**31


# --- RayCluster: replicas -------------------------------------------------------------------
def clamp_replicas(replicas: int | None, min_replicas: int, max_replicas: int) -> int:
    """KubeRay's clamp: ``None`` or below min -> min; above max -> max; else replicas."""
    if replicas is None or replicas < min_replicas:
        return min_replicas
    if replicas > max_replicas:
        return max_replicas
    return replicas


def num_of_hosts(group: Mapping[str, Any]) -> int:
    """``numOfHosts``; missing or <= 0 counts as 1 (KubeRay v1.7: a group written for an
    old CRD without the default must not scale to zero)."""
    hosts = _int(group.get("numOfHosts"), 1)
    return hosts if hosts > 0 else 1


def is_worker_group_suspended(group: Mapping[str, Any]) -> bool:
    """``suspend`` of a worker group is true."""
    return group.get("suspend") is True


def worker_group_desired_replicas(group: Mapping[str, Any]) -> int:
    """Pods KubeRay wants for a group (``GetWorkerGroupDesiredReplicas``).

    A suspended group wants 0; otherwise ``replicas`` (absent: min) clamped into
    [``minReplicas`` (absent: 0), ``maxReplicas`` (absent: 2147483647)], times
    :func:`num_of_hosts`, in Go int32 arithmetic.
    """
    if is_worker_group_suspended(group):
        return 0
    minimum = _int(group.get("minReplicas"), 0)
    maximum = _int(group.get("maxReplicas"), c.MAX_INT32)
    replicas = group.get("replicas")
    count = clamp_replicas(
        replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None,
        minimum,
        maximum,
    )
    return _wrap_int32(count * num_of_hosts(group))


def _groups(cluster: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    groups = _spec(cluster).get("workerGroupSpecs")
    return [_map(g) for g in groups] if isinstance(groups, list) else []


def calculate_desired_replicas(cluster: Mapping[str, Any]) -> int:
    """``status.desiredWorkerReplicas``: sum of :func:`worker_group_desired_replicas` (int32)."""
    total = 0
    for group in _groups(cluster):
        total = _wrap_int32(total + worker_group_desired_replicas(group))
    return total


def calculate_min_replicas(cluster: Mapping[str, Any]) -> int:
    """``status.minWorkerReplicas``: sum of ``minReplicas * numOfHosts`` over non-suspended
    groups (int32)."""
    total = 0
    for group in _groups(cluster):
        if not is_worker_group_suspended(group):
            product = _wrap_int32(_int(group.get("minReplicas"), 0) * num_of_hosts(group))
            total = _wrap_int32(total + product)
    return total


def calculate_max_replicas(cluster: Mapping[str, Any]) -> int:
    """``status.maxWorkerReplicas``: sum of ``maxReplicas * numOfHosts`` over non-suspended
    groups in 64 bits, capped into int32 range (``CalculateMaxReplicas`` +
    ``SafeInt64ToInt32``)."""
    total = sum(
        _int(g.get("maxReplicas"), c.MAX_INT32) * num_of_hosts(g)
        for g in _groups(cluster)
        if not is_worker_group_suspended(g)
    )
    return max(min(total, c.MAX_INT32), -(2**31))


def workers_to_delete(group: Mapping[str, Any]) -> list[str]:
    """``scaleStrategy.workersToDelete`` of a group (the names only)."""
    names = _map(group.get("scaleStrategy")).get("workersToDelete")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


# --- RayCluster: features -------------------------------------------------------------------
def is_autoscaling_enabled(cluster: Mapping[str, Any]) -> bool:
    """``spec.enableInTreeAutoscaling`` is true (absent means false)."""
    return _spec(cluster).get("enableInTreeAutoscaling") is True


def _autoscaler_version(cluster: Mapping[str, Any]) -> object:
    return _map(_spec(cluster).get("autoscalerOptions")).get("version")


def is_autoscaling_v2_enabled(cluster: Mapping[str, Any]) -> bool:
    """``autoscalerOptions.version`` is ``v2`` (independent of ``enableInTreeAutoscaling``;
    the head env var is not considered here)."""
    return _autoscaler_version(cluster) == AutoscalerVersion.V2


def autoscaler_v2_env_enabled(value: str) -> bool:
    """Whether a head container's ``RAY_ENABLE_AUTOSCALER_V2`` value turns autoscaler v2 on
    as KubeRay's validation reads it: exactly ``1`` or ``true`` (not Go's ``ParseBool``:
    ``True`` or ``t`` are off)."""
    return value in ("1", "true")


def is_autoscaling_v1_enabled(cluster: Mapping[str, Any]) -> bool:
    """``autoscalerOptions.version`` is ``v1``."""
    return _autoscaler_version(cluster) == AutoscalerVersion.V1


def is_gcs_fault_tolerance_enabled(cluster: Mapping[str, Any]) -> bool:
    """Annotation ``ray.io/ft-enabled`` is ``true`` (any case) or ``gcsFaultToleranceOptions``
    is set."""
    annotation = _meta(cluster, "annotations").get(c.RAY_FT_ENABLED_ANNOTATION_KEY)
    if isinstance(annotation, str) and annotation.lower() == "true":
        return True
    return _spec(cluster).get("gcsFaultToleranceOptions") is not None


def gcs_fault_tolerance_backend(cluster: Mapping[str, Any]) -> str:
    """The GCS FT backend: ``redis`` when the options or their ``backend`` are absent/empty."""
    backend = _map(_spec(cluster).get("gcsFaultToleranceOptions")).get("backend")
    return str(backend) if backend else GcsFaultToleranceBackend.REDIS.value


def is_gcs_fault_tolerance_embedded(cluster: Mapping[str, Any]) -> bool:
    """GCS FT options present with the embedded ``rocksdb`` backend."""
    return (
        _spec(cluster).get("gcsFaultToleranceOptions") is not None
        and gcs_fault_tolerance_backend(cluster) == GcsFaultToleranceBackend.ROCKSDB
    )


def _gcs_storage(cluster: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(_map(_spec(cluster).get("gcsFaultToleranceOptions")).get("storage"))


def gcs_storage_pvc_name(cluster: Mapping[str, Any]) -> str:
    """Embedded GCS storage claim: ``storage.claimName`` or ``<cluster>-gcs-pvc``."""
    storage = _gcs_storage(cluster)
    if storage.get("claimName"):
        return str(storage["claimName"])
    return f"{_map(cluster.get('metadata')).get('name', '')}{c.GCS_STORAGE_PVC_SUFFIX}"


def gcs_storage_size(cluster: Mapping[str, Any]) -> str | int:
    """Size of the operator-managed GCS PVC: ``storage.size`` or ``1Gi``."""
    size = _gcs_storage(cluster).get("size")
    return size if isinstance(size, str | int) else c.GCS_STORAGE_DEFAULT_SIZE


def gcs_storage_access_modes(cluster: Mapping[str, Any]) -> list[str]:
    """Access modes of the managed GCS PVC: ``storage.accessModes`` if non-empty, else RWO."""
    modes = _gcs_storage(cluster).get("accessModes")
    return list(modes) if isinstance(modes, list) and modes else ["ReadWriteOnce"]


def gcs_storage_deletion_policy(cluster: Mapping[str, Any]) -> str:
    """``storage.deletionPolicy`` or ``DeleteWithCluster``."""
    policy = _gcs_storage(cluster).get("deletionPolicy")
    if policy is not None:
        return str(policy)
    return GCSStorageDeletionPolicy.DELETE_WITH_CLUSTER.value


def is_auth_enabled(cluster: Mapping[str, Any]) -> bool:
    """Token auth is active only for ``authOptions.mode == token`` (no default mode)."""
    return _map(_spec(cluster).get("authOptions")).get("mode") == AuthMode.TOKEN


def is_k8s_auth_enabled(auth_options: Mapping[str, Any] | None) -> bool:
    """``authOptions.enableK8sTokenAuth`` is true."""
    return _map(auth_options).get("enableK8sTokenAuth") is True


def is_tls_enabled(cluster: Mapping[str, Any], gates: FeatureGates = None) -> bool:
    """mTLS is on: gate ``RayClusterMTLS`` and ``tlsOptions.enabled`` true."""
    if not gate_enabled(gates, c.GATE_RAYCLUSTER_MTLS):
        return False
    return _map(_spec(cluster).get("tlsOptions")).get("enabled") is True


def is_history_server_enabled(cluster: Mapping[str, Any], gates: FeatureGates = None) -> bool:
    """Gate ``RayClusterHistoryServer`` on and ``historyServerOptions.collectorOptions`` set."""
    if not gate_enabled(gates, c.GATE_RAYCLUSTER_HISTORY_SERVER):
        return False
    options = _spec(cluster).get("historyServerOptions")
    return isinstance(options, Mapping) and options.get("collectorOptions") is not None


def is_overwrite_ray_container_cmd(cluster: Mapping[str, Any]) -> bool:
    """Annotation ``ray.io/overwrite-container-cmd`` is ``true`` (any case)."""
    value = _meta(cluster, "annotations").get(c.RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY)
    return isinstance(value, str) and value.lower() == "true"


def is_serve_service_enabled(cluster: Mapping[str, Any]) -> bool:
    """Annotation ``ray.io/enable-serve-service`` is exactly ``true``."""
    value = _meta(cluster, "annotations").get(c.ENABLE_SERVE_SERVICE_KEY)
    return value == c.ENABLE_SERVE_SERVICE_TRUE


def should_skip_head_pod_restart(cluster: Mapping[str, Any]) -> bool:
    """Annotation ``ray.io/disable-provisioned-head-restart`` is exactly ``true``."""
    value = _meta(cluster, "annotations").get(c.DISABLE_PROVISIONED_HEAD_RESTART_ANNOTATION_KEY)
    return value == "true"


def creator_crd_type(cluster: Mapping[str, Any]) -> str:
    """``GetCRDType`` of label ``ray.io/originated-from-crd``: ``RayJob``/``RayService`` pass
    through, anything else (or none) means ``RayCluster``."""
    value = _meta(cluster, "labels").get(c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY)
    if value in (c.KIND_RAYJOB, c.KIND_RAYSERVICE):
        return str(value)
    return c.KIND_RAYCLUSTER


def head_port(cluster: Mapping[str, Any]) -> str:
    """KubeRay ``GetHeadPort``: head ``rayStartParams.port`` or ``"6379"``."""
    params = _map(_map(_spec(cluster).get("headGroupSpec")).get("rayStartParams"))
    if "port" not in params:
        return str(c.DEFAULT_GCS_SERVER_PORT)
    port = params["port"]  # a map[string]string value: null is "", others stringified
    if isinstance(port, bool):
        return "true" if port else "false"
    return "" if port is None else str(port)


def network_policy_mode(config: Mapping[str, Any]) -> str:
    """``networkPolicy.mode``, ``DenyAll`` when unset (matches the CRD default)."""
    mode = config.get("mode")
    return str(mode) if mode is not None else NetworkPolicyMode.DENY_ALL.value


def ingress_path(options: Mapping[str, Any] | None) -> str:
    """Ingress rule path: ``ingressOptions.path`` or ``/``."""
    path = _map(options).get("path")
    return path if isinstance(path, str) else DEFAULT_INGRESS_PATH


def ingress_path_type(options: Mapping[str, Any] | None) -> str:
    """Ingress rule pathType: ``ingressOptions.pathType`` or ``Prefix``."""
    path_type = _map(options).get("pathType")
    return path_type if isinstance(path_type, str) else DEFAULT_INGRESS_PATH_TYPE.value


def managed_by_external_controller(managed_by: str | None) -> str | None:
    """The external manager when ``managedBy`` is set to anything but KubeRay, else ``None``
    (``ManagedByExternalController``: such objects are skipped by the reconcilers)."""
    if managed_by is not None and managed_by != c.KUBERAY_CONTROLLER:
        return managed_by
    return None


# --- RayJob ---------------------------------------------------------------------------------
def submission_mode(job_spec: Mapping[str, Any]) -> str:
    """``submissionMode``; absent or empty means the CRD default ``K8sJobMode``. The values are
    :class:`~kuberay.api.v1.enums.JobSubmissionMode` (a ``StrEnum``: compare with its members);
    one KubeRay does not know is returned as is (validation reports it)."""
    mode = job_spec.get("submissionMode")
    return str(mode) if mode else JobSubmissionMode.K8S_JOB_MODE.value


def backoff_limit(job_spec: Mapping[str, Any]) -> int:
    """``backoffLimit``; absent means the CRD default 0 (no retries)."""
    return _int(job_spec.get("backoffLimit"), 0)


def shutdown_after_job_finishes(job_spec: Mapping[str, Any]) -> bool:
    """``shutdownAfterJobFinishes`` (Go bool, absent means false)."""
    return job_spec.get("shutdownAfterJobFinishes") is True


def ttl_seconds_after_finished(job_spec: Mapping[str, Any]) -> int:
    """``ttlSecondsAfterFinished``; absent means the CRD default 0."""
    return _int(job_spec.get("ttlSecondsAfterFinished"), 0)


def submitter_backoff_limit(job_spec: Mapping[str, Any]) -> int:
    """``submitterConfig.backoffLimit`` or 2 (K8s Job backoffLimit; sidecar restart budget)."""
    limit = _map(job_spec.get("submitterConfig")).get("backoffLimit")
    return _int(limit, DEFAULT_SUBMITTER_BACKOFF_LIMIT)


def uses_cluster_selector(job_spec: Mapping[str, Any]) -> bool:
    """``clusterSelector`` is set (non-empty): the job runs on an existing RayCluster."""
    return bool(job_spec.get("clusterSelector"))


@dataclass(frozen=True)
class EffectiveRayJobSpec:
    """The effective values of one RayJob ``spec`` the RayJob controller decides on, computed
    once per pass by :func:`effective_rayjob_spec` (each field is the rule of that name)."""

    submission_mode: str
    backoff_limit: int
    submitter_backoff_limit: int
    uses_cluster_selector: bool

    @property
    def has_submitter(self) -> bool:
        """K8sJobMode and SidecarMode submit through a process whose end matters."""
        return self.submission_mode in (
            JobSubmissionMode.K8S_JOB_MODE,
            JobSubmissionMode.SIDECAR_MODE,
        )


def effective_rayjob_spec(job_spec: Mapping[str, Any]) -> EffectiveRayJobSpec:
    """The :class:`EffectiveRayJobSpec` of a RayJob ``spec``."""
    return EffectiveRayJobSpec(
        submission_mode=submission_mode(job_spec),
        backoff_limit=backoff_limit(job_spec),
        submitter_backoff_limit=submitter_backoff_limit(job_spec),
        uses_cluster_selector=uses_cluster_selector(job_spec),
    )


# --- RayService -----------------------------------------------------------------------------
def ray_cluster_deletion_delay_seconds(rayservice: Mapping[str, Any]) -> int:
    """``rayClusterDeletionDelaySeconds`` or 60 (0 is honoured)."""
    value = _spec(rayservice).get("rayClusterDeletionDelaySeconds")
    return _int(value, DEFAULT_RAYCLUSTER_DELETION_DELAY_SECONDS)


def cluster_upgrade_max_surge_percent(options: Mapping[str, Any]) -> int:
    """``clusterUpgradeOptions.maxSurgePercent`` or its CRD default 100."""
    return _int(options.get("maxSurgePercent"), 100)


def _upgrade_type(rayservice: Mapping[str, Any]) -> object:
    return _map(_spec(rayservice).get("upgradeStrategy")).get("type")


def is_incremental_upgrade_enabled(
    rayservice: Mapping[str, Any], gates: FeatureGates = None
) -> bool:
    """Gate ``RayServiceIncrementalUpgrade`` on and ``upgradeStrategy.type`` =
    ``NewClusterWithIncrementalUpgrade`` (``IsIncrementalUpgradeEnabled``)."""
    if not gate_enabled(gates, c.GATE_RAYSERVICE_INCREMENTAL_UPGRADE):
        return False
    return _upgrade_type(rayservice) == RayServiceUpgradeType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE


def is_zero_downtime_upgrade_enabled(
    rayservice: Mapping[str, Any],
    gates: FeatureGates,
    environ: Mapping[str, str],
) -> bool:
    """Whether a changed cluster spec makes a RayService prepare a new cluster.

    ``upgradeStrategy.type`` wins when set: enabled only for ``NewCluster`` (or, with gate
    RayServiceIncrementalUpgrade, also ``NewClusterWithIncrementalUpgrade``). Unset: enabled
    unless the operator's env ``ENABLE_ZERO_DOWNTIME`` (``environ``, passed by the caller: the
    API reads no environment) is ``false`` (any case).
    """
    kind = _upgrade_type(rayservice)
    if kind is not None:
        allowed = {RayServiceUpgradeType.NEW_CLUSTER.value}
        if gate_enabled(gates, c.GATE_RAYSERVICE_INCREMENTAL_UPGRADE):
            allowed.add(RayServiceUpgradeType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE.value)
        return kind in allowed
    return (environ.get(ZERO_DOWNTIME_ENV) or "").lower() != "false"


def managed_elsewhere(obj: Mapping[str, Any]) -> str | None:
    """The controller a RayCluster/RayJob/RayService's ``spec.managedBy`` names when that is
    not KubeRay (``ray.io/kuberay-operator``), else ``None`` (unset, null or empty means
    KubeRay). The reconcilers skip such objects: the one check they all share."""
    managed_by = _spec(obj).get("managedBy")
    return managed_by_external_controller(str(managed_by)) if managed_by else None
