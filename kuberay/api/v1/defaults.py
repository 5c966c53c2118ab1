"""Defaulting exactly as KubeRay applies it.

Two layers:

1. **Object defaulting** (``default_raycluster`` & co.): pure functions returning a new
   model with what the kube-apiserver fills in from KubeRay's CRD ``default:`` markers, plus
   (RayCluster only) the in-memory ``setDefaults`` the controller runs on every reconcile.
   Fields KubeRay leaves at Go's zero value stay ``None`` here (Go would omit them on the
   wire too), so an unstructured defaulted object is what the apiserver stores.
2. **Effective values** (``worker_group_desired_replicas``, ``submission_mode``, ...): what
   KubeRay's controllers use when a field is absent or out of range. Each docstring states
   the rule and where KubeRay applies it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from kuberay.api.v1._meta import ApiModel
from kuberay.api.v1.constants import (
    GATE_RAYCLUSTER_MTLS,
    GATE_RAYSERVICE_INCREMENTAL_UPGRADE,
    GCS_STORAGE_DEFAULT_SIZE,
    GCS_STORAGE_PVC_SUFFIX,
    KIND_RAYCLUSTER,
    KIND_RAYJOB,
    KIND_RAYSERVICE,
    KUBERAY_CONTROLLER,
    MAX_INT32,
    RAY_FT_ENABLED_ANNOTATION_KEY,
)
from kuberay.api.v1.convert import converter
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
from kuberay.api.v1.raycluster_types import (
    AuthOptions,
    GcsFaultToleranceOptions,
    IngressOptions,
    NetworkPolicyConfig,
    RayCluster,
    RayClusterSpec,
    WorkerGroupSpec,
)
from kuberay.api.v1.raycronjob_types import RayCronJob
from kuberay.api.v1.rayjob_types import RayJob, RayJobSpec, RayJobStatus
from kuberay.api.v1.rayservice_types import ClusterUpgradeOptions, RayService, RayServiceSpec

__all__ = [
    "DEFAULT_INGRESS_PATH",
    "DEFAULT_INGRESS_PATH_TYPE",
    "DEFAULT_RAYCLUSTER_DELETION_DELAY_SECONDS",
    "DEFAULT_SUBMITTER_BACKOFF_LIMIT",
    "backoff_limit",
    "clamp_replicas",
    "cluster_upgrade_max_surge_percent",
    "crd_defaults_raycluster_spec",
    "crd_defaults_rayjob_spec",
    "crd_defaults_rayservice_spec",
    "default_pod_template_ports",
    "default_raycluster",
    "default_raycronjob",
    "default_rayjob",
    "default_rayservice",
    "default_service_ports",
    "desired_worker_replicas",
    "gcs_fault_tolerance_backend",
    "gcs_storage_access_modes",
    "gcs_storage_deletion_policy",
    "gcs_storage_pvc_name",
    "gcs_storage_size",
    "get_crd_type",
    "ingress_path",
    "ingress_path_type",
    "is_auth_enabled",
    "is_autoscaling_enabled",
    "is_autoscaling_v1_enabled",
    "is_autoscaling_v2_enabled",
    "is_gcs_fault_tolerance_embedded",
    "is_gcs_fault_tolerance_enabled",
    "is_incremental_upgrade_enabled",
    "is_k8s_auth_enabled",
    "is_tls_enabled",
    "is_zero_downtime_upgrade_enabled",
    "managed_by_external_controller",
    "max_worker_replicas",
    "min_worker_replicas",
    "network_policy_mode",
    "ray_cluster_deletion_delay_seconds",
    "shutdown_after_job_finishes",
    "submission_mode",
    "submitter_backoff_limit",
    "ttl_seconds_after_finished",
    "worker_group_desired_replicas",
]

M = TypeVar("M", bound=ApiModel)

#: Ingress path when ``ingressOptions.path`` is unset (``common/ingress.go``).
DEFAULT_INGRESS_PATH = "/"
#: Ingress pathType when ``ingressOptions.pathType`` is unset.
DEFAULT_INGRESS_PATH_TYPE = IngressPathType.PREFIX
#: Delay before a RayService deletes an old RayCluster (``RayClusterDeletionDelayDuration``).
DEFAULT_RAYCLUSTER_DELETION_DELAY_SECONDS = 60
#: K8s Job backoffLimit of the RayJob submitter / SidecarMode restart budget.
DEFAULT_SUBMITTER_BACKOFF_LIMIT = 2


def _clone(model: M) -> M:
    result = converter.structure(converter.unstructure(model), type(model))
    assert isinstance(result, type(model))
    return result


def _wrap_int32(value: int) -> int:
    """Go int32 arithmetic wraps around."""
    return (value + 2**31) % 2**32 - 2**31


# --- object defaulting ----------------------------------------------------------------------
def _default_ports(ports: Any) -> None:
    if isinstance(ports, list):
        for port in ports:
            if isinstance(port, dict) and "protocol" not in port:
                port["protocol"] = "TCP"


def default_pod_template_ports(template: dict[str, Any] | None) -> None:
    """In place: ``protocol: TCP`` on every container/initContainer/ephemeralContainer port
    that has none (the core/v1 default KubeRay's CRDs apply inside pod templates, and ours
    keep through the schema skeleton in :mod:`kuberay.api.v1.crd`)."""
    spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(spec, dict):
        return
    for key in ("containers", "initContainers", "ephemeralContainers"):
        containers = spec.get(key)
        if isinstance(containers, list):
            for container in containers:
                if isinstance(container, dict):
                    _default_ports(container.get("ports"))


def default_service_ports(service: dict[str, Any] | None) -> None:
    """In place: ``protocol: TCP`` on every Service port that has none."""
    spec = service.get("spec") if isinstance(service, dict) else None
    if isinstance(spec, dict):
        _default_ports(spec.get("ports"))


def _default_worker_group(group: WorkerGroupSpec) -> None:
    if group.replicas is None:
        group.replicas = 0
    if group.min_replicas is None:
        group.min_replicas = 0
    if group.max_replicas is None:
        group.max_replicas = MAX_INT32
    if group.priority is None:
        group.priority = 0
    if group.num_of_hosts is None:
        group.num_of_hosts = 1


def _crd_defaults_cluster_spec_in_place(spec: RayClusterSpec) -> None:
    if spec.network_policy is not None and spec.network_policy.mode is None:
        spec.network_policy.mode = NetworkPolicyMode.DENY_ALL
    default_pod_template_ports(spec.head_group_spec.template)
    default_service_ports(spec.head_group_spec.head_service)
    for group in spec.worker_group_specs or ():
        _default_worker_group(group)
        default_pod_template_ports(group.template)


def crd_defaults_raycluster_spec(spec: RayClusterSpec) -> RayClusterSpec:
    """A copy of ``spec`` with the RayCluster CRD defaults applied (apiserver defaulting).

    * every ``workerGroupSpecs[]``: ``replicas`` 0, ``minReplicas`` 0,
      ``maxReplicas`` 2147483647, ``priority`` 0, ``numOfHosts`` 1 (only where absent);
    * ``networkPolicy.mode`` ``DenyAll`` when ``networkPolicy`` is present without a mode;
    * ``protocol: TCP`` on ports of the head/worker pod templates and of ``headService``.
    """
    out = _clone(spec)
    _crd_defaults_cluster_spec_in_place(out)
    return out


def _crd_defaults_job_spec_in_place(spec: RayJobSpec) -> None:
    if spec.backoff_limit is None:
        spec.backoff_limit = 0
    if spec.submission_mode is None:
        spec.submission_mode = JobSubmissionMode.K8S_JOB_MODE.value
    if spec.ttl_seconds_after_finished is None:
        spec.ttl_seconds_after_finished = 0
    strategy = spec.deletion_strategy
    if strategy is not None:
        for rule in strategy.deletion_rules or ():
            if rule.condition.ttl_seconds is None:
                rule.condition.ttl_seconds = 0
    default_pod_template_ports(spec.submitter_pod_template)
    if spec.ray_cluster_spec is not None:
        _crd_defaults_cluster_spec_in_place(spec.ray_cluster_spec)


def crd_defaults_rayjob_spec(spec: RayJobSpec) -> RayJobSpec:
    """A copy of ``spec`` with the RayJob CRD defaults applied.

    ``backoffLimit`` 0, ``submissionMode`` ``K8sJobMode``, ``ttlSecondsAfterFinished`` 0,
    ``deletionStrategy.deletionRules[].condition.ttlSeconds`` 0, port protocols in
    ``submitterPodTemplate``, and the RayCluster defaults inside ``rayClusterSpec``.
    ``shutdownAfterJobFinishes`` and ``suspend`` have no CRD default (Go zero value
    ``false``; see :func:`shutdown_after_job_finishes`).
    """
    out = _clone(spec)
    _crd_defaults_job_spec_in_place(out)
    return out


def _crd_defaults_service_spec_in_place(spec: RayServiceSpec) -> None:
    strategy = spec.upgrade_strategy
    options = strategy.cluster_upgrade_options if strategy is not None else None
    if options is not None and options.max_surge_percent is None:
        options.max_surge_percent = 100
    default_service_ports(spec.serve_service)
    _crd_defaults_cluster_spec_in_place(spec.ray_cluster_config)


def crd_defaults_rayservice_spec(spec: RayServiceSpec) -> RayServiceSpec:
    """A copy of ``spec`` with the RayService CRD defaults applied.

    ``upgradeStrategy.clusterUpgradeOptions.maxSurgePercent`` 100, port protocols in
    ``serveService``, and the RayCluster defaults inside ``rayClusterConfig``.
    """
    out = _clone(spec)
    _crd_defaults_service_spec_in_place(out)
    return out


def default_raycluster(cluster: RayCluster, *, controller: bool = True) -> RayCluster:
    """A defaulted copy of a RayCluster.

    CRD defaults (see :func:`crd_defaults_raycluster_spec`), then, with ``controller``, the
    RayCluster controller's ``setDefaults``: a missing ``rayStartParams`` of the head and of
    every worker group becomes ``{}``.
    """
    out = _clone(cluster)
    if out.spec is not None:
        _crd_defaults_cluster_spec_in_place(out.spec)
        if controller:
            if out.spec.head_group_spec.ray_start_params is None:
                out.spec.head_group_spec.ray_start_params = {}
            for group in out.spec.worker_group_specs or ():
                if group.ray_start_params is None:
                    group.ray_start_params = {}
    return out


def _crd_defaults_job_status_in_place(status: RayJobStatus) -> None:
    if status.succeeded is None:
        status.succeeded = 0
    if status.failed is None:
        status.failed = 0


def default_rayjob(job: RayJob) -> RayJob:
    """A defaulted copy of a RayJob: spec CRD defaults (:func:`crd_defaults_rayjob_spec`) and,
    when a ``status`` object is present, ``status.succeeded``/``status.failed`` 0."""
    out = _clone(job)
    if out.spec is not None:
        _crd_defaults_job_spec_in_place(out.spec)
    if out.status is not None:
        _crd_defaults_job_status_in_place(out.status)
    return out


def default_rayservice(service: RayService) -> RayService:
    """A defaulted copy of a RayService (:func:`crd_defaults_rayservice_spec`)."""
    out = _clone(service)
    if out.spec is not None:
        _crd_defaults_service_spec_in_place(out.spec)
    return out


def default_raycronjob(cronjob: RayCronJob) -> RayCronJob:
    """A defaulted copy of a RayCronJob: the RayJob spec defaults inside ``jobTemplate``."""
    out = _clone(cronjob)
    if out.spec is not None:
        _crd_defaults_job_spec_in_place(out.spec.job_template)
    return out


# --- RayCluster effective values ------------------------------------------------------------
def clamp_replicas(replicas: int | None, min_replicas: int, max_replicas: int) -> int:
    """KubeRay's clamp: ``None`` or below min -> min; above max -> max; else replicas."""
    if replicas is None or replicas < min_replicas:
        return min_replicas
    if replicas > max_replicas:
        return max_replicas
    return replicas


