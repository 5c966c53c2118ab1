# ruff: noqa: RUF009 - attribute declarations call jfield(), an attrs.field() wrapper
"""RayCluster (ray.io/v1): spec, status and every nested type, field for field as KubeRay v1.7.

Attribute names are the snake_case form of the JSON names (recorded in each field's
metadata). An attribute that is ``None`` is absent from the JSON object. Embedded Kubernetes
types (pod templates, Services, resource requirements, env vars, ...) are plain dicts kept
verbatim.
"""

from __future__ import annotations

from typing import Any

import attrs

from kuberay.api.v1._meta import ApiModel, CelRule, jfield
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER, MAX_INT32
from kuberay.api.v1.enums import (
    AuthMode,
    AutoscalerVersion,
    GcsFaultToleranceBackend,
    GCSStorageDeletionPolicy,
    IngressPathType,
    NetworkPolicyMode,
    RayClusterUpgradeType,
    UpscalingMode,
)

#: CEL rules KubeRay puts on every ``managedBy`` field.
MANAGED_BY_CEL: tuple[CelRule, ...] = (
    CelRule(rule="self == oldSelf", message="the managedBy field is immutable"),
    CelRule(
        rule="self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue']",
        message=(
            "the managedBy field value must be either 'ray.io/kuberay-operator' or "
            "'kueue.x-k8s.io/multikueue'"
        ),
    ),
)
GCS_BACKEND_CEL: tuple[CelRule, ...] = (
    CelRule(rule="self == oldSelf", message="gcsFaultToleranceOptions.backend is immutable"),
)


class _ObjectMixin:
    """Convenience accessors over the ``metadata`` dict of a top-level object."""

    __slots__ = ()
    metadata: dict[str, Any] | None

    @property
    def name(self) -> str:
        """``metadata.name`` or ``""``."""
        value = (self.metadata or {}).get("name")
        return value if isinstance(value, str) else ""

    @property
    def namespace(self) -> str:
        """``metadata.namespace`` or ``""``."""
        value = (self.metadata or {}).get("namespace")
        return value if isinstance(value, str) else ""

    @property
    def labels(self) -> dict[str, str]:
        """``metadata.labels`` (a fresh empty dict when absent)."""
        value = (self.metadata or {}).get("labels")
        return value if isinstance(value, dict) else {}

    @property
    def annotations(self) -> dict[str, str]:
        """``metadata.annotations`` (a fresh empty dict when absent)."""
        value = (self.metadata or {}).get("annotations")
        return value if isinstance(value, dict) else {}


# --- spec pieces ----------------------------------------------------------------------------
@attrs.define(kw_only=True)
class RayClusterUpgradeStrategy(ApiModel):
    """How RayCluster pods are upgraded when the spec changes."""

    type: RayClusterUpgradeType | None = jfield("type", enum=list(RayClusterUpgradeType))


@attrs.define(kw_only=True)
class AuthOptions(ApiModel):
    """Ray token authentication. Active only when ``mode == "token"`` (no CRD default)."""

    enable_k8s_token_auth: bool | None = jfield("enableK8sTokenAuth")
    secret_name: str | None = jfield("secretName")
    mode: AuthMode | None = jfield("mode", enum=list(AuthMode))


@attrs.define(kw_only=True)
class RedisCredential(ApiModel):
    """A Redis username/password given literally or by reference."""

    value_from: dict[str, Any] | None = jfield("valueFrom", embedded="core/v1.EnvVarSource")
    value: str | None = jfield("value")


@attrs.define(kw_only=True)
class GcsEmbeddedStorage(ApiModel):
    """The PVC backing the embedded RocksDB GCS store (backend ``rocksdb``)."""

    claim_name: str | None = jfield("claimName")
    size: str | int | None = jfield("size", quantity=True)
    storage_class_name: str | None = jfield("storageClassName")
    access_modes: list[str] | None = jfield("accessModes")
    sub_path: str | None = jfield("subPath")
    deletion_policy: GCSStorageDeletionPolicy | None = jfield(
        "deletionPolicy", enum=list(GCSStorageDeletionPolicy)
    )


