"""RayCluster validation (``ValidateRayClusterSpec``, metadata, upgrade options, status,
webhook) and its update (CEL transition) rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1.constants import (
    COLLECTOR_CONTAINER_NAME,
    GATE_RAYCLUSTER_HISTORY_SERVER,
    GATE_RAYCLUSTER_MTLS,
    GATE_RAYCLUSTER_NETWORK_POLICY,
    GATE_RAYJOB_DELETION_POLICY,
    KIND_RAYJOB,
    KIND_RAYSERVICE,
    KUBERAY_GEN_AUTOSCALER_START_CMD,
    MAX_RAYCLUSTER_NAME_LENGTH,
    RAY_ENABLE_AUTOSCALER_V2,
    RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY,
    RAY_FT_ENABLED_ANNOTATION_KEY,
    RAY_REDIS_ADDRESS,
    REDIS_PASSWORD,
    REDIS_USERNAME,
)
from kuberay.api.v1.convert import join_path
from kuberay.api.v1.enums import (
    RayClusterConditionType,
    RayClusterUpgradeType,
)
from kuberay.api.v1.gates import FeatureGates, gate_enabled
from kuberay.api.v1.raycluster_types import (
    HeadGroupSpec,
    RayCluster,
    RayClusterSpec,
    WorkerGroupSpec,
)
from kuberay.api.v1.rules import (
    autoscaler_v2_env_enabled,
    creator_crd_type,
    is_autoscaling_enabled,
    is_autoscaling_v1_enabled,
    is_autoscaling_v2_enabled,
    is_gcs_fault_tolerance_enabled,
)
from kuberay.api.v1.validation.common import (
    _cel_cluster_spec,
    _coerce,
    _condition_true,
    _containers,
    _crd_errors,
    _empty_cluster_spec,
    _env_dicts,
    _env_index,
    _env_list,
    _env_value,
    _Errors,
    _immutable,
    _param,
    _restart_policy,
    _validate_name,
    rule_object,
)
from kuberay.api.v1.validation.errors import FieldError
from kuberay.api.v1.validation.label_refs import label_refs_spec_errors
from kuberay.api.v1.validation.names import validate_cluster_spec_names
from kuberay.api.v1.validation.raycluster_features import (
    _validate_auth,
    _validate_collector_options,
    _validate_gcs_backend,
    _validate_network_policy,
    _validate_tls,
)
from kuberay.gocompat.goutil import is_qualified_name, is_valid_label_value
from kuberay.gocompat.versions import parse_generic


# --- RayCluster spec ------------------------------------------------------------------------
def _validate_group_resources(
    group: str, params: Mapping[str, str] | None, resources: Mapping[str, str] | None
) -> str | None:
    has_ray_start_resources = any(
        _param(params, key) != "" for key in ("num-cpus", "num-gpus", "memory", "resources")
    )
    if has_ray_start_resources and resources:
        return (
            "resource fields should not be set in both rayStartParams and Resources for "
            f"{group} group; please use only one"
        )
    return None


def _validate_group_labels(
    errors: _Errors,
    path: str,
    group: str,
    params: Mapping[str, str] | None,
    labels: Mapping[str, str] | None,
) -> None:
    if params is not None and "labels" in params:
        errors.add(
            join_path(path, "rayStartParams[labels]"),
            f"rayStartParams['labels'] is not supported for {group} group; please use the "
            "top-level Labels field instead",
        )
        return
    for key, value in (labels or {}).items():
        for err in is_qualified_name(key):
            errors.add(
                join_path(path, f"labels[{key}]"),
                f"invalid label key for {group} group: '{key}', error: {err}",
            )
        for err in is_valid_label_value(value):
            errors.add(
                join_path(path, f"labels[{key}]"),
                f"invalid label value for key '{key}' in {group} group: '{value}', error: {err}",
            )


def _env_truthy_v2(head_env: list[Mapping[str, Any]]) -> bool:
    index = _env_index(RAY_ENABLE_AUTOSCALER_V2, head_env)
    return index is not None and autoscaler_v2_env_enabled(_env_value(head_env[index]))


def _validate_worker_idle_timeout(
    errors: _Errors,
    path: str,
    group: WorkerGroupSpec,
    spec: RayClusterSpec,
    head_env: list[Mapping[str, Any]],
) -> None:
    value = group.idle_timeout_seconds
    if value is None:
        return
    if value < 0:
        errors.add(
            join_path(path, "idleTimeoutSeconds"),
            f"worker group {group.group_name}: idleTimeoutSeconds must be non-negative, "
            f"got {value}",
        )
        return
    if is_autoscaling_v2_enabled(rule_object(spec)) or _env_truthy_v2(head_env):
        return
    errors.add(
        join_path(path, "idleTimeoutSeconds"),
        f"worker group {group.group_name}: idleTimeoutSeconds is set, but autoscaler v2 is not "
        "enabled. Please set .spec.autoscalerOptions.version to 'v2' (or set "
        f"{RAY_ENABLE_AUTOSCALER_V2} environment variable to 'true' in the head pod if using "
        "KubeRay < 1.4.0)",
    )


def _validate_worker_priority(
    errors: _Errors,
    path: str,
    group: WorkerGroupSpec,
    spec: RayClusterSpec,
    head_env: list[Mapping[str, Any]],
) -> None:
    priority = group.priority
    if priority is None or priority == 0:
        return
    ppath = join_path(path, "priority")
    name = group.group_name
    ray_version = spec.ray_version or ""
    if ray_version == "":
        errors.add(
            ppath,
            f"worker group {name}: priority is set, but RayVersion was not specified. Ray "
            "version 2.56.0 or later is required",
        )
        return
    try:
        version = parse_generic(ray_version)
    except ValueError as exc:
        errors.add(
            ppath,
            f"worker group {name}: priority is set, but RayVersion format is invalid: "
            f"{ray_version}, {exc}",
        )
        return
    if version.less_than((2, 56, 0)):
        errors.add(
            ppath,
            f"worker group {name}: priority is set, but minimum Ray version is 2.56.0, "
            f"got {ray_version}",
        )
        return
    if is_autoscaling_v2_enabled(rule_object(spec)) or _env_truthy_v2(head_env):
        return
    errors.add(
        ppath,
        f"worker group {name}: priority is set to {priority}, but autoscaler v2 is not "
        "enabled. Priority is only supported with autoscaler v2 enabled",
    )


def _validate_cluster_spec(
    spec: RayClusterSpec,
    annotations: Mapping[str, str],
    base: str,
    gates: FeatureGates,
) -> list[FieldError]:
    """``ValidateRayClusterSpec``, every rule, in KubeRay's order (messages unprefixed)."""
    errors = _Errors("spec")
    head: HeadGroupSpec = spec.head_group_spec
    head_base = join_path(base, "headGroupSpec")
    head_containers = _containers(head.template)
    head_container = head_containers[0] if head_containers else None
    head_cpath = f"{head_base}.template.spec.containers[0]"
    head_env = _env_list(head_container)
    if not head_containers:
        errors.add(
            f"{head_base}.template.spec.containers",
            "headGroupSpec should have at least one container",
        )
    message = _validate_group_resources("Head", head.ray_start_params, head.resources)
    if message:
        errors.add(f"{head_base}.resources", message)
    _validate_group_labels(errors, head_base, "Head", head.ray_start_params, head.labels)

    autoscaling = is_autoscaling_enabled(rule_object(spec))
    groups = spec.worker_group_specs or []
    for i, group in enumerate(groups):
        gpath = join_path(base, f"workerGroupSpecs[{i}]")
        name = group.group_name
        if not _containers(group.template):
            errors.add(
                f"{gpath}.template.spec.containers",
                "workerGroupSpec should have at least one container",
            )
        if not autoscaling and (group.min_replicas is None or group.max_replicas is None):
            missing = "minReplicas" if group.min_replicas is None else "maxReplicas"
            errors.add(
                f"{gpath}.{missing}",
                f"worker group {name} must set both minReplicas and maxReplicas when "
                "autoscaling is disabled",
            )
        if group.min_replicas is not None and group.min_replicas < 0:
            errors.add(
                f"{gpath}.minReplicas",
                f"worker group {name} has negative minReplicas {group.min_replicas}",
            )
        if group.max_replicas is not None and group.max_replicas < 0:
            errors.add(
                f"{gpath}.maxReplicas",
                f"worker group {name} has negative maxReplicas {group.max_replicas}",
            )
        if (
            group.min_replicas is not None
            and group.max_replicas is not None
            and group.min_replicas > group.max_replicas
        ):
            errors.add(
                f"{gpath}.minReplicas",
                f"worker group {name} has minReplicas {group.min_replicas} greater than "
                f"maxReplicas {group.max_replicas}",
            )
        message = _validate_group_resources(name, group.ray_start_params, group.resources)
        if message:
            errors.add(f"{gpath}.resources", message)
        _validate_group_labels(errors, gpath, name, group.ray_start_params, group.labels)
        _validate_worker_idle_timeout(errors, gpath, group, spec, head_env)
        _validate_worker_priority(errors, gpath, group, spec, head_env)

    options = spec.gcs_fault_tolerance_options
    if annotations.get(RAY_FT_ENABLED_ANNOTATION_KEY, "") != "" and options is not None:
        errors.add(
            f"metadata.annotations[{RAY_FT_ENABLED_ANNOTATION_KEY}]",
            f"{RAY_FT_ENABLED_ANNOTATION_KEY} annotation and GcsFaultToleranceOptions are both "
            "set. Please use only GcsFaultToleranceOptions to configure GCS fault tolerance",
        )
    redis_address_index = _env_index(RAY_REDIS_ADDRESS, head_env)
    if (
        not is_gcs_fault_tolerance_enabled(rule_object(spec, annotations=annotations))
        and redis_address_index is not None
    ):
        errors.add(
            f"{head_cpath}.env[{redis_address_index}]",
            f"{RAY_REDIS_ADDRESS} is set which implicitly enables GCS fault tolerance, but "
            "GcsFaultToleranceOptions is not set. Please set GcsFaultToleranceOptions to enable "
            "GCS fault tolerance",
        )
    if options is not None:
        opath = join_path(base, "gcsFaultToleranceOptions")
        if _param(head.ray_start_params, "redis-password") != "":
            errors.add(
                f"{head_base}.rayStartParams[redis-password]",
                "cannot set `redis-password` in rayStartParams when GcsFaultToleranceOptions is "
                "enabled - use GcsFaultToleranceOptions.RedisPassword instead",
            )
        index = _env_index(REDIS_PASSWORD, head_env)
        if index is not None:
            errors.add(
                f"{head_cpath}.env[{index}]",
                "cannot set `REDIS_PASSWORD` env var in head Pod when GcsFaultToleranceOptions "
                "is enabled - use GcsFaultToleranceOptions.RedisPassword instead",
            )
        if redis_address_index is not None:
            errors.add(
                f"{head_cpath}.env[{redis_address_index}]",
                "cannot set `RAY_REDIS_ADDRESS` env var in head Pod when "
                "GcsFaultToleranceOptions is enabled - use GcsFaultToleranceOptions.RedisAddress "
                "instead",
            )
        if annotations.get(RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY, "") != "":
            errors.add(
                f"metadata.annotations[{RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY}]",
                "cannot set `ray.io/external-storage-namespace` annotation when "
                "GcsFaultToleranceOptions is enabled - use "
                "GcsFaultToleranceOptions.ExternalStorageNamespace instead",
            )
        _validate_gcs_backend(
            errors, opath, head_cpath, options, head_container, head.template, gates
        )
    username_index = _env_index(REDIS_USERNAME, head_env)
    if _param(head.ray_start_params, "redis-username") != "" or username_index is not None:
        upath = (
            f"{head_base}.rayStartParams[redis-username]"
            if _param(head.ray_start_params, "redis-username") != ""
            else f"{head_cpath}.env[{username_index}]"
        )
        errors.add(
            upath,
            "cannot set redis username in rayStartParams or environment variables - use "
            "GcsFaultToleranceOptions.RedisUsername instead",
        )

    if not gate_enabled(gates, GATE_RAYJOB_DELETION_POLICY):
        for i, group in enumerate(groups):
            if group.suspend:
                errors.add(
                    join_path(base, f"workerGroupSpecs[{i}].suspend"),
                    f"worker group {group.group_name} can be suspended only when the "
                    "RayJobDeletionPolicy feature gate is enabled",
                )

    v2_index = _env_index(RAY_ENABLE_AUTOSCALER_V2, head_env)
    if not autoscaling:
        if v2_index is not None:
            value = _env_value(head_env[v2_index])
            if autoscaler_v2_env_enabled(value):
                errors.add(
                    f"{head_cpath}.env[{v2_index}]",
                    f"environment variable {RAY_ENABLE_AUTOSCALER_V2} cannot be set to '{value}' "
                    "when enableInTreeAutoscaling is false. Please set enableInTreeAutoscaling: "
                    "true to use autoscaler v2",
                )
    else:
        for i, group in enumerate(groups):
            if group.suspend:
                errors.add(
                    join_path(base, f"workerGroupSpecs[{i}].suspend"),
                    f"worker group {group.group_name} cannot be suspended with Autoscaler enabled",
                )
        if (
            spec.autoscaler_options is not None
            and spec.autoscaler_options.version is not None
            and v2_index is not None
        ):
            errors.add(
                join_path(base, "autoscalerOptions.version"),
                "both .spec.autoscalerOptions.version and head Pod env var "
                f"{RAY_ENABLE_AUTOSCALER_V2} are set, please only use the former",
            )
        if is_autoscaling_v2_enabled(rule_object(spec)):
            if _restart_policy(head.template) not in ("", "Never"):
                errors.add(
                    f"{head_base}.template.spec.restartPolicy",
                    "restartPolicy for head Pod should be Never or unset when using autoscaler V2",
                )
            for i, group in enumerate(groups):
                if _restart_policy(group.template) not in ("", "Never"):
                    errors.add(
                        join_path(base, f"workerGroupSpecs[{i}].template.spec.restartPolicy"),
                        f"restartPolicy for worker group {group.group_name} should be Never or "
                        "unset when using autoscaler V2",
                    )

    autoscaler = spec.autoscaler_options
    if autoscaler is not None:
        apath = join_path(base, "autoscalerOptions")
        if autoscaler.idle_timeout_seconds is not None and autoscaler.idle_timeout_seconds < 0:
            errors.add(
                f"{apath}.idleTimeoutSeconds",
                "autoscalerOptions.idleTimeoutSeconds must be non-negative, got "
                f"{autoscaler.idle_timeout_seconds}",
            )
        index = _env_index(KUBERAY_GEN_AUTOSCALER_START_CMD, _env_dicts(autoscaler.env))
        if index is not None:
            errors.add(
                f"{apath}.env[{index}]",
                f"autoscalerOptions.env must not contain {KUBERAY_GEN_AUTOSCALER_START_CMD}: it "
                "is managed by KubeRay and injected automatically into the autoscaler container",
            )

    history = spec.history_server_options
    if history is not None:
        hpath = join_path(base, "historyServerOptions")
        if not gate_enabled(gates, GATE_RAYCLUSTER_HISTORY_SERVER):
            errors.add(hpath, "RayClusterHistoryServer feature gate is not enabled")
        if history.collector_options is None:
            errors.add(
                f"{hpath}.collectorOptions", "historyServerOptions.collectorOptions must be set"
            )
        else:
            _validate_collector_options(
                errors, f"{hpath}.collectorOptions", history.collector_options
            )
        for c_index, container in enumerate(head_containers):
            if container.get("name") == COLLECTOR_CONTAINER_NAME:
                errors.add(
                    f"{head_base}.template.spec.containers[{c_index}].name",
                    "head pod template must not define a container with name "
                    f"'{COLLECTOR_CONTAINER_NAME}' when history server collector options are "
                    "enabled",
                )
        for i, group in enumerate(groups):
            for c_index, container in enumerate(_containers(group.template)):
                if container.get("name") == COLLECTOR_CONTAINER_NAME:
                    errors.add(
                        join_path(
                            base, f"workerGroupSpecs[{i}].template.spec.containers[{c_index}].name"
                        ),
                        f"worker group {group.group_name} pod template must not define a "
                        f"container with name '{COLLECTOR_CONTAINER_NAME}' when history server "
                        "collector options are enabled",
                    )

    _validate_auth(errors, base, spec)

    if spec.network_policy is not None and not gate_enabled(gates, GATE_RAYCLUSTER_NETWORK_POLICY):
        errors.add(
            join_path(base, "networkPolicy"),
            "spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled",
        )
    _validate_network_policy(errors, base, spec)

    if spec.tls_options is not None and not gate_enabled(gates, GATE_RAYCLUSTER_MTLS):
        errors.add(
            join_path(base, "tlsOptions"),
            "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled",
        )
    _validate_tls(errors, base, spec, gates)
    label_refs_spec_errors(errors, base, spec, gates)
    validate_cluster_spec_names(errors, base, spec)
    return errors.items