def worker_group_desired_replicas(group: WorkerGroupSpec) -> int:
    """Pods KubeRay wants for a group (``GetWorkerGroupDesiredReplicas``).

    A suspended group wants 0; otherwise ``replicas`` clamped into
    [``minReplicas`` (absent: 0), ``maxReplicas`` (absent: 2147483647)], times
    ``numOfHosts`` (absent: its CRD default 1), in Go int32 arithmetic.
    """
    if group.suspend:
        return 0
    min_r = group.min_replicas if group.min_replicas is not None else 0
    max_r = group.max_replicas if group.max_replicas is not None else MAX_INT32
    hosts = group.num_of_hosts if group.num_of_hosts is not None else 1
    return _wrap_int32(clamp_replicas(group.replicas, min_r, max_r) * hosts)


def desired_worker_replicas(spec: RayClusterSpec) -> int:
    """Sum of :func:`worker_group_desired_replicas` (``CalculateDesiredReplicas``, int32)."""
    total = 0
    for group in spec.worker_group_specs or ():
        total = _wrap_int32(total + worker_group_desired_replicas(group))
    return total


def min_worker_replicas(spec: RayClusterSpec) -> int:
    """Sum of ``minReplicas * numOfHosts`` over non-suspended groups (int32)."""
    total = 0
    for group in spec.worker_group_specs or ():
        if group.suspend:
            continue
        min_r = group.min_replicas if group.min_replicas is not None else 0
        hosts = group.num_of_hosts if group.num_of_hosts is not None else 1
        total = _wrap_int32(total + _wrap_int32(min_r * hosts))
    return total