@attrs.define(kw_only=True)
class GcsFaultToleranceOptions(ApiModel):
    """GCS fault tolerance (external Redis, or embedded RocksDB behind a gate)."""

    backend: GcsFaultToleranceBackend | None = jfield(
        "backend", enum=list(GcsFaultToleranceBackend), cel=GCS_BACKEND_CEL
    )
    redis_username: RedisCredential | None = jfield("redisUsername")
    redis_password: RedisCredential | None = jfield("redisPassword")
    external_storage_namespace: str | None = jfield("externalStorageNamespace")
    redis_address: str | None = jfield("redisAddress")
    storage: GcsEmbeddedStorage | None = jfield("storage")


@attrs.define(kw_only=True)
class CollectorOptions(ApiModel):
    """The history-server collector sidecar."""

    image: str | None = jfield("image")
    image_pull_policy: str | None = jfield("imagePullPolicy")
    resources: dict[str, Any] | None = jfield("resources", embedded="core/v1.ResourceRequirements")
    env: list[dict[str, Any]] | None = jfield("env", embedded="core/v1.EnvVar")


@attrs.define(kw_only=True)
class HistoryServerOptions(ApiModel):
    """History server settings (gate RayClusterHistoryServer)."""

    collector_options: CollectorOptions | None = jfield("collectorOptions")


@attrs.define(kw_only=True)
class NetworkPolicyRules(ApiModel):
    """Extra ingress/egress rules appended to a generated NetworkPolicy."""

    ingress_rules: list[dict[str, Any]] | None = jfield(
        "ingressRules", embedded="networking/v1.NetworkPolicyIngressRule"
    )
    egress_rules: list[dict[str, Any]] | None = jfield(
        "egressRules", embedded="networking/v1.NetworkPolicyEgressRule"
    )


@attrs.define(kw_only=True)
class WorkerGroupNetworkPolicyRules(ApiModel):
    """Per worker group NetworkPolicy rules (replace ``worker`` for that group)."""

    group_name: str = jfield("groupName", required=True)
    ingress_rules: list[dict[str, Any]] | None = jfield(
        "ingressRules", embedded="networking/v1.NetworkPolicyIngressRule"
    )
    egress_rules: list[dict[str, Any]] | None = jfield(
        "egressRules", embedded="networking/v1.NetworkPolicyEgressRule"
    )


@attrs.define(kw_only=True)
class NetworkPolicyConfig(ApiModel):
    """Network isolation (gate RayClusterNetworkPolicy)."""

    mode: NetworkPolicyMode | None = jfield(
        "mode", enum=list(NetworkPolicyMode), crd_default=NetworkPolicyMode.DENY_ALL.value
    )
    head: NetworkPolicyRules | None = jfield("head")
    worker: NetworkPolicyRules | None = jfield("worker")
    worker_groups: list[WorkerGroupNetworkPolicyRules] | None = jfield(
        "workerGroups", list_type="map", list_map_keys=["groupName"]
    )


@attrs.define(kw_only=True)
class TLSOptions(ApiModel):
    """mTLS between Ray pods (gate RayClusterMTLS, needs cert-manager)."""

    enabled: bool | None = jfield("enabled")


@attrs.define(kw_only=True)
class IngressOptions(ApiModel):
    """Ingress for the head dashboard (operator defaults: path ``/``, pathType Prefix)."""

    host: str | None = jfield("host")
    path: str | None = jfield("path")
    path_type: IngressPathType | None = jfield("pathType", enum=list(IngressPathType))
    tls: list[dict[str, Any]] | None = jfield("tls", embedded="networking/v1.IngressTLS")


@attrs.define(kw_only=True)
class HeadGroupSpec(ApiModel):
    """The head pod."""

    template: dict[str, Any] = jfield("template", required=True, embedded="core/v1.PodTemplateSpec")
    head_service: dict[str, Any] | None = jfield("headService", embedded="core/v1.Service")
    enable_ingress: bool | None = jfield("enableIngress")
    ingress_options: IngressOptions | None = jfield("ingressOptions")
    resources: dict[str, str] | None = jfield("resources")
    labels: dict[str, str] | None = jfield("labels")
    ray_start_params: dict[str, str] | None = jfield("rayStartParams")
    service_type: str | None = jfield("serviceType")


