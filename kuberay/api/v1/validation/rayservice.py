"""RayService validation (``ValidateRayServiceSpec``, metadata) and its update rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1.constants import (
    MAX_RAYSERVICE_NAME_LENGTH,
    RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION,
)
from kuberay.api.v1.convert import join_path
from kuberay.api.v1.enums import (
    RayServiceUpgradeType,
)
from kuberay.api.v1.gates import FeatureGates
from kuberay.api.v1.rayservice_types import RayService, RayServiceSpec
from kuberay.api.v1.rules import (
    cluster_upgrade_max_surge_percent,
    is_autoscaling_enabled,
    is_incremental_upgrade_enabled,
    is_k8s_auth_enabled,
)
from kuberay.api.v1.validation.common import (
    _as_dict,
    _cel_cluster_spec,
    _cel_managed_by,
    _coerce,
    _crd_errors,
    _empty_cluster_spec,
    _Errors,
    _immutable,
    _validate_name,
    _wrap,
    rule_dict,
    rule_object,
)
from kuberay.api.v1.validation.errors import FieldError
from kuberay.api.v1.validation.names import validate_service_spec_names
from kuberay.api.v1.validation.raycluster import (
    _cluster_transitions,
    _validate_cluster_spec,
)
from kuberay.gocompat.goutil import go_atoi, parse_go_duration


# --- RayService -----------------------------------------------------------------------------
def _initializing_timeout_error(annotations: Mapping[str, str]) -> str | None:
    value = annotations.get(RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION, "")
    if not value:
        return None
    key = RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION
    try:
        duration = parse_go_duration(value)
    except ValueError:
        pass
    else:
        if duration <= 0:
            return f"annotation {key} must be a positive duration, got: {value}"
        return None
    try:
        seconds = go_atoi(value)
    except ValueError:
        pass
    else:
        if seconds <= 0:
            return f"annotation {key} must be a positive integer (seconds), got: {value}"
        return None
    return (
        f"annotation {key} has invalid format: {value}. Expected Go duration format (e.g., '5m', "
        "'1h') or positive integer seconds"
    )


def _validate_cluster_upgrade_options(errors: _Errors, base: str, spec: RayServiceSpec) -> None:
    prefix = "The RayService spec is invalid: "
    opath = join_path(base, "upgradeStrategy.clusterUpgradeOptions")
    if not is_autoscaling_enabled(rule_object(spec.ray_cluster_config)):
        errors.add(
            join_path(base, "rayClusterConfig.enableInTreeAutoscaling"),
            prefix + "Ray Autoscaler is required for NewClusterWithIncrementalUpgrade",
        )
    options = spec.upgrade_strategy.cluster_upgrade_options if spec.upgrade_strategy else None
    if options is None:
        errors.add(
            opath,
            prefix + "ClusterUpgradeOptions are required for NewClusterWithIncrementalUpgrade",
        )
        return
    max_surge = cluster_upgrade_max_surge_percent(rule_dict(options))
    if not 0 <= max_surge <= 100:
        errors.add(f"{opath}.maxSurgePercent", prefix + "maxSurgePercent must be between 0 and 100")
    step = options.step_size_percent
    if step is None or not 0 <= step <= 100:
        errors.add(f"{opath}.stepSizePercent", prefix + "stepSizePercent must be between 0 and 100")
    if step is not None and step > max_surge:
        errors.add(
            f"{opath}.stepSizePercent",
            prefix + "stepSizePercent must be less than or equal to maxSurgePercent",
        )
    if options.interval_seconds is None or options.interval_seconds <= 0:
        errors.add(f"{opath}.intervalSeconds", prefix + "intervalSeconds must be greater than 0")
    if not options.gateway_class_name:
        errors.add(
            f"{opath}.gatewayClassName",
            prefix + "gatewayClassName is required for NewClusterWithIncrementalUpgrade",
        )


def validate_rayservice(
    service: RayService | Mapping[str, Any], *, gates: FeatureGates = None
) -> list[FieldError]:
    """Every error KubeRay would raise for a RayService.

    Order: ``crd``; ``metadata`` (name ≤ 47, DNS-1035, ``ray.io/initializing-timeout``);
    ``spec`` (``ValidateRayServiceSpec``; cluster errors prefixed
    ``"The RayService spec is invalid: "``).
    """
    model = _coerce(RayService, service)
    if isinstance(model, list):
        return model

    def cel(errs: list[FieldError]) -> None:
        if model.spec is not None:
            _cel_managed_by(model.spec.managed_by, "spec.managedBy", errs)
            _cel_cluster_spec(model.spec.ray_cluster_config, "spec.rayClusterConfig", errs)

    out = _crd_errors(model, cel)
    annotations = model.annotations
    metadata = _Errors("metadata")
    prefix = "The RayService metadata is invalid: "
    _validate_name(metadata, "RayService", model.name, MAX_RAYSERVICE_NAME_LENGTH, prefix)
    timeout_error = _initializing_timeout_error(annotations)
    if timeout_error:
        metadata.add(
            f"metadata.annotations[{RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION}]",
            f"{prefix}RayService annotations is invalid: {timeout_error}",
        )
    out.extend(metadata.items)

    spec = model.spec or RayServiceSpec(ray_cluster_config=_empty_cluster_spec())
    errors = _Errors("spec")
    cluster = spec.ray_cluster_config
    cbase = "spec.rayClusterConfig"
    if is_k8s_auth_enabled(rule_dict(cluster.auth_options)):
        errors.add(
            f"{cbase}.authOptions.enableK8sTokenAuth",
            "The RayService spec is invalid: K8s token auth mode is currently not supported for "
            "RayService",
        )
    errors.extend(
        _wrap(
            _validate_cluster_spec(cluster, annotations, cbase, gates),
            "The RayService spec is invalid: ",
        )
    )
    head_service = cluster.head_group_spec.head_service
    if head_service is not None and _as_dict(head_service.get("metadata")).get("name"):
        errors.add(
            f"{cbase}.headGroupSpec.headService.metadata.name",
            "The RayService spec is invalid: "
            "spec.rayClusterConfig.headGroupSpec.headService.metadata.name should not be set",
        )
    strategy = spec.upgrade_strategy
    if (
        strategy is not None
        and strategy.type is not None
        and strategy.type
        not in (
            RayServiceUpgradeType.NONE,
            RayServiceUpgradeType.NEW_CLUSTER,
            RayServiceUpgradeType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE,
        )
    ):
        errors.add(
            "spec.upgradeStrategy.type",
            f"The RayService spec is invalid: Spec.UpgradeStrategy.Type value {strategy.type} is "
            "invalid, valid options are NewClusterWithIncrementalUpgrade, NewCluster, or None",
        )
    delay = spec.ray_cluster_deletion_delay_seconds
    if delay is not None and delay < 0:
        errors.add(
            "spec.rayClusterDeletionDelaySeconds",
            "The RayService spec is invalid: Spec.RayClusterDeletionDelaySeconds should be a "
            f"non-negative integer, got {delay}",
        )
    if is_incremental_upgrade_enabled(rule_object(spec), gates):
        _validate_cluster_upgrade_options(errors, "spec", spec)
    validate_service_spec_names(errors, "spec", spec.serve_service)
    out.extend(errors.items)
    return out


def validate_rayservice_update(
    old: RayService | Mapping[str, Any],
    new: RayService | Mapping[str, Any],
    *,
    gates: FeatureGates = None,
) -> list[FieldError]:
    """Errors of a RayService update: immutable ``managedBy`` fields and GCS FT backend, then
    :func:`validate_rayservice` of the new object."""
    old_model, new_model = _coerce(RayService, old), _coerce(RayService, new)
    if isinstance(new_model, list):
        return new_model
    out: list[FieldError] = []
    if (
        not isinstance(old_model, list)
        and old_model.spec is not None
        and new_model.spec is not None
    ):
        _immutable(
            old_model.spec.managed_by,
            new_model.spec.managed_by,
            "spec.managedBy",
            "the managedBy field is immutable",
            out,
        )
        _cluster_transitions(
            old_model.spec.ray_cluster_config,
            new_model.spec.ray_cluster_config,
            "spec.rayClusterConfig",
            out,
        )
    return out + validate_rayservice(new_model, gates=gates)
