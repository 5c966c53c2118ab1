"""Questions about a RayCluster dict that decide what gets built (KubeRay ``utils`` helpers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as c

from . import gates
from .objects import as_map, metadata, spec, str_map

__all__ = [
    "creator_crd_type",
    "gcs_fault_tolerance_backend",
    "head_port",
    "is_auth_enabled",
    "is_autoscaling_enabled",
    "is_autoscaling_v1_enabled",
    "is_autoscaling_v2_enabled",
    "is_gcs_fault_tolerance_embedded",
    "is_gcs_fault_tolerance_enabled",
    "is_history_server_enabled",
    "is_k8s_auth_enabled",
    "is_overwrite_ray_container_cmd",
    "is_serve_service_enabled",
    "is_tls_enabled",
    "should_skip_head_pod_restart",
]


def is_autoscaling_enabled(cluster: Mapping[str, Any]) -> bool:
    """``spec.enableInTreeAutoscaling == true``."""
    return spec(cluster).get("enableInTreeAutoscaling") is True


def _autoscaler_version(cluster: Mapping[str, Any]) -> object:
    return as_map(spec(cluster).get("autoscalerOptions")).get("version")


def is_autoscaling_v2_enabled(cluster: Mapping[str, Any]) -> bool:
    """``autoscalerOptions.version == v2`` (independent of ``enableInTreeAutoscaling``)."""
    return _autoscaler_version(cluster) == c.AUTOSCALER_VERSION_V2


def is_autoscaling_v1_enabled(cluster: Mapping[str, Any]) -> bool:
    """``autoscalerOptions.version == v1``."""
    return _autoscaler_version(cluster) == c.AUTOSCALER_VERSION_V1


def is_gcs_fault_tolerance_enabled(cluster: Mapping[str, Any]) -> bool:
    """Annotation ``ray.io/ft-enabled`` is "true" (any case) or ``gcsFaultToleranceOptions`` set."""
    annotation = as_map(metadata(cluster).get("annotations")).get(c.RAY_FT_ENABLED_ANNOTATION_KEY)
    if isinstance(annotation, str) and annotation.lower() == "true":
        return True
    return spec(cluster).get("gcsFaultToleranceOptions") is not None


def gcs_fault_tolerance_backend(cluster: Mapping[str, Any]) -> str:
    """Configured GCS FT backend; ``redis`` when unset."""
    backend = as_map(spec(cluster).get("gcsFaultToleranceOptions")).get("backend")
    return str(backend) if backend else c.GCS_FT_BACKEND_REDIS


def is_gcs_fault_tolerance_embedded(cluster: Mapping[str, Any]) -> bool:
    """GCS FT options present with the embedded ``rocksdb`` backend."""
    return (
        spec(cluster).get("gcsFaultToleranceOptions") is not None
        and gcs_fault_tolerance_backend(cluster) == c.GCS_FT_BACKEND_ROCKSDB
    )


def is_auth_enabled(cluster: Mapping[str, Any]) -> bool:
    """Token auth is active only for ``authOptions.mode == token``."""
    return as_map(spec(cluster).get("authOptions")).get("mode") == c.AUTH_MODE_TOKEN


def is_k8s_auth_enabled(auth_options: Mapping[str, Any] | None) -> bool:
    """``authOptions.enableK8sTokenAuth == true``."""
    return as_map(auth_options).get("enableK8sTokenAuth") is True


def is_tls_enabled(cluster: Mapping[str, Any], features: Mapping[str, bool] | None) -> bool:
    """Gate ``RayClusterMTLS`` on and ``tlsOptions.enabled == true``."""
    if not gates.feature_enabled(features, gates.RAY_CLUSTER_MTLS):
        return False
    tls = spec(cluster).get("tlsOptions")
    return isinstance(tls, Mapping) and tls.get("enabled") is True


def is_history_server_enabled(
    cluster: Mapping[str, Any], features: Mapping[str, bool] | None
) -> bool:
    """Gate ``RayClusterHistoryServer`` on and ``historyServerOptions.collectorOptions`` set."""
    if not gates.feature_enabled(features, gates.RAY_CLUSTER_HISTORY_SERVER):
        return False
    options = spec(cluster).get("historyServerOptions")
    return isinstance(options, Mapping) and options.get("collectorOptions") is not None


def is_overwrite_ray_container_cmd(cluster: Mapping[str, Any]) -> bool:
    """Annotation ``ray.io/overwrite-container-cmd`` is "true" (any case)."""
    value = as_map(metadata(cluster).get("annotations")).get(
        c.RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY
    )
    return isinstance(value, str) and value.lower() == "true"


def is_serve_service_enabled(cluster: Mapping[str, Any]) -> bool:
    """Annotation ``ray.io/enable-serve-service`` is exactly "true"."""
    annotations = as_map(metadata(cluster).get("annotations"))
    return annotations.get(c.ENABLE_SERVE_SERVICE_KEY) == c.ENABLE_SERVE_SERVICE_TRUE


def should_skip_head_pod_restart(cluster: Mapping[str, Any]) -> bool:
    """Annotation ``ray.io/disable-provisioned-head-restart`` is exactly "true"."""
    annotations = as_map(metadata(cluster).get("annotations"))
    return annotations.get(c.DISABLE_PROVISIONED_HEAD_RESTART_ANNOTATION_KEY) == "true"


def creator_crd_type(cluster: Mapping[str, Any]) -> str:
    """``RayJob``/``RayService`` from ``ray.io/originated-from-crd``, else ``RayCluster``."""
    value = as_map(metadata(cluster).get("labels")).get(c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY)
    if value in (c.KIND_RAYJOB, c.KIND_RAYSERVICE, c.KIND_RAYCLUSTER):
        return str(value)
    return c.KIND_RAYCLUSTER


def head_port(cluster: Mapping[str, Any]) -> str:
    """KubeRay ``GetHeadPort``: head ``rayStartParams.port`` or ``"6379"``."""
    params = str_map(as_map(spec(cluster).get("headGroupSpec")).get("rayStartParams"))
    return params.get("port", str(c.DEFAULT_GCS_SERVER_PORT))
