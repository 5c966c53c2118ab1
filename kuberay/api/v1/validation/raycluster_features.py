"""RayCluster spec checks of optional features: GCS fault tolerance backends, history
server collector, auth, network policy and TLS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1.constants import (
    GATE_GCS_FT_EMBEDDED_STORAGE,
    GCS_STORAGE_MOUNT_PATH,
    GCS_STORAGE_VOLUME_NAME,
    RAY_GCS_STORAGE,
    RAY_GCS_STORAGE_PATH,
    RAY_TLS_CA_CERT,
    RAY_TLS_CERT_MOUNT_PATH,
    RAY_TLS_SERVER_CERT,
    RAY_TLS_SERVER_KEY,
    RAY_TLS_VOLUME_NAME,
    RAY_USE_TLS,
)
from kuberay.api.v1.convert import join_path
from kuberay.api.v1.gates import FeatureGates, gate_enabled
from kuberay.api.v1.raycluster_types import (
    CollectorOptions,
    GcsFaultToleranceOptions,
    RayClusterSpec,
)
from kuberay.api.v1.rules import (
    is_auth_enabled,
    is_k8s_auth_enabled,
    is_tls_enabled,
    network_policy_mode,
)
from kuberay.api.v1.validation.common import (
    _as_dict,
    _as_list,
    _containers,
    _env_dicts,
    _env_index,
    _env_list,
    _env_value,
    _Errors,
    _mounts,
    _pod_spec,
    rule_dict,
    rule_object,
)
from kuberay.gocompat.go_text import go_quote
from kuberay.gocompat.goutil import go_str_list, is_dns1123_label
from kuberay.gocompat.versions import parse_generic


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
    k8s_auth = is_k8s_auth_enabled(rule_dict(auth))
    if not is_auth_enabled(rule_object(spec)):
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
        version = parse_generic(ray_version)
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
    mode = network_policy_mode(rule_dict(config))
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
    if not is_tls_enabled(rule_object(spec), gates):
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