def max_worker_replicas(spec: RayClusterSpec) -> int:
    """Sum of ``maxReplicas * numOfHosts`` over non-suspended groups, in 64-bit, capped into
    int32 range (``CalculateMaxReplicas`` + ``SafeInt64ToInt32``)."""
    total = 0
    for group in spec.worker_group_specs or ():
        if group.suspend:
            continue
        max_r = group.max_replicas if group.max_replicas is not None else MAX_INT32
        hosts = group.num_of_hosts if group.num_of_hosts is not None else 1
        total += max_r * hosts
    return max(-(2**31), min(MAX_INT32, total))


def is_autoscaling_enabled(spec: RayClusterSpec | None) -> bool:
    """``enableInTreeAutoscaling`` is true (absent means false)."""
    return spec is not None and spec.enable_in_tree_autoscaling is True


def is_autoscaling_v2_enabled(spec: RayClusterSpec | None) -> bool:
    """``autoscalerOptions.version`` is ``v2`` (the head env var is NOT considered here)."""
    return (
        spec is not None
        and spec.autoscaler_options is not None
        and spec.autoscaler_options.version == AutoscalerVersion.V2
    )


def is_autoscaling_v1_enabled(spec: RayClusterSpec | None) -> bool:
    """``autoscalerOptions.version`` is ``v1``."""
    return (
        spec is not None
        and spec.autoscaler_options is not None
        and spec.autoscaler_options.version == AutoscalerVersion.V1
    )


