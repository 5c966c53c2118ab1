"""Validation of RayCluster, RayJob, RayService and RayCronJob exactly as KubeRay's.

Every public ``validate_*`` function returns **all** problems at once as a list of
:class:`FieldError` (``path`` like ``spec.workerGroupSpecs[0].minReplicas``, ``message``,
``source``). Each message is the text KubeRay itself reports for that rule (so it can go
straight into an event note or ``status.message``), and errors are listed in KubeRay's check
order: the first error of a given source is the one KubeRay's controller would report.

``source`` tells who enforces a rule in KubeRay:

* ``crd``      -- the kube-apiserver, from the CRD schema (types, enums, ``minimum``,
  required fields, CEL rules). Listed first; KubeRay's controllers never see such objects.
* ``metadata`` -- controller metadata checks (event ``Invalid<Kind>Metadata``).
* ``spec``     -- controller spec checks (event ``Invalid<Kind>Spec``).
* ``upgrade``  -- RayCluster ``ValidateRayClusterUpgradeOptions`` (event InvalidRayClusterSpec).
* ``status``   -- controller status sanity checks (event ``Invalid<Kind>Status``).
* ``webhook``  -- only the optional validating webhook (unique worker group names).

Rules that depend on feature gates take ``gates`` (see :mod:`kuberay.api.v1.gates`).
Inputs may be models or plain dicts; a dict that does not even structure yields its
structural errors (source ``crd``) only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeAlias, TypeVar

import attrs
import yaml

from kuberay.api.v1._meta import ApiModel
from kuberay.api.v1.constants import (
    COLLECTOR_CONTAINER_NAME,
    GATE_GCS_FT_EMBEDDED_STORAGE,
    GATE_RAYCLUSTER_HISTORY_SERVER,
    GATE_RAYCLUSTER_MTLS,
    GATE_RAYCLUSTER_NETWORK_POLICY,
    GATE_RAYJOB_DELETION_POLICY,
    GCS_STORAGE_MOUNT_PATH,
    GCS_STORAGE_VOLUME_NAME,
    KIND_RAYJOB,
    KIND_RAYSERVICE,
    KUBERAY_GEN_AUTOSCALER_START_CMD,
    MANAGED_BY_VALUES,
    MAX_RAYCLUSTER_NAME_LENGTH,
    MAX_RAYCRONJOB_NAME_LENGTH,
    MAX_RAYJOB_NAME_LENGTH,
    MAX_RAYSERVICE_NAME_LENGTH,
    RAY_ENABLE_AUTOSCALER_V2,
    RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY,
    RAY_FT_ENABLED_ANNOTATION_KEY,
    RAY_GCS_STORAGE,
    RAY_GCS_STORAGE_PATH,
    RAY_JOB_CLUSTER_SELECTOR_KEY,
    RAY_ORIGINATED_FROM_CRD_LABEL_KEY,
    RAY_REDIS_ADDRESS,
    RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION,
    RAY_TLS_CA_CERT,
    RAY_TLS_CERT_MOUNT_PATH,
    RAY_TLS_SERVER_CERT,
    RAY_TLS_SERVER_KEY,
    RAY_TLS_VOLUME_NAME,
    RAY_USE_TLS,
    REDIS_PASSWORD,
    REDIS_USERNAME,
)
from kuberay.api.v1.convert import StructureError, join_path, model_fields, structure
from kuberay.api.v1.defaults import (
    cluster_upgrade_max_surge_percent,
    get_crd_type,
    is_auth_enabled,
    is_autoscaling_enabled,
    is_autoscaling_v1_enabled,
    is_autoscaling_v2_enabled,
    is_gcs_fault_tolerance_enabled,
    is_incremental_upgrade_enabled,
    is_k8s_auth_enabled,
    is_tls_enabled,
    network_policy_mode,
    submission_mode,
)
from kuberay.api.v1.enums import (
    DeletionPolicyType,
    JobDeploymentStatus,
    JobSubmissionMode,
    RayClusterConditionType,
    RayClusterUpgradeType,
    RayServiceUpgradeType,
)
from kuberay.api.v1.gates import FeatureGates, gate_enabled
from kuberay.api.v1.goutil import (
    go_atoi,
    go_quote,
    go_str_list,
    is_dns1035_label,
    is_dns1123_label,
    is_qualified_name,
    is_valid_label_value,
    parse_generic_version,
    parse_go_duration,
)
from kuberay.api.v1.raycluster_types import (
    CollectorOptions,
    GcsFaultToleranceOptions,
    HeadGroupSpec,
    RayCluster,
    RayClusterSpec,
    WorkerGroupSpec,
)
from kuberay.api.v1.raycronjob_types import RayCronJob, RayCronJobSpec
from kuberay.api.v1.rayjob_types import DeletionCondition, RayJob, RayJobSpec
from kuberay.api.v1.rayservice_types import RayService, RayServiceSpec
from kuberay.api.v1.schedule import load_go_location, parse_standard

__all__ = [
    "ErrorSource",
    "FieldError",
    "first_error",
    "raycluster_spec_warnings",
    "validate_raycluster",
    "validate_raycluster_update",
    "validate_raycronjob",
    "validate_raycronjob_update",
    "validate_rayjob",
    "validate_rayjob_update",
    "validate_rayservice",
    "validate_rayservice_update",
]

ErrorSource: TypeAlias = Literal["crd", "metadata", "spec", "upgrade", "status", "webhook"]
M = TypeVar("M", bound=ApiModel)


@attrs.frozen
class FieldError:
    """One validation problem: the JSON path of the field, KubeRay's message, who enforces it."""

    path: str
    message: str
    source: ErrorSource = "spec"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def first_error(errors: Iterable[FieldError], *sources: ErrorSource) -> FieldError | None:
    """The first error whose source is in ``sources`` (any source when none given): the
    error KubeRay's controller would report for that check phase."""
    for error in errors:
        if not sources or error.source in sources:
            return error
    return None