# --- RayCluster -----------------------------------------------------------------------------
def raycluster_spec_warnings(cluster: RayCluster | Mapping[str, Any]) -> list[str]:
    """Warnings KubeRay emits (as an InvalidRayClusterSpec event) without stopping: autoscaler
    v1 with worker groups whose restartPolicy is neither unset nor Never."""
    model = _coerce(RayCluster, cluster)
    if isinstance(model, list) or model.spec is None:
        return []
    spec = model.spec
    cluster_obj = rule_object(spec)
    if not (is_autoscaling_enabled(cluster_obj) and is_autoscaling_v1_enabled(cluster_obj)):
        return []
    names = [
        g.group_name
        for g in spec.worker_group_specs or ()
        if _restart_policy(g.template) not in ("", "Never")
    ]
    if not names:
        return []
    return [
        f"restartPolicy for worker groups [{', '.join(names)}] should be Never or unset when "
        "using autoscaler V1"
    ]


def validate_raycluster(
    cluster: RayCluster | Mapping[str, Any], *, gates: FeatureGates = None
) -> list[FieldError]:
    """Every error KubeRay (apiserver schema, controller, webhook) would raise for a RayCluster.

    Order: ``crd``; ``metadata`` (name ≤ 53 chars, DNS-1035); ``spec``
    (``ValidateRayClusterSpec``); ``upgrade`` (``ValidateRayClusterUpgradeOptions``);
    ``status`` (not both Suspending and Suspended); ``webhook`` (unique group names).
    """
    model = _coerce(RayCluster, cluster)
    if isinstance(model, list):
        return model
    spec = model.spec
    out = _crd_errors(model, lambda errs: _cel_cluster_spec(spec, "spec", errs))

    metadata = _Errors("metadata")
    _validate_name(metadata, "RayCluster", model.name, MAX_RAYCLUSTER_NAME_LENGTH)
    out.extend(metadata.items)

    spec_for_checks = spec if spec is not None else _empty_cluster_spec()
    out.extend(_validate_cluster_spec(spec_for_checks, model.annotations, "spec", gates))

    upgrade = _Errors("upgrade")
    strategy = spec_for_checks.upgrade_strategy
    if strategy is not None and strategy.type is not None:
        if strategy.type not in (RayClusterUpgradeType.RECREATE, RayClusterUpgradeType.NONE):
            upgrade.add(
                "spec.upgradeStrategy.type",
                "The RayCluster spec is invalid: Spec.UpgradeStrategy.Type value "
                f"{strategy.type} is invalid, valid options are Recreate or None",
            )
        creator = creator_crd_type(rule_object(None, labels=model.labels))
        if creator in (KIND_RAYJOB, KIND_RAYSERVICE):
            upgrade.add(
                "spec.upgradeStrategy.type",
                f"upgradeStrategy cannot be set when RayCluster is created by {creator}",
            )
    out.extend(upgrade.items)

    status = model.status
    if (
        status is not None
        and _condition_true(status.conditions, RayClusterConditionType.SUSPENDING)
        and _condition_true(status.conditions, RayClusterConditionType.SUSPENDED)
    ):
        out.append(
            FieldError(
                "status.conditions",
                "invalid RayCluster State: rayv1.RayClusterSuspending and "
                "rayv1.RayClusterSuspended conditions should not be both true",
                "status",
            )
        )

    seen: set[str] = set()
    for i, group in enumerate(spec_for_checks.worker_group_specs or ()):
        if group.group_name in seen:
            out.append(
                FieldError(
                    f"spec.workerGroupSpecs[{i}].groupName",
                    "worker group names must be unique",
                    "webhook",
                )
            )
        seen.add(group.group_name)
    return out