def gcs_fault_tolerance_backend(options: GcsFaultToleranceOptions | None) -> str:
    """The GCS FT backend: ``redis`` when options or ``backend`` are absent/empty."""
    if options is None or not options.backend:
        return GcsFaultToleranceBackend.REDIS.value
    return str(options.backend)


def is_gcs_fault_tolerance_embedded(options: GcsFaultToleranceOptions | None) -> bool:
    """GCS FT uses the embedded RocksDB backend."""
    return options is not None and gcs_fault_tolerance_backend(options) == "rocksdb"


def is_gcs_fault_tolerance_enabled(spec: RayClusterSpec, annotations: Mapping[str, str]) -> bool:
    """Annotation ``ray.io/ft-enabled`` equals ``true`` (any case) or options are set."""
    value = annotations.get(RAY_FT_ENABLED_ANNOTATION_KEY)
    return (
        isinstance(value, str) and value.lower() == "true"
    ) or spec.gcs_fault_tolerance_options is not None


def gcs_storage_pvc_name(cluster_name: str, spec: RayClusterSpec) -> str:
    """``storage.claimName`` when set, else ``<cluster>-gcs-pvc``."""
    options = spec.gcs_fault_tolerance_options
    if options is not None and options.storage is not None and options.storage.claim_name:
        return options.storage.claim_name
    return cluster_name + GCS_STORAGE_PVC_SUFFIX