@attrs.define(kw_only=True)
class ScaleGate(ApiModel):
    """One reason a worker group may not scale up now (KubeRay v1.8, #5094), keyed by ``type``:
    a domain-prefixed name such as ``kueue.k8s.io/quota-exceeded``. Written and removed by
    an external controller (Kueue) with server-side apply; the Ray autoscaler v2 reads it."""

    type: str = jfield("type", required=True, min_length=1)


@attrs.define(kw_only=True)
class ScaleStrategy(ApiModel):
    """Which worker pods the autoscaler wants removed, and the gates other controllers put on
    scaling the group up. The operator never reads or writes ``scaleGate``; it keeps it."""

    workers_to_delete: list[str] | None = jfield("workersToDelete")
    scale_gate: list[ScaleGate] | None = jfield(
        "scaleGate", list_type="map", list_map_keys=("type",)
    )


@attrs.define(kw_only=True)
class NodeFieldRef(ApiModel):
    """A field of the Node a worker pod is bound to; only ``metadata.labels['<key>']``."""

    field_path: str = jfield("fieldPath", required=True)


@attrs.define(kw_only=True)
class LabelRefSource(ApiModel):
    """Where a delivered Ray node label's value comes from."""

    node_ref: NodeFieldRef = jfield("nodeRef", required=True)


@attrs.define(kw_only=True)
class LabelRef(ApiModel):
    """One Ray node label delivered from the bound Node (KubeRay v1.8, gate
    NodeLabelDelivery): ``name`` is the Ray label key (empty: the node label key itself)."""

    name: str | None = jfield("name")
    value_from: LabelRefSource = jfield("valueFrom", required=True)


@attrs.define(kw_only=True)
class WorkerGroupSpec(ApiModel):
    """One worker group.

    CRD defaults: ``replicas`` 0, ``minReplicas`` 0, ``maxReplicas`` 2147483647,
    ``priority`` 0, ``numOfHosts`` 1 (see :mod:`kuberay.api.v1.defaults`).
    """

    suspend: bool | None = jfield("suspend")
    group_name: str = jfield("groupName", required=True)
    replicas: int | None = jfield("replicas", crd_default=0)
    min_replicas: int | None = jfield("minReplicas", crd_default=0)
    max_replicas: int | None = jfield("maxReplicas", crd_default=MAX_INT32)
    idle_timeout_seconds: int | None = jfield("idleTimeoutSeconds")
    priority: int | None = jfield("priority", crd_default=0)
    resources: dict[str, str] | None = jfield("resources")
    labels: dict[str, str] | None = jfield("labels")
    ray_start_params: dict[str, str] | None = jfield("rayStartParams")
    template: dict[str, Any] = jfield("template", required=True, embedded="core/v1.PodTemplateSpec")
    scale_strategy: ScaleStrategy | None = jfield("scaleStrategy")
    num_of_hosts: int | None = jfield("numOfHosts", crd_default=1)
    label_refs: list[LabelRef] | None = jfield("labelRefs")


@attrs.define(kw_only=True)
class AutoscalerOptions(ApiModel):
    """The in-tree Ray autoscaler sidecar."""

    resources: dict[str, Any] | None = jfield("resources", embedded="core/v1.ResourceRequirements")
    image: str | None = jfield("image")
    image_pull_policy: str | None = jfield("imagePullPolicy")
    security_context: dict[str, Any] | None = jfield(
        "securityContext", embedded="core/v1.SecurityContext"
    )
    idle_timeout_seconds: int | None = jfield("idleTimeoutSeconds")
    upscaling_mode: UpscalingMode | None = jfield("upscalingMode", enum=list(UpscalingMode))
    version: AutoscalerVersion | None = jfield("version", enum=list(AutoscalerVersion))
    env: list[dict[str, Any]] | None = jfield("env", embedded="core/v1.EnvVar")
    env_from: list[dict[str, Any]] | None = jfield("envFrom", embedded="core/v1.EnvFromSource")
    volume_mounts: list[dict[str, Any]] | None = jfield(
        "volumeMounts", embedded="core/v1.VolumeMount"
    )
    command: list[str] | None = jfield("command")
    args: list[str] | None = jfield("args")


