# ruff: noqa: RUF009 - attribute declarations call jfield(), an attrs.field() wrapper
"""RayService (ray.io/v1): spec, status and nested types, field for field as KubeRay v1.7."""

from __future__ import annotations

from typing import Any

import attrs

from kuberay.api.v1._meta import ApiModel, jfield
from kuberay.api.v1.constants import API_VERSION, KIND_RAYSERVICE
from kuberay.api.v1.raycluster_types import (
    MANAGED_BY_CEL,
    RayClusterSpec,
    RayClusterStatus,
    _ObjectMixin,
)


@attrs.define(kw_only=True)
class ClusterUpgradeOptions(ApiModel):
    """Incremental upgrade tuning (type NewClusterWithIncrementalUpgrade)."""

    max_surge_percent: int | None = jfield("maxSurgePercent", crd_default=100)
    step_size_percent: int = jfield("stepSizePercent", required=True)
    interval_seconds: int = jfield("intervalSeconds", required=True)
    gateway_class_name: str = jfield("gatewayClassName", required=True)


@attrs.define(kw_only=True)
class RayServiceUpgradeStrategy(ApiModel):
    """How a RayService rolls out a changed cluster spec.

    ``type`` is one of NewClusterWithIncrementalUpgrade, NewCluster, None; the CRD leaves it
    an open string and the operator validates it.
    """

    type: str | None = jfield("type")
    cluster_upgrade_options: ClusterUpgradeOptions | None = jfield("clusterUpgradeOptions")


@attrs.define(kw_only=True)
class RayServiceSpec(ApiModel):
    """Desired state of a RayService."""

    ray_cluster_deletion_delay_seconds: int | None = jfield(
        "rayClusterDeletionDelaySeconds", minimum=0
    )
    service_unhealthy_second_threshold: int | None = jfield("serviceUnhealthySecondThreshold")
    deployment_unhealthy_second_threshold: int | None = jfield("deploymentUnhealthySecondThreshold")
    serve_service: dict[str, Any] | None = jfield("serveService", embedded="core/v1.Service")
    upgrade_strategy: RayServiceUpgradeStrategy | None = jfield("upgradeStrategy")
    managed_by: str | None = jfield("managedBy", cel=MANAGED_BY_CEL)
    serve_config_v2: str | None = jfield("serveConfigV2")
    ray_cluster_config: RayClusterSpec = jfield("rayClusterConfig", required=True)
    exclude_head_pod_from_serve_svc: bool | None = jfield("excludeHeadPodFromServeSvc")
    suspend: bool | None = jfield("suspend")


@attrs.define(kw_only=True)
class ServeDeploymentStatus(ApiModel):
    """Status of one Serve deployment."""

    status: str | None = jfield("status")
    message: str | None = jfield("message")


@attrs.define(kw_only=True)
class AppStatus(ApiModel):
    """Status of one Serve application."""

    serve_deployment_statuses: dict[str, ServeDeploymentStatus] | None = jfield(
        "serveDeploymentStatuses"
    )
    status: str | None = jfield("status")
    message: str | None = jfield("message")


@attrs.define(kw_only=True)
class RayServiceStatus(ApiModel):
    """Status of the active or pending RayCluster of a RayService."""

    application_statuses: dict[str, AppStatus] | None = jfield("applicationStatuses")
    target_capacity: int | None = jfield("targetCapacity")
    traffic_routed_percent: int | None = jfield("trafficRoutedPercent")
    last_traffic_migrated_time: str | None = jfield("lastTrafficMigratedTime", date_time=True)
    ray_cluster_name: str | None = jfield("rayClusterName")
    ray_cluster_status: RayClusterStatus | None = jfield("rayClusterStatus")


@attrs.define(kw_only=True)
class RayServiceStatuses(ApiModel):
    """Observed state of a RayService (Go type ``RayServiceStatuses``)."""

    conditions: list[dict[str, Any]] | None = jfield(
        "conditions",
        embedded="meta/v1.Condition",
        list_type="map",
        list_map_keys=["type"],
    )
    last_update_time: str | None = jfield("lastUpdateTime", date_time=True)
    service_status: str | None = jfield("serviceStatus")
    active_service_status: RayServiceStatus | None = jfield("activeServiceStatus")
    pending_service_status: RayServiceStatus | None = jfield("pendingServiceStatus")
    num_serve_endpoints: int | None = jfield("numServeEndpoints")
    observed_generation: int | None = jfield("observedGeneration", int_format="int64")


@attrs.define(kw_only=True)
class RayService(_ObjectMixin, ApiModel):
    """A RayService object. ``metadata`` is the ObjectMeta dict, kept verbatim."""

    api_version: str | None = jfield("apiVersion")
    kind: str | None = jfield("kind")
    metadata: dict[str, Any] | None = jfield("metadata", embedded="meta/v1.ObjectMeta")
    spec: RayServiceSpec | None = jfield("spec")
    status: RayServiceStatuses | None = jfield("status")

    @classmethod
    def create(
        cls,
        *,
        metadata: dict[str, Any],
        spec: RayServiceSpec,
        status: RayServiceStatuses | None = None,
    ) -> RayService:
        """A new object with ``apiVersion``/``kind`` filled in."""
        return cls(
            api_version=API_VERSION,
            kind=KIND_RAYSERVICE,
            metadata=metadata,
            spec=spec,
            status=status,
        )
