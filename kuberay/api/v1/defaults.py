"""Object defaulting exactly as KubeRay applies it.

``default_raycluster`` & co.: pure functions returning a new model with what the
kube-apiserver fills in from KubeRay's CRD ``default:`` markers, plus (RayCluster only) the
in-memory ``setDefaults`` the controller runs on every reconcile. Fields KubeRay leaves at Go's
zero value stay ``None`` here (Go would omit them on the wire too), so an unstructured
defaulted object is what the apiserver stores.

The effective values KubeRay's controllers use when a field is absent or out of range
(``worker_group_desired_replicas``, ``submission_mode``, ...) are decided in
:mod:`kuberay.api.v1.rules`, on plain dicts, for the controllers and validation alike.
"""

from __future__ import annotations

from typing import Any, TypeVar

from kuberay.api.v1._meta import ApiModel
from kuberay.api.v1.constants import (
    MAX_INT32,
)
from kuberay.api.v1.convert import converter
from kuberay.api.v1.enums import (
    JobSubmissionMode,
    NetworkPolicyMode,
)
from kuberay.api.v1.raycluster_types import (
    RayCluster,
    RayClusterSpec,
    WorkerGroupSpec,
)
from kuberay.api.v1.raycronjob_types import RayCronJob
from kuberay.api.v1.rayjob_types import RayJob, RayJobSpec, RayJobStatus
from kuberay.api.v1.rayservice_types import RayService, RayServiceSpec

__all__ = [
    "crd_defaults_raycluster_spec",
    "crd_defaults_rayjob_spec",
    "crd_defaults_rayservice_spec",
    "default_pod_template_ports",
    "default_raycluster",
    "default_raycronjob",
    "default_rayjob",
    "default_rayservice",
    "default_service_ports",
]

M = TypeVar("M", bound=ApiModel)


def _clone(model: M) -> M:
    result = converter.structure(converter.unstructure(model), type(model))
    assert isinstance(result, type(model))
    return result


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
    ``false``; see :func:`kuberay.api.v1.rules.shutdown_after_job_finishes`).
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