@attrs.define(kw_only=True)
class RayClusterSpec(ApiModel):
    """Desired state of a RayCluster (also embedded in RayJob, RayService and RayCronJob)."""

    upgrade_strategy: RayClusterUpgradeStrategy | None = jfield("upgradeStrategy")
    auth_options: AuthOptions | None = jfield("authOptions")
    suspend: bool | None = jfield("suspend")
    managed_by: str | None = jfield("managedBy", cel=MANAGED_BY_CEL)
    autoscaler_options: AutoscalerOptions | None = jfield("autoscalerOptions")
    head_service_annotations: dict[str, str] | None = jfield("headServiceAnnotations")
    enable_in_tree_autoscaling: bool | None = jfield("enableInTreeAutoscaling")
    gcs_fault_tolerance_options: GcsFaultToleranceOptions | None = jfield(
        "gcsFaultToleranceOptions"
    )
    history_server_options: HistoryServerOptions | None = jfield("historyServerOptions")
    network_policy: NetworkPolicyConfig | None = jfield("networkPolicy")
    tls_options: TLSOptions | None = jfield("tlsOptions")
    head_group_spec: HeadGroupSpec = jfield("headGroupSpec", required=True)
    ray_version: str | None = jfield("rayVersion")
    worker_group_specs: list[WorkerGroupSpec] | None = jfield("workerGroupSpecs")


# --- status ---------------------------------------------------------------------------------
@attrs.define(kw_only=True)
class HeadInfo(ApiModel):
    """Addresses of the head pod and head Service."""

    pod_ip: str | None = jfield("podIP")
    service_ip: str | None = jfield("serviceIP")
    pod_name: str | None = jfield("podName")
    service_name: str | None = jfield("serviceName")


@attrs.define(kw_only=True)
class RayClusterStatus(ApiModel):
    """Observed state of a RayCluster."""

    state: str | None = jfield("state")
    desired_cpu: str | int | None = jfield("desiredCPU", quantity=True)
    desired_memory: str | int | None = jfield("desiredMemory", quantity=True)
    desired_gpu: str | int | None = jfield("desiredGPU", quantity=True)
    desired_tpu: str | int | None = jfield("desiredTPU", quantity=True)
    last_update_time: str | None = jfield("lastUpdateTime", date_time=True, nullable=True)
    state_transition_times: dict[str, str] | None = jfield("stateTransitionTimes", date_time=True)
    endpoints: dict[str, str] | None = jfield("endpoints")
    head: HeadInfo | None = jfield("head")
    reason: str | None = jfield("reason")
    conditions: list[dict[str, Any]] | None = jfield(
        "conditions",
        embedded="meta/v1.Condition",
        list_type="map",
        list_map_keys=["type"],
    )
    ready_worker_replicas: int | None = jfield("readyWorkerReplicas")
    available_worker_replicas: int | None = jfield("availableWorkerReplicas")
    desired_worker_replicas: int | None = jfield("desiredWorkerReplicas")
    min_worker_replicas: int | None = jfield("minWorkerReplicas")
    max_worker_replicas: int | None = jfield("maxWorkerReplicas")
    observed_generation: int | None = jfield("observedGeneration", int_format="int64")


# --- top level ------------------------------------------------------------------------------
@attrs.define(kw_only=True)
class RayCluster(_ObjectMixin, ApiModel):
    """A RayCluster object. ``metadata`` is the ObjectMeta dict, kept verbatim."""

    api_version: str | None = jfield("apiVersion")
    kind: str | None = jfield("kind")
    metadata: dict[str, Any] | None = jfield("metadata", embedded="meta/v1.ObjectMeta")
    spec: RayClusterSpec | None = jfield("spec")
    status: RayClusterStatus | None = jfield("status")

    @classmethod
    def create(
        cls,
        *,
        metadata: dict[str, Any],
        spec: RayClusterSpec,
        status: RayClusterStatus | None = None,
    ) -> RayCluster:
        """A new object with ``apiVersion``/``kind`` filled in."""
        return cls(
            api_version=API_VERSION,
            kind=KIND_RAYCLUSTER,
            metadata=metadata,
            spec=spec,
            status=status,
        )