def _cluster_transitions(
    old: RayClusterSpec | None, new: RayClusterSpec | None, base: str, out: list[FieldError]
) -> None:
    if old is None or new is None:
        return
    _immutable(
        old.managed_by,
        new.managed_by,
        join_path(base, "managedBy"),
        "the managedBy field is immutable",
        out,
    )
    old_ft, new_ft = old.gcs_fault_tolerance_options, new.gcs_fault_tolerance_options
    if old_ft is not None and new_ft is not None:
        _immutable(
            old_ft.backend,
            new_ft.backend,
            join_path(base, "gcsFaultToleranceOptions.backend"),
            "gcsFaultToleranceOptions.backend is immutable",
            out,
        )


def validate_raycluster_update(
    old: RayCluster | Mapping[str, Any],
    new: RayCluster | Mapping[str, Any],
    *,
    gates: FeatureGates = None,
) -> list[FieldError]:
    """Errors of an update: the CRD transition rules (``managedBy`` and
    ``gcsFaultToleranceOptions.backend`` immutable once set; a field added or removed is not a
    change, as for CEL ``oldSelf``), then :func:`validate_raycluster` of the new object."""
    old_model, new_model = _coerce(RayCluster, old), _coerce(RayCluster, new)
    if isinstance(new_model, list):
        return new_model
    out: list[FieldError] = []
    if not isinstance(old_model, list):
        _cluster_transitions(old_model.spec, new_model.spec, "spec", out)
    return out + validate_raycluster(new_model, gates=gates)