def gcs_storage_size(spec: RayClusterSpec) -> str | int:
    """Size of the operator-managed GCS PVC: ``storage.size`` or ``1Gi``."""
    options = spec.gcs_fault_tolerance_options
    if options is not None and options.storage is not None and options.storage.size is not None:
        return options.storage.size
    return GCS_STORAGE_DEFAULT_SIZE


def gcs_storage_access_modes(spec: RayClusterSpec) -> list[str]:
    """Access modes of the managed GCS PVC: ``storage.accessModes`` if non-empty, else RWO."""
    options = spec.gcs_fault_tolerance_options
    if options is not None and options.storage is not None and options.storage.access_modes:
        return list(options.storage.access_modes)
    return ["ReadWriteOnce"]


def gcs_storage_deletion_policy(spec: RayClusterSpec) -> str:
    """``storage.deletionPolicy`` or ``DeleteWithCluster``."""
    options = spec.gcs_fault_tolerance_options
    if (
        options is not None
        and options.storage is not None
        and options.storage.deletion_policy is not None
    ):
        return str(options.storage.deletion_policy)
    return GCSStorageDeletionPolicy.DELETE_WITH_CLUSTER.value


def is_auth_enabled(spec: RayClusterSpec) -> bool:
    """Token auth is active only for ``authOptions.mode == "token"`` (no default mode)."""
    return spec.auth_options is not None and spec.auth_options.mode == AuthMode.TOKEN


def is_k8s_auth_enabled(auth_options: AuthOptions | None) -> bool:
    """``authOptions.enableK8sTokenAuth`` is true."""
    return auth_options is not None and auth_options.enable_k8s_token_auth is True


def is_tls_enabled(spec: RayClusterSpec | None, gates: FeatureGates = None) -> bool:
    """mTLS is on: gate RayClusterMTLS and ``tlsOptions.enabled`` true."""
    if not gate_enabled(gates, GATE_RAYCLUSTER_MTLS):
        return False
    return spec is not None and spec.tls_options is not None and spec.tls_options.enabled is True


def network_policy_mode(config: NetworkPolicyConfig) -> str:
    """``networkPolicy.mode``, ``DenyAll`` when unset (matches the CRD default)."""
    return str(config.mode) if config.mode is not None else NetworkPolicyMode.DENY_ALL.value


def ingress_path(options: IngressOptions | None) -> str:
    """Ingress rule path: ``ingressOptions.path`` or ``/``."""
    if options is not None and options.path is not None:
        return options.path
    return DEFAULT_INGRESS_PATH


def ingress_path_type(options: IngressOptions | None) -> str:
    """Ingress rule pathType: ``ingressOptions.pathType`` or ``Prefix``."""
    if options is not None and options.path_type is not None:
        return str(options.path_type)
    return DEFAULT_INGRESS_PATH_TYPE.value


def managed_by_external_controller(managed_by: str | None) -> str | None:
    """The external manager when ``managedBy`` is set to anything but KubeRay, else ``None``
    (``ManagedByExternalController``: such objects are skipped by the reconcilers)."""
    if managed_by is not None and managed_by != KUBERAY_CONTROLLER:
        return managed_by
    return None