# --- helpers over embedded Kubernetes dicts -------------------------------------------------
def _as_dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _pod_spec(template: Any) -> Mapping[str, Any]:
    return _as_dict(_as_dict(template).get("spec"))


def _containers(template: Any) -> list[Mapping[str, Any]]:
    return [_as_dict(c) for c in _as_list(_pod_spec(template).get("containers"))]


def _restart_policy(template: Any) -> str:
    value = _pod_spec(template).get("restartPolicy")
    return value if isinstance(value, str) else ""


def _env_list(container: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if container is None:
        return []
    return [_as_dict(e) for e in _as_list(container.get("env"))]


def _env_index(name: str, env: list[Mapping[str, Any]]) -> int | None:
    for i, entry in enumerate(env):
        if entry.get("name") == name:
            return i
    return None


def _env_value(entry: Mapping[str, Any]) -> str:
    value = entry.get("value")
    return value if isinstance(value, str) else ""


def _env_dicts(value: list[dict[str, Any]] | None) -> list[Mapping[str, Any]]:
    return [_as_dict(e) for e in value or ()]


def _mounts(container: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if container is None:
        return []
    return [_as_dict(m) for m in _as_list(container.get("volumeMounts"))]


def _param(params: Mapping[str, str] | None, key: str) -> str:
    return (params or {}).get(key, "")


def _go_int(value: Any) -> str:
    return str(value)


class _Errors:
    """Collects errors with a message prefix and a default source."""

    def __init__(self, source: ErrorSource, prefix: str = "") -> None:
        self.items: list[FieldError] = []
        self.source: ErrorSource = source
        self.prefix = prefix

    def add(self, path: str, message: str) -> None:
        self.items.append(FieldError(path, self.prefix + message, self.source))

    def extend(self, errors: Iterable[FieldError]) -> None:
        self.items.extend(errors)


def _wrap(errors: Iterable[FieldError], prefix: str) -> list[FieldError]:
    return [FieldError(e.path, prefix + e.message, e.source) for e in errors]


# --- structural (CRD) checks ----------------------------------------------------------------
_QUANTITY_RE = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+"
    r"(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def _crd_check_model(model: ApiModel, path: str, out: list[FieldError]) -> None:
    """What the apiserver's structural schema enforces on a model (see schema generation)."""
    for mf in model_fields(type(model)):
        value = getattr(model, mf.name)
        fpath = join_path(path, mf.json)
        meta = mf.meta
        if value is None:
            if meta.required:
                out.append(FieldError(fpath, "Required value", "crd"))
            continue
        if meta.enum is not None and isinstance(value, str) and str(value) not in meta.enum:
            supported = ", ".join(go_quote(v) for v in meta.enum)
            out.append(
                FieldError(
                    fpath,
                    f"Unsupported value: {go_quote(str(value))}: supported values: {supported}",
                    "crd",
                )
            )
        if meta.minimum is not None and isinstance(value, int) and value < meta.minimum:
            out.append(
                FieldError(
                    fpath,
                    f"Invalid value: {value}: {fpath} in body should be greater than or equal "
                    f"to {meta.minimum}",
                    "crd",
                )
            )
        if meta.min_length is not None and isinstance(value, str) and len(value) < meta.min_length:
            out.append(
                FieldError(
                    fpath,
                    f"Invalid value: {go_quote(value)}: {fpath} in body should be at least "
                    f"{meta.min_length} chars long",
                    "crd",
                )
            )
        if meta.min_items is not None and isinstance(value, list) and len(value) < meta.min_items:
            out.append(
                FieldError(
                    fpath, f"{fpath} in body should have at least {meta.min_items} items", "crd"
                )
            )
        if meta.quantity and isinstance(value, str) and not _QUANTITY_RE.match(value):
            out.append(
                FieldError(
                    fpath,
                    f"Invalid value: {go_quote(value)}: {fpath} in body should match "
                    f"'{_QUANTITY_RE.pattern}'",
                    "crd",
                )
            )
        if meta.list_type == "map" and meta.list_map_keys and isinstance(value, list):
            seen: set[tuple[Any, ...]] = set()
            for i, item in enumerate(value):
                data = item if isinstance(item, Mapping) else _unstructured_keys(item)
                key = tuple(data.get(k) for k in meta.list_map_keys)
                if key in seen:
                    shown = ",".join(
                        f'"{k}":{go_quote(str(v))}'
                        for k, v in zip(meta.list_map_keys, key, strict=True)
                    )
                    out.append(FieldError(f"{fpath}[{i}]", f"Duplicate value: {{{shown}}}", "crd"))
                seen.add(key)
        _crd_check_value(value, fpath, out)


def _unstructured_keys(item: Any) -> Mapping[str, Any]:
    if isinstance(item, ApiModel):
        return {mf.json: getattr(item, mf.name) for mf in model_fields(type(item))}
    return {}


def _crd_check_value(value: Any, path: str, out: list[FieldError]) -> None:
    if isinstance(value, ApiModel):
        _crd_check_model(value, path, out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, ApiModel):
                _crd_check_model(item, f"{path}[{i}]", out)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, ApiModel):
                _crd_check_model(item, f"{path}[{key}]", out)


def _cel_managed_by(managed_by: str | None, path: str, out: list[FieldError]) -> None:
    if managed_by is not None and managed_by not in MANAGED_BY_VALUES:
        out.append(
            FieldError(
                path,
                "the managedBy field value must be either 'ray.io/kuberay-operator' or "
                "'kueue.x-k8s.io/multikueue'",
                "crd",
            )
        )


def _cel_cluster_spec(spec: RayClusterSpec | None, path: str, out: list[FieldError]) -> None:
    if spec is not None:
        _cel_managed_by(spec.managed_by, join_path(path, "managedBy"), out)


def _cel_job_spec(spec: RayJobSpec | None, path: str, out: list[FieldError]) -> None:
    if spec is None:
        return
    _cel_managed_by(spec.managed_by, join_path(path, "managedBy"), out)
    _cel_cluster_spec(spec.ray_cluster_spec, join_path(path, "rayClusterSpec"), out)
    strategy = spec.deletion_strategy
    if strategy is None:
        return
    spath = join_path(path, "deletionStrategy")
    legacy = strategy.on_success is not None or strategy.on_failure is not None
    has_rules = strategy.deletion_rules is not None
    if legacy and has_rules:
        out.append(
            FieldError(
                spath,
                "legacy policies (onSuccess/onFailure) and deletionRules cannot be used "
                "together within the same deletionStrategy",
                "crd",
            )
        )
    if not ((strategy.on_success is not None and strategy.on_failure is not None) or has_rules):
        out.append(
            FieldError(
                spath,
                "deletionStrategy requires either BOTH onSuccess and onFailure, OR the "
                "deletionRules field (cannot be empty)",
                "crd",
            )
        )
    for i, rule in enumerate(strategy.deletion_rules or ()):
        cond = rule.condition
        if not isinstance(cond, DeletionCondition):
            continue
        cpath = f"{spath}.deletionRules[{i}].condition"
        if cond.job_status is not None and cond.job_deployment_status is not None:
            out.append(
                FieldError(
                    cpath,
                    "JobStatus and JobDeploymentStatus cannot be used together within the "
                    "same deletion condition.",
                    "crd",
                )
            )
        if cond.job_status is None and cond.job_deployment_status is None:
            out.append(
                FieldError(
                    cpath,
                    "the deletion condition requires either the JobStatus or the "
                    "JobDeploymentStatus field.",
                    "crd",
                )
            )


def _crd_errors(model: ApiModel, cel: Callable[[list[FieldError]], None]) -> list[FieldError]:
    out: list[FieldError] = []
    _crd_check_model(model, "", out)
    cel(out)
    return out


def _coerce(kind_cls: type[M], obj: M | Mapping[str, Any]) -> M | list[FieldError]:
    if isinstance(obj, kind_cls):
        return obj
    if isinstance(obj, Mapping):
        try:
            return structure(kind_cls, obj)
        except StructureError as exc:
            return [FieldError(e.path, e.message, "crd") for e in exc.errors]
    raise TypeError(f"expected {kind_cls.__name__} or a dict, got {type(obj).__name__}")


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
    return index is not None and _env_value(head_env[index]) in ("1", "true")


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
    if is_autoscaling_v2_enabled(spec) or _env_truthy_v2(head_env):
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
        version = parse_generic_version(ray_version)
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
    if is_autoscaling_v2_enabled(spec) or _env_truthy_v2(head_env):
        return
    errors.add(
        ppath,
        f"worker group {name}: priority is set to {priority}, but autoscaler v2 is not "
        "enabled. Priority is only supported with autoscaler v2 enabled",
    )


def _validate_gcs_backend(
    errors: _Errors,
    path: str,
    head_path: str,
    options: GcsFaultToleranceOptions,
    head_container: Mapping[str, Any] | None,
    head_template: Any,
    gates: FeatureGates,
) -> None:
    backend = options.backend or "redis"
    if backend == "rocksdb":
        if not gate_enabled(gates, GATE_GCS_FT_EMBEDDED_STORAGE):
            errors.add(
                join_path(path, "backend"),
                "the embedded RocksDB GCS fault tolerance backend (GcsFaultToleranceOptions."
                "Backend: 'rocksdb') requires the GCSFaultToleranceEmbeddedStorage feature "
                "gate to be enabled",
            )
        if options.redis_address:
            errors.add(
                join_path(path, "redisAddress"),
                "cannot set GcsFaultToleranceOptions.RedisAddress when backend is 'rocksdb'",
            )
        if options.redis_username is not None:
            errors.add(
                join_path(path, "redisUsername"),
                "cannot set GcsFaultToleranceOptions.RedisUsername when backend is 'rocksdb'",
            )
        if options.redis_password is not None:
            errors.add(
                join_path(path, "redisPassword"),
                "cannot set GcsFaultToleranceOptions.RedisPassword when backend is 'rocksdb'",
            )
        if options.external_storage_namespace:
            errors.add(
                join_path(path, "externalStorageNamespace"),
                "cannot set GcsFaultToleranceOptions.ExternalStorageNamespace when backend is "
                "'rocksdb'",
            )
        storage = options.storage
        if (
            storage is not None
            and storage.claim_name
            and (
                storage.size is not None
                or storage.storage_class_name is not None
                or bool(storage.access_modes)
            )
        ):
            errors.add(
                join_path(path, "storage.claimName"),
                "GcsFaultToleranceOptions.Storage.ClaimName is mutually exclusive with size, "
                "storageClassName, and accessModes",
            )
        env = _env_list(head_container)
        for name in (RAY_GCS_STORAGE, RAY_GCS_STORAGE_PATH):
            index = _env_index(name, env)
            if index is not None:
                errors.add(
                    f"{head_path}.env[{index}]",
                    f"cannot set `{RAY_GCS_STORAGE}` or `{RAY_GCS_STORAGE_PATH}` env var in head "
                    "Pod when the embedded GCS FT backend is used - these are managed by KubeRay",
                )
                break
        for i, mount in enumerate(_mounts(head_container)):
            if (
                mount.get("mountPath") == GCS_STORAGE_MOUNT_PATH
                or mount.get("name") == GCS_STORAGE_VOLUME_NAME
            ):
                errors.add(
                    f"{head_path}.volumeMounts[{i}]",
                    f"cannot set a volume mount named {go_quote(GCS_STORAGE_VOLUME_NAME)} or "
                    f"mounted at {GCS_STORAGE_MOUNT_PATH} in the head container when the "
                    "embedded GCS FT backend is used - it is managed by KubeRay",
                )
        volumes = [_as_dict(v) for v in _as_list(_pod_spec(head_template).get("volumes"))]
        for i, volume in enumerate(volumes):
            if volume.get("name") == GCS_STORAGE_VOLUME_NAME:
                errors.add(
                    f"{head_path.rsplit('.containers', 1)[0]}.volumes[{i}]",
                    f"cannot set a volume named {go_quote(GCS_STORAGE_VOLUME_NAME)} in the head "
                    "Pod when the embedded GCS FT backend is used - it is managed by KubeRay",
                )
    elif options.storage is not None:
        errors.add(
            join_path(path, "storage"),
            "cannot set GcsFaultToleranceOptions.Storage when backend is 'redis' - it only "
            "applies to the 'rocksdb' backend",
        )


_FORBIDDEN_COLLECTOR_ENV = (
    "POD_IP",
    "FQ_RAY_IP",
    "RAY_CLUSTER_NAME",
    "RAY_CLUSTER_NAMESPACE",
    "RAY_ROLE",
    "OWNER_KIND",
    "OWNER_NAME",
    "EVENTS_PORT",
)


def _validate_collector_options(errors: _Errors, path: str, options: CollectorOptions) -> None:
    if not options.image:
        errors.add(
            join_path(path, "image"), "historyServerOptions.collectorOptions.image must be set"
        )
    env_path = join_path(path, "env")
    env_map: dict[str, Mapping[str, Any]] = {}
    for entry in _env_dicts(options.env):
        name = entry.get("name")
        if isinstance(name, str):
            env_map[name] = entry

    def has_value(name: str) -> bool:
        entry = env_map.get(name)
        return entry is not None and (_env_value(entry) != "" or entry.get("valueFrom") is not None)

    for name in _FORBIDDEN_COLLECTOR_ENV:
        if name in env_map:
            errors.add(
                env_path,
                f"historyServerOptions.collectorOptions.env must not contain {name}: it is "
                "managed by KubeRay and injected automatically into the collector container",
            )
    backend_entry = env_map.get("STORAGE_BACKEND")
    if backend_entry is None or _env_value(backend_entry) == "":
        errors.add(
            env_path,
            "STORAGE_BACKEND environment variable must be set with a literal string value in "
            "historyServerOptions.collectorOptions.env",
        )
        return
    backend = _env_value(backend_entry).upper()

    def need(name: str, message: str) -> None:
        if not has_value(name):
            errors.add(env_path, message)

    if backend == "GCS":
        need(
            "GCS_BUCKET", "GCS_BUCKET environment variable must be set when STORAGE_BACKEND is GCS"
        )
    elif backend == "S3":
        need("S3_REGION", "S3_REGION environment variable must be set when STORAGE_BACKEND is S3")
    elif backend == "AZUREBLOB":
        auth_mode = ""
        mode_entry = env_map.get("AZURE_STORAGE_AUTH_MODE")
        if mode_entry is not None and _env_value(mode_entry) != "":
            auth_mode = _env_value(mode_entry).strip().lower()
        if auth_mode == "connection_string":
            need(
                "AZURE_STORAGE_CONNECTION_STRING",
                "AZURE_STORAGE_CONNECTION_STRING environment variable must be set when "
                "STORAGE_BACKEND is AZUREBLOB and AZURE_STORAGE_AUTH_MODE is connection_string",
            )
        elif auth_mode in ("workload_identity", "default"):
            need(
                "AZURE_STORAGE_ACCOUNT_URL",
                "AZURE_STORAGE_ACCOUNT_URL environment variable must be set when STORAGE_BACKEND "
                f"is AZUREBLOB and AZURE_STORAGE_AUTH_MODE is {auth_mode}",
            )
        elif not has_value("AZURE_STORAGE_CONNECTION_STRING") and not has_value(
            "AZURE_STORAGE_ACCOUNT_URL"
        ):
            errors.add(
                env_path,
                "either AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL environment "
                "variable must be set when STORAGE_BACKEND is AZUREBLOB",
            )
    elif backend == "ALIYUNOSS":
        for name in ("OSS_BUCKET", "OSS_ENDPOINT", "OSS_REGION"):
            need(name, f"{name} environment variable must be set when STORAGE_BACKEND is ALIYUNOSS")


def _validate_auth(errors: _Errors, base: str, spec: RayClusterSpec) -> None:
    auth = spec.auth_options
    k8s_auth = is_k8s_auth_enabled(auth)
    if not is_auth_enabled(spec):
        if k8s_auth:
            errors.add(
                join_path(base, "authOptions.enableK8sTokenAuth"),
                "authOptions.enableK8sTokenAuth is enabled but authOptions.mode not set to 'token'",
            )
        return
    version_path = join_path(base, "rayVersion")
    ray_version = spec.ray_version or ""
    if ray_version == "":
        errors.add(
            version_path,
            "authOptions.mode is 'token' but RayVersion was not specified. Ray version 2.52.0 "
            "or later is required",
        )
        return
    try:
        version = parse_generic_version(ray_version)
    except ValueError as exc:
        errors.add(
            version_path,
            f"authOptions.mode is 'token' but RayVersion format is invalid: {ray_version}, {exc}",
        )
        return
    if version.less_than((2, 52, 0)):
        errors.add(
            version_path,
            f"authOptions.mode is 'token' but minimum Ray version is 2.52.0, got {ray_version}",
        )
        return
    if k8s_auth and auth is not None:
        if version.less_than((2, 55, 0)):
            errors.add(
                version_path,
                "authOptions.enableK8sTokenAuth is enabled but minimum Ray version is 2.55.0, "
                f"got {ray_version}",
            )
        if auth.secret_name:
            errors.add(
                join_path(base, "authOptions.secretName"),
                "authOptions.enableK8sTokenAuth is enabled and authOptions.secretName is also set",
            )


def _validate_network_policy(errors: _Errors, base: str, spec: RayClusterSpec) -> None:
    config = spec.network_policy
    if config is None:
        return
    npath = join_path(base, "networkPolicy")
    mode = network_policy_mode(config)
    quoted_mode = go_quote(mode)
    for role, rules in (("head", config.head), ("worker", config.worker)):
        if rules is None:
            continue
        if mode == "DenyAllEgress" and rules.ingress_rules:
            errors.add(
                f"{npath}.{role}.ingressRules",
                f"networkPolicy.{role}.ingressRules cannot be set when mode is {quoted_mode} "
                "(ingress is not restricted)",
            )
        if mode == "DenyAllIngress" and rules.egress_rules:
            errors.add(
                f"{npath}.{role}.egressRules",
                f"networkPolicy.{role}.egressRules cannot be set when mode is {quoted_mode} "
                "(egress is not restricted)",
            )
    group_names: set[str] = set()
    for i, group in enumerate(spec.worker_group_specs or ()):
        errs = is_dns1123_label(group.group_name)
        if errs:
            errors.add(
                join_path(base, f"workerGroupSpecs[{i}].groupName"),
                f"worker group name {go_quote(group.group_name)} must be a valid DNS1123 label "
                "when networkPolicy is enabled (it is embedded in the NetworkPolicy name): "
                f"{go_str_list(errs)}",
            )
        group_names.add(group.group_name)
    for i, entry in enumerate(config.worker_groups or ()):
        gpath = f"{npath}.workerGroups[{i}]"
        name = go_quote(entry.group_name)
        if mode == "DenyAllEgress" and entry.ingress_rules:
            errors.add(
                f"{gpath}.ingressRules",
                f"networkPolicy.workerGroups[{name}].ingressRules cannot be set when mode is "
                f"{quoted_mode} (ingress is not restricted)",
            )
        if mode == "DenyAllIngress" and entry.egress_rules:
            errors.add(
                f"{gpath}.egressRules",
                f"networkPolicy.workerGroups[{name}].egressRules cannot be set when mode is "
                f"{quoted_mode} (egress is not restricted)",
            )
        if entry.group_name not in group_names:
            errors.add(
                f"{gpath}.groupName",
                f"networkPolicy.workerGroups[{name}] does not match any group name in "
                "workerGroupSpecs",
            )


_TLS_ENV = (RAY_USE_TLS, RAY_TLS_SERVER_CERT, RAY_TLS_SERVER_KEY, RAY_TLS_CA_CERT)


def _validate_tls_mounts(
    errors: _Errors, path: str, mounts: list[Mapping[str, Any]], location: str
) -> None:
    for i, mount in enumerate(mounts):
        if mount.get("name") == RAY_TLS_VOLUME_NAME:
            errors.add(
                f"{path}[{i}]",
                f"cannot use volume mount named {go_quote(RAY_TLS_VOLUME_NAME)} in {location} "
                "when tlsOptions is set - the operator manages TLS configuration automatically",
            )
        elif mount.get("mountPath") == RAY_TLS_CERT_MOUNT_PATH:
            errors.add(
                f"{path}[{i}]",
                f"cannot use volume mount at path {go_quote(RAY_TLS_CERT_MOUNT_PATH)} in "
                f"{location} when tlsOptions is set - the operator manages TLS configuration "
                "automatically",
            )


def _validate_tls(errors: _Errors, base: str, spec: RayClusterSpec, gates: FeatureGates) -> None:
    if not is_tls_enabled(spec, gates):
        return
    targets: list[tuple[str, Any, str, str]] = [
        (join_path(base, "headGroupSpec"), spec.head_group_spec.template, "head Pod", "head Pod")
    ]
    for i, group in enumerate(spec.worker_group_specs or ()):
        quoted = go_quote(group.group_name)
        targets.append(
            (
                join_path(base, f"workerGroupSpecs[{i}]"),
                group.template,
                f"worker group {quoted}",
                f"worker group {quoted}",
            )
        )
    for gpath, template, env_location, mount_location in targets:
        containers = _containers(template)
        if not containers:
            continue
        cpath = f"{gpath}.template.spec.containers[0]"
        env = _env_list(containers[0])
        for name in _TLS_ENV:
            index = _env_index(name, env)
            if index is not None:
                errors.add(
                    f"{cpath}.env[{index}]",
                    f"cannot set {name} environment variable in {env_location} when tlsOptions "
                    "is set - the operator manages TLS configuration automatically",
                )
        _validate_tls_mounts(
            errors, f"{cpath}.volumeMounts", _mounts(containers[0]), mount_location
        )
    options = spec.autoscaler_options
    if options is not None:
        apath = join_path(base, "autoscalerOptions")
        env = _env_dicts(options.env)
        for name in _TLS_ENV:
            index = _env_index(name, env)
            if index is not None:
                errors.add(
                    f"{apath}.env[{index}]",
                    f"cannot set {name} environment variable in autoscalerOptions.env when "
                    "tlsOptions is set - the operator manages TLS configuration for the "
                    "autoscaler automatically",
                )
        _validate_tls_mounts(
            errors,
            f"{apath}.volumeMounts",
            _env_dicts(options.volume_mounts),
            "autoscalerOptions.volumeMounts",
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

    autoscaling = is_autoscaling_enabled(spec)
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
    if not is_gcs_fault_tolerance_enabled(spec, annotations) and redis_address_index is not None:
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
            if value in ("1", "true"):
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
        if is_autoscaling_v2_enabled(spec):
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
    return errors.items


def _empty_cluster_spec() -> RayClusterSpec:
    return RayClusterSpec(head_group_spec=HeadGroupSpec(template={}))


def _validate_name(
    errors: _Errors, kind: str, name: str, max_length: int, prefix: str = ""
) -> None:
    if len(name) > max_length:
        errors.add(
            "metadata.name", f"{prefix}{kind} name should be no more than {max_length} characters"
        )
    dns_errors = is_dns1035_label(name)
    if dns_errors:
        errors.add(
            "metadata.name",
            f"{prefix}{kind} name should be a valid DNS1035 label: {go_str_list(dns_errors)}",
        )


def _condition_true(conditions: list[dict[str, Any]] | None, condition_type: str) -> bool:
    for condition in conditions or ():
        if isinstance(condition, Mapping) and condition.get("type") == condition_type:
            return condition.get("status") == "True"
    return False


# --- RayCluster -----------------------------------------------------------------------------
def raycluster_spec_warnings(cluster: RayCluster | Mapping[str, Any]) -> list[str]:
    """Warnings KubeRay emits (as an InvalidRayClusterSpec event) without stopping: autoscaler
    v1 with worker groups whose restartPolicy is neither unset nor Never."""
    model = _coerce(RayCluster, cluster)
    if isinstance(model, list) or model.spec is None:
        return []
    spec = model.spec
    if not (is_autoscaling_enabled(spec) and is_autoscaling_v1_enabled(spec)):
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
        creator = get_crd_type(model.labels.get(RAY_ORIGINATED_FROM_CRD_LABEL_KEY))
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


# --- RayJob ---------------------------------------------------------------------------------
def _runtime_env_error(text: str) -> str | None:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return f"failed to unmarshal RuntimeEnvYAML: {text}: {exc}"
    if value is None or isinstance(value, dict):
        return None
    go_type = (
        "array"
        if isinstance(value, list)
        else "bool"
        if isinstance(value, bool)
        else "number"
        if isinstance(value, int | float)
        else "string"
    )
    return (
        f"failed to unmarshal RuntimeEnvYAML: {text}: error unmarshaling JSON: while decoding "
        f"JSON: json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
    )


_DELETION_ORDER = (
    DeletionPolicyType.DELETE_WORKERS,
    DeletionPolicyType.DELETE_CLUSTER,
    DeletionPolicyType.DELETE_SELF,
)


def _validate_deletion(errors: _Errors, base: str, spec: RayJobSpec, gates: FeatureGates) -> None:
    shutdown = spec.shutdown_after_job_finishes is True
    ttl = spec.ttl_seconds_after_finished or 0
    if not shutdown and ttl > 0:
        errors.add(
            join_path(base, "ttlSecondsAfterFinished"),
            "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false "
            "cannot have TTLSecondsAfterFinished",
        )
    strategy = spec.deletion_strategy
    if strategy is None:
        return
    spath = join_path(base, "deletionStrategy")
    if not gate_enabled(gates, GATE_RAYJOB_DELETION_POLICY):
        errors.add(
            spath, "RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy"
        )
    legacy = strategy.on_success is not None or strategy.on_failure is not None
    rules = strategy.deletion_rules or []
    if rules and shutdown:
        errors.add(
            join_path(base, "shutdownAfterJobFinishes"),
            "The RayJob spec is invalid: spec.shutdownAfterJobFinishes and "
            "spec.deletionStrategy.deletionRules are mutually exclusive",
        )
    if rules and legacy:
        errors.add(
            spath,
            "The RayJob spec is invalid: Cannot use both legacy onSuccess/onFailure fields and "
            "deletionRules simultaneously",
        )
    selector_mode = bool(spec.cluster_selector)
    autoscaling = is_autoscaling_enabled(spec.ray_cluster_spec)
    if legacy:
        on_success, on_failure = strategy.on_success, strategy.on_failure
        if on_success is None or on_failure is None:
            errors.add(
                spath,
                "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when "
                "using the legacy deletion policy fields of DeletionStrategy",
            )
            return
        if on_success.policy is None:
            errors.add(
                f"{spath}.onSuccess.policy",
                "the DeletionPolicyType field of DeletionStrategy.OnSuccess cannot be unset when "
                "DeletionStrategy is enabled",
            )
        if on_failure.policy is None:
            errors.add(
                f"{spath}.onFailure.policy",
                "the DeletionPolicyType field of DeletionStrategy.OnFailure cannot be unset when "
                "DeletionStrategy is enabled",
            )
        if on_success.policy is None or on_failure.policy is None:
            return
        cluster_scoped = (DeletionPolicyType.DELETE_CLUSTER, DeletionPolicyType.DELETE_WORKERS)
        if selector_mode:
            if on_success.policy in cluster_scoped:
                errors.add(
                    f"{spath}.onSuccess.policy",
                    "the ClusterSelector mode doesn't support DeletionStrategy="
                    f"{on_success.policy} on success",
                )
            if on_failure.policy in cluster_scoped:
                errors.add(
                    f"{spath}.onFailure.policy",
                    "the ClusterSelector mode doesn't support DeletionStrategy="
                    f"{on_failure.policy} on failure",
                )
        policies = (on_success.policy, on_failure.policy)
        if DeletionPolicyType.DELETE_WORKERS in policies and autoscaling:
            errors.add(
                spath,
                "DeletionStrategy=DeleteWorkers currently does not support RayCluster with "
                "autoscaling enabled",
            )
        if shutdown and DeletionPolicyType.DELETE_NONE in policies:
            errors.add(
                spath,
                "The RayJob spec is invalid: shutdownAfterJobFinshes is set to 'true' while "
                "deletion policy is 'DeleteNone'",
            )
        return
    if not rules:
        errors.add(
            spath,
            "The RayJob spec is invalid: DeletionStrategy requires either BOTH onSuccess and "
            "onFailure, OR the deletionRules field (cannot be empty)",
        )
        return
    by_job_status: dict[str, dict[str, int]] = {}
    by_deployment_status: dict[str, dict[str, int]] = {}
    for i, rule in enumerate(rules):
        rpath = f"{spath}.deletionRules[{i}]"
        cond = rule.condition
        cond_ttl = cond.ttl_seconds or 0
        if cond.job_status is not None and cond.job_deployment_status is not None:
            errors.add(
                f"{rpath}.condition",
                f"deletionRules[{i}]: cannot set both JobStatus and JobDeploymentStatus at the "
                "same time",
            )
            continue
        if cond.job_status is None and cond.job_deployment_status is None:
            errors.add(
                f"{rpath}.condition",
                f"deletionRules[{i}]: exactly one of JobStatus and JobDeploymentStatus must be set",
            )
            continue
        if cond_ttl < 0:
            errors.add(
                f"{rpath}.condition.ttlSeconds",
                f"deletionRules[{i}]: TTLSeconds must be non-negative",
            )
            continue
        policy = str(rule.policy)
        if selector_mode and policy in ("DeleteCluster", "DeleteWorkers"):
            errors.add(
                f"{rpath}.policy",
                f"deletionRules[{i}]: DeletionPolicyType '{policy}' not supported when "
                "ClusterSelector is set",
            )
            continue
        if autoscaling and policy == "DeleteWorkers":
            errors.add(
                f"{rpath}.policy",
                f"deletionRules[{i}]: DeletionPolicyType 'DeleteWorkers' not supported with "
                "autoscaling enabled",
            )
            continue
        if cond.job_status is not None:
            label, value, table = "JobStatus", str(cond.job_status), by_job_status
        else:
            label, value = "JobDeploymentStatus", str(cond.job_deployment_status)
            table = by_deployment_status
        seen_policies = table.setdefault(value, {})
        if policy in seen_policies:
            errors.add(
                rpath,
                f"deletionRules[{i}]: duplicate rule for DeletionPolicyType '{policy}' and "
                f"{label} '{value}'",
            )
            continue
        seen_policies[policy] = cond_ttl
    for label, table in (
        ("JobStatus", by_job_status),
        ("JobDeploymentStatus", by_deployment_status),
    ):
        for value, policy_ttls in table.items():
            previous: tuple[str, int] | None = None
            for policy_type in _DELETION_ORDER:
                ttl_value = policy_ttls.get(policy_type.value)
                if ttl_value is None:
                    continue
                if previous is not None and ttl_value < previous[1]:
                    errors.add(
                        f"{spath}.deletionRules",
                        f"for {label} '{value}': {policy_type.value} TTL ({ttl_value}) must be >= "
                        f"{previous[0]} TTL ({previous[1]})",
                    )
                previous = (policy_type.value, ttl_value)


def _validate_job_spec(
    spec: RayJobSpec,
    annotations: Mapping[str, str],
    base: str,
    gates: FeatureGates,
) -> list[FieldError]:
    """``ValidateRayJobSpec``, every rule, in KubeRay's order."""
    errors = _Errors("spec")
    shutdown = spec.shutdown_after_job_finishes is True
    suspend = spec.suspend is True
    mode = submission_mode(spec)
    if suspend and not shutdown:
        errors.add(
            join_path(base, "suspend"),
            "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is "
            "not allowed to be suspended",
        )
    if (spec.ttl_seconds_after_finished or 0) < 0:
        errors.add(
            join_path(base, "ttlSecondsAfterFinished"),
            "The RayJob spec is invalid: TTLSecondsAfterFinished must be a non-negative integer",
        )
    _validate_deletion(errors, base, spec, gates)

    selector_mode = bool(spec.cluster_selector)
    if suspend and selector_mode:
        errors.add(
            join_path(base, "suspend"),
            "The RayJob spec is invalid: the ClusterSelector mode doesn't support the suspend "
            "operation",
        )
    if spec.ray_cluster_spec is None and not selector_mode:
        errors.add(
            join_path(base, "rayClusterSpec"),
            "The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set",
        )
    backoff = spec.backoff_limit
    if selector_mode:
        if not (spec.cluster_selector or {}).get(RAY_JOB_CLUSTER_SELECTOR_KEY):
            errors.add(
                join_path(base, f"clusterSelector[{RAY_JOB_CLUSTER_SELECTOR_KEY}]"),
                "cluster name in ClusterSelector should not be empty",
            )
        if mode == JobSubmissionMode.SIDECAR_MODE:
            errors.add(
                join_path(base, "clusterSelector"),
                "ClusterSelector is not supported in SidecarMode",
            )
        if backoff is not None and backoff > 0:
            errors.add(
                join_path(base, "backoffLimit"),
                "The RayJob spec is invalid: BackoffLimit is incompatible with ClusterSelector "
                "mode",
            )
    if mode == JobSubmissionMode.INTERACTIVE_MODE and backoff is not None and backoff > 0:
        errors.add(
            join_path(base, "backoffLimit"),
            "The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode",
        )
    if mode == JobSubmissionMode.SIDECAR_MODE:
        if spec.submitter_pod_template is not None:
            errors.add(
                join_path(base, "submitterPodTemplate"),
                "Currently, SidecarMode doesn't support SubmitterPodTemplate",
            )
        if spec.submitter_config is not None:
            errors.add(
                join_path(base, "submitterConfig"),
                "Currently, SidecarMode doesn't support SubmitterConfig",
            )
        if spec.ray_cluster_spec is not None and _restart_policy(
            spec.ray_cluster_spec.head_group_spec.template
        ) not in ("", "Never"):
            errors.add(
                join_path(base, "rayClusterSpec.headGroupSpec.template.spec.restartPolicy"),
                "restartPolicy for head Pod should be Never or unset when using SidecarMode",
            )
    cluster_spec = spec.ray_cluster_spec
    if cluster_spec is not None:
        cbase = join_path(base, "rayClusterSpec")
        if is_k8s_auth_enabled(cluster_spec.auth_options):
            errors.add(
                f"{cbase}.authOptions.enableK8sTokenAuth",
                "The RayJob spec is invalid: K8s token auth mode is currently not supported for "
                "RayJob",
            )
        errors.extend(
            _wrap(
                _validate_cluster_spec(cluster_spec, annotations, cbase, gates),
                "The RayJob spec is invalid: ",
            )
        )
    runtime_env_error = _runtime_env_error(spec.runtime_env_yaml or "")
    if runtime_env_error:
        errors.add(join_path(base, "runtimeEnvYAML"), runtime_env_error)
    if spec.active_deadline_seconds is not None and spec.active_deadline_seconds <= 0:
        errors.add(
            join_path(base, "activeDeadlineSeconds"),
            "The RayJob spec is invalid: activeDeadlineSeconds must be a positive integer",
        )
    if spec.pre_running_deadline_seconds is not None and spec.pre_running_deadline_seconds <= 0:
        errors.add(
            join_path(base, "preRunningDeadlineSeconds"),
            "The RayJob spec is invalid: preRunningDeadlineSeconds must be a positive integer",
        )
    if backoff is not None and backoff < 0:
        errors.add(
            join_path(base, "backoffLimit"),
            "The RayJob spec is invalid: backoffLimit must be a positive integer",
        )
    return errors.items


def validate_rayjob(
    job: RayJob | Mapping[str, Any], *, gates: FeatureGates = None
) -> list[FieldError]:
    """Every error KubeRay would raise for a RayJob.

    Order: ``crd``; ``metadata`` (name ≤ 47, DNS-1035); ``spec`` (``ValidateRayJobSpec``,
    including the embedded ``rayClusterSpec`` with messages prefixed
    ``"The RayJob spec is invalid: "``); ``status`` (Waiting only in InteractiveMode).
    """
    model = _coerce(RayJob, job)
    if isinstance(model, list):
        return model
    spec = model.spec if model.spec is not None else RayJobSpec()
    out = _crd_errors(model, lambda errs: _cel_job_spec(model.spec, "spec", errs))
    metadata = _Errors("metadata")
    _validate_name(
        metadata, "RayJob", model.name, MAX_RAYJOB_NAME_LENGTH, "The RayJob metadata is invalid: "
    )
    out.extend(metadata.items)
    out.extend(_validate_job_spec(spec, model.annotations, "spec", gates))
    status = model.status
    if (
        status is not None
        and status.job_deployment_status == JobDeploymentStatus.WAITING
        and submission_mode(spec) != JobSubmissionMode.INTERACTIVE_MODE
    ):
        out.append(
            FieldError(
                "status.jobDeploymentStatus",
                "The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when "
                "SubmissionMode is not InteractiveMode",
                "status",
            )
        )
    return out


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
    if not is_autoscaling_enabled(spec.ray_cluster_config):
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
    max_surge = cluster_upgrade_max_surge_percent(options)
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
    if is_k8s_auth_enabled(cluster.auth_options):
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
    if is_incremental_upgrade_enabled(spec, gates):
        _validate_cluster_upgrade_options(errors, "spec", spec)
    out.extend(errors.items)
    return out


# --- RayCronJob -----------------------------------------------------------------------------
def validate_raycronjob(
    cronjob: RayCronJob | Mapping[str, Any], *, gates: FeatureGates = None
) -> list[FieldError]:
    """Every error KubeRay would raise for a RayCronJob (``ValidateRayCronJobSpec``).

    Name ≤ 36 chars; ``schedule`` without ``TZ`` and parseable by robfig ``ParseStandard``;
    ``timeZone`` non-empty and known; ``jobTemplate`` valid as a RayJob spec (messages
    prefixed ``"invalid RayJob template: "``, no annotations). All of source ``spec``.
    """
    model = _coerce(RayCronJob, cronjob)
    if isinstance(model, list):
        return model

    def cel(errs: list[FieldError]) -> None:
        if model.spec is not None:
            _cel_job_spec(model.spec.job_template, "spec.jobTemplate", errs)

    out = _crd_errors(model, cel)
    errors = _Errors("spec")
    if len(model.name) > MAX_RAYCRONJOB_NAME_LENGTH:
        errors.add(
            "metadata.name",
            f"RayCronJob name should be no more than {MAX_RAYCRONJOB_NAME_LENGTH} characters",
        )
    spec = model.spec or RayCronJobSpec(job_template=RayJobSpec(), schedule="")
    if "TZ" in spec.schedule:
        errors.add(
            "spec.schedule", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        )
    else:
        try:
            parse_standard(spec.schedule)
        except ValueError as exc:
            errors.add("spec.schedule", f"invalid cron schedule: {exc}")
    if spec.time_zone is not None:
        if spec.time_zone == "":
            errors.add(
                "spec.timeZone",
                "timeZone must not be empty string, omit the field to use the local time zone "
                "of the KubeRay operator",
            )
        else:
            try:
                load_go_location(spec.time_zone)
            except ValueError as exc:
                errors.add("spec.timeZone", f"invalid time zone: {exc}")
    errors.extend(
        _wrap(
            _validate_job_spec(spec.job_template, {}, "spec.jobTemplate", gates),
            "invalid RayJob template: ",
        )
    )
    out.extend(errors.items)
    return out


# --- updates (CEL transition rules) ---------------------------------------------------------
def _immutable(old: Any, new: Any, path: str, message: str, out: list[FieldError]) -> None:
    if old is not None and new is not None and old != new:
        out.append(FieldError(path, message, "crd"))


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


def _job_transitions(
    old: RayJobSpec | None, new: RayJobSpec | None, base: str, out: list[FieldError]
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
    _cluster_transitions(
        old.ray_cluster_spec, new.ray_cluster_spec, join_path(base, "rayClusterSpec"), out
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


def validate_rayjob_update(
    old: RayJob | Mapping[str, Any],
    new: RayJob | Mapping[str, Any],
    *,
    gates: FeatureGates = None,
) -> list[FieldError]:
    """Errors of a RayJob update: ``managedBy`` (RayJob's and its cluster spec's) and the GCS FT
    backend are immutable, then :func:`validate_rayjob` of the new object. KubeRay has no
    other RayJob immutability rule: later ``rayClusterSpec`` edits are accepted and ignored by
    the controller once the cluster exists."""
    old_model, new_model = _coerce(RayJob, old), _coerce(RayJob, new)
    if isinstance(new_model, list):
        return new_model
    out: list[FieldError] = []
    if not isinstance(old_model, list):
        _job_transitions(old_model.spec, new_model.spec, "spec", out)
    return out + validate_rayjob(new_model, gates=gates)


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


def validate_raycronjob_update(
    old: RayCronJob | Mapping[str, Any],
    new: RayCronJob | Mapping[str, Any],
    *,
    gates: FeatureGates = None,
) -> list[FieldError]:
    """Errors of a RayCronJob update: the immutable fields inside ``jobTemplate``, then
    :func:`validate_raycronjob` of the new object."""
    old_model, new_model = _coerce(RayCronJob, old), _coerce(RayCronJob, new)
    if isinstance(new_model, list):
        return new_model
    out: list[FieldError] = []
    if (
        not isinstance(old_model, list)
        and old_model.spec is not None
        and new_model.spec is not None
    ):
        _job_transitions(
            old_model.spec.job_template, new_model.spec.job_template, "spec.jobTemplate", out
        )
    return out + validate_raycronjob(new_model, gates=gates)