def get_crd_type(originated_from_crd: str | None) -> str:
    """``GetCRDType``: RayJob/RayService pass through, anything else means RayCluster."""
    if originated_from_crd in (KIND_RAYJOB, KIND_RAYSERVICE):
        return originated_from_crd
    return KIND_RAYCLUSTER


# --- RayJob effective values ----------------------------------------------------------------
def submission_mode(spec: RayJobSpec) -> str:
    """``submissionMode``; absent means the CRD default ``K8sJobMode``."""
    if spec.submission_mode is None:
        return JobSubmissionMode.K8S_JOB_MODE.value
    return spec.submission_mode


def backoff_limit(spec: RayJobSpec) -> int:
    """``backoffLimit``; absent means the CRD default 0 (no retries)."""
    return spec.backoff_limit if spec.backoff_limit is not None else 0


def shutdown_after_job_finishes(spec: RayJobSpec) -> bool:
    """``shutdownAfterJobFinishes`` (Go bool, absent means false)."""
    return spec.shutdown_after_job_finishes is True


def ttl_seconds_after_finished(spec: RayJobSpec) -> int:
    """``ttlSecondsAfterFinished``; absent means the CRD default 0."""
    return spec.ttl_seconds_after_finished if spec.ttl_seconds_after_finished is not None else 0


def submitter_backoff_limit(spec: RayJobSpec) -> int:
    """``submitterConfig.backoffLimit`` or 2 (K8s Job backoffLimit; sidecar restart budget)."""
    if spec.submitter_config is not None and spec.submitter_config.backoff_limit is not None:
        return spec.submitter_config.backoff_limit
    return DEFAULT_SUBMITTER_BACKOFF_LIMIT


# --- RayService effective values ------------------------------------------------------------
def ray_cluster_deletion_delay_seconds(spec: RayServiceSpec) -> int:
    """``rayClusterDeletionDelaySeconds`` or 60 (0 is honoured)."""
    value = spec.ray_cluster_deletion_delay_seconds
    return value if value is not None else DEFAULT_RAYCLUSTER_DELETION_DELAY_SECONDS


def cluster_upgrade_max_surge_percent(options: ClusterUpgradeOptions) -> int:
    """``maxSurgePercent`` or its CRD default 100."""
    return options.max_surge_percent if options.max_surge_percent is not None else 100


def is_incremental_upgrade_enabled(spec: RayServiceSpec, gates: FeatureGates = None) -> bool:
    """Gate RayServiceIncrementalUpgrade on and type ``NewClusterWithIncrementalUpgrade``."""
    if not gate_enabled(gates, GATE_RAYSERVICE_INCREMENTAL_UPGRADE):
        return False
    strategy = spec.upgrade_strategy
    return (
        strategy is not None
        and strategy.type == RayServiceUpgradeType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE
    )


def is_zero_downtime_upgrade_enabled(
    spec: RayServiceSpec,
    gates: FeatureGates,
    environ: Mapping[str, str],
) -> bool:
    """Whether a changed cluster spec makes a RayService prepare a new cluster.

    ``upgradeStrategy.type`` wins when set: enabled only for ``NewCluster`` (or, with gate
    RayServiceIncrementalUpgrade, also ``NewClusterWithIncrementalUpgrade``). Unset: enabled
    unless the operator's env ``ENABLE_ZERO_DOWNTIME`` (``environ``, passed by the caller: the
    API reads no environment) is ``false`` (any case).
    """
    strategy = spec.upgrade_strategy
    if strategy is not None and strategy.type is not None:
        allowed = {RayServiceUpgradeType.NEW_CLUSTER.value}
        if gate_enabled(gates, GATE_RAYSERVICE_INCREMENTAL_UPGRADE):
            allowed.add(RayServiceUpgradeType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE.value)
        return strategy.type in allowed
    return environ.get("ENABLE_ZERO_DOWNTIME", "").lower() != "false"
