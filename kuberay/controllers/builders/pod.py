"""Head and worker pods of a RayCluster, as KubeRay v1.7 builds them.

:func:`build_head_pod` / :func:`build_worker_pod` take the RayCluster exactly as stored (a plain
dict, never mutated) and return a complete Pod dict ready to be created. The assembly follows
KubeRay step by step because the *order* of env vars, volumes and containers is observable:

template defaulting (``DefaultHeadPodTemplate`` / ``DefaultWorkerPodTemplate``)
    name/generateName and namespace; group ``resources``/``labels`` folded into
    ``rayStartParams``; labels (``ray.io/cluster``, ``ray.io/node-type``, ``ray.io/group`` cannot
    be overridden by the user); missing start params; ``ray.io/overwrite-container-cmd``
    copied onto the template; head: autoscaler sidecar (+ ``no-monitor``, ServiceAccount,
    ``RAY_enable_autoscaler_v2``); worker: ``wait-gcs-ready`` init container (a copy of the Ray
    container's *original* env and mounts) and multi-host labels; GCS FT; ``metrics`` port;
    token auth; mTLS; history-server collector.
operator config
    ``headSidecarContainers``/``workerSidecarContainers`` appended, default pod annotations and
    labels added where absent.
``BuildPod``
    ``ray.io/serve`` label for RayService clusters; ``/dev/shm`` (unless ``plasma-directory``);
    ``ray-logs`` shared with the autoscaler / collector; the container command; ``FQ_RAY_IP`` and
    ``RAY_IP`` on every init container; the Ray container env (``setContainerEnvVars``);
    probes.
finally
    controller owner reference to the RayCluster; head pods also get
    ``ray.io/upgrade-strategy-recreate-hash`` and ``ray.io/kuberay-version``.

Deliberate choices where KubeRay gives no observable answer: a missing namespace is left
empty (the caller creates the pod in the cluster's namespace anyway); the version stamped on the
head pod comes from :attr:`BuildOptions.kuberay_version`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.controllers.common import gates
from kuberay.controllers.common.constants import LOCAL_HOST, RAY_CONTAINER_INDEX
from kuberay.controllers.common.defaults import with_default_ray_start_params
from kuberay.controllers.common.objects import (
    as_list,
    as_map,
    as_str,
    env_var_exists,
    metadata,
    spec,
    str_map,
)
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.common.predicates import (
    creator_crd_type,
    head_port,
    is_auth_enabled,
    is_autoscaling_enabled,
    is_autoscaling_v1_enabled,
    is_autoscaling_v2_enabled,
    is_history_server_enabled,
    is_overwrite_ray_container_cmd,
    is_tls_enabled,
)
from kuberay.gocompat.quantity import Quantity

from .auth import configure_token_auth, set_container_token_auth_env_vars
from .autoscaler import build_autoscaler_container, merge_autoscaler_overrides
from .gcs_ft import configure_gcs_fault_tolerance
from .hashing import generate_hash_without_replicas_and_workers_to_delete
from .history_server import build_collector_container, ray_event_export_env
from .names import (
    autoscaler_service_account_name,
    check_label,
    extract_ray_ip_from_fqdn,
    fqdn_head_service_name,
    generate_identifier,
    head_pod_name,
    worker_pod_generate_name,
)
from .owner import controller_owner_reference
from .probes import init_liveness_and_readiness_probes
from .ray_start import (
    generate_ray_start_command,
    ray_container_command,
    set_missing_ray_start_params,
    update_ray_start_params_labels,
    update_ray_start_params_resources,
)
from .tls import configure_tls, set_container_tls_config

__all__ = [
    "build_head_pod",
    "build_head_pod_without_upgrade_annotations",
    "build_worker_pod",
    "find_worker_group",
    "label_pod",
    "wait_gcs_ready_script",
]

_WAIT_GCS_READY_RESOURCES: Final = {
    "limits": {"cpu": "200m", "memory": "256Mi"},
    "requests": {"cpu": "200m", "memory": "256Mi"},
}
_TROUBLESHOOTING_URL: Final = (
    "https://docs.ray.io/en/master/cluster/kubernetes/troubleshooting.html"
)


# ----- small helpers -----------------------------------------------------------------------------
def _field_env(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _value_env(name: str, value: str) -> dict[str, Any]:
    # Go's EnvVar.Value is omitempty: an empty value is simply absent.
    return {"name": name, "value": value} if value else {"name": name}


def _append_if_absent(env: list[Any], name: str, value: str) -> None:
    if not env_var_exists(name, env):
        env.append(_value_env(name, value))


def _containers(pod_spec: MutableMapping[str, Any], what: str) -> list[Any]:
    containers = [dict(x) for x in as_list(pod_spec.get("containers"))]
    if not containers:
        raise ValueError(f"{what} pod template has no containers")
    pod_spec["containers"] = containers
    return containers


def _template_parts(template: object) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Deep copy of a pod template: (template, metadata, spec) dicts."""
    result: dict[str, Any] = copy.deepcopy(dict(as_map(template)))
    meta = dict(as_map(result.get("metadata")))
    pod_spec = dict(as_map(result.get("spec")))
    result["metadata"] = meta
    result["spec"] = pod_spec
    return result, meta, pod_spec


def label_pod(
    node_type: str, cluster_name: str, group_name: str, override_labels: Mapping[str, str]
) -> dict[str, str]:
    """KubeRay ``labelPod``: defaults, then user labels except cluster/node-type/group."""
    labels = {
        c.RAY_NODE_LABEL_KEY: c.RAY_NODE_LABEL_VALUE,
        c.RAY_CLUSTER_LABEL_KEY: cluster_name,
        c.RAY_NODE_TYPE_LABEL_KEY: node_type,
        c.RAY_NODE_GROUP_LABEL_KEY: group_name,
        c.RAY_ID_LABEL_KEY: check_label(generate_identifier(cluster_name, node_type)),
        c.KUBERNETES_APPLICATION_NAME_LABEL_KEY: c.APPLICATION_NAME,
        c.KUBERNETES_CREATED_BY_LABEL_KEY: c.COMPONENT_NAME,
    }
    protected = (c.RAY_NODE_TYPE_LABEL_KEY, c.RAY_NODE_GROUP_LABEL_KEY, c.RAY_CLUSTER_LABEL_KEY)
    for key, value in override_labels.items():
        if key not in protected:
            labels[key] = value
    return labels


def _merged_labels(group: Mapping[str, Any], template_meta: Mapping[str, Any]) -> dict[str, str]:
    return {**str_map(template_meta.get("labels")), **str_map(group.get("labels"))}


def _init_template_annotations(cluster: Mapping[str, Any], meta: dict[str, Any]) -> dict[str, str]:
    annotations = str_map(meta.get("annotations"))
    if is_overwrite_ray_container_cmd(cluster):
        annotations[c.RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY] = "true"
    meta["annotations"] = annotations
    return annotations


def _add_metrics_port(container: MutableMapping[str, Any]) -> None:
    ports = list(as_list(container.get("ports")))
    if not any(as_map(p).get("name") == c.METRICS_PORT_NAME for p in ports):
        ports.append({"name": c.METRICS_PORT_NAME, "containerPort": c.DEFAULT_METRICS_PORT})
    container["ports"] = ports


def wait_gcs_ready_script(fqdn_ray_ip: str, port: str) -> str:
    """The ``wait-gcs-ready`` loop, byte-identical to KubeRay's (tab-indented bash)."""
    address = f"{fqdn_ray_ip}:{port}"
    body: Sequence[tuple[int, str]] = (
        (0, "SECONDS=0"),
        (0, "while true; do"),
        (1, "if (( SECONDS <= 120 )); then"),
        (2, f"if ray health-check --address {address} > /dev/null 2>&1; then"),
        (3, 'echo "GCS is ready."'),
        (3, "break"),
        (2, "fi"),
        (2, 'echo "$SECONDS seconds elapsed: Waiting for GCS to be ready."'),
        (1, "else"),
        (2, f"if ray health-check --address {address}; then"),
        (3, 'echo "GCS is ready. Any error messages above can be safely ignored."'),
        (3, "break"),
        (2, "fi"),
        (
            2,
            'echo "$SECONDS seconds elapsed: Still waiting for GCS to be ready. '
            f'For troubleshooting, refer to the FAQ at {_TROUBLESHOOTING_URL}."',
        ),
        (1, "fi"),
        (1, "sleep 5"),
        (0, "done"),
    )
    lines = "".join("\t" * (5 + depth) + text + "\n" for depth, text in body)
    return "\n" + lines + "\t" * 4


def _wait_gcs_ready_container(
    ray_container: Mapping[str, Any], fqdn_ray_ip: str, port: str, options: BuildOptions
) -> dict[str, Any]:
    init: dict[str, Any] = {"name": c.WAIT_GCS_READY_INIT_CONTAINER_NAME}
    if ray_container.get("image"):
        init["image"] = ray_container["image"]
    init["command"] = options.container_command()
    init["args"] = [wait_gcs_ready_script(fqdn_ray_ip, port)]
    if ray_container.get("env"):
        init["env"] = copy.deepcopy(list(ray_container["env"]))
    init["resources"] = copy.deepcopy(_WAIT_GCS_READY_RESOURCES)
    if ray_container.get("volumeMounts"):
        init["volumeMounts"] = copy.deepcopy(list(ray_container["volumeMounts"]))
    if ray_container.get("imagePullPolicy"):
        init["imagePullPolicy"] = ray_container["imagePullPolicy"]
    if ray_container.get("securityContext") is not None:
        init["securityContext"] = copy.deepcopy(ray_container["securityContext"])
    return init


def _collector(cluster: Mapping[str, Any], node_type: str, fqdn_ray_ip: str) -> dict[str, Any]:
    meta = metadata(cluster)
    cluster_spec = spec(cluster)
    collector_options = as_map(
        as_map(cluster_spec.get("historyServerOptions")).get("collectorOptions")
    )
    container = build_collector_container(
        collector_options,
        node_type,
        str(meta.get("name", "")),
        str(meta.get("namespace", "")),
        fqdn_ray_ip,
        as_map(meta.get("labels")),
    )
    if not container.get("image"):
        container.pop("image", None)
    if is_auth_enabled(cluster):
        set_container_token_auth_env_vars(
            str(meta.get("name", "")), container, as_map(cluster_spec.get("authOptions"))
        )
    return container


def find_worker_group(
    cluster: Mapping[str, Any], group: str | Mapping[str, Any]
) -> Mapping[str, Any]:
    """The worker group spec named ``group`` (or ``group`` itself if it is a spec)."""
    if isinstance(group, Mapping):
        return group
    for candidate in as_list(spec(cluster).get("workerGroupSpecs")):
        if as_map(candidate).get("groupName") == group:
            return as_map(candidate)
    raise KeyError(f"worker group {group!r} not found")


# ----- template defaulting -----------------------------------------------------------------------
def _head_template(
    cluster: Mapping[str, Any],
    params: dict[str, str],
    options: BuildOptions,
    features: Mapping[str, bool] | None,
) -> dict[str, Any]:
    meta_c = metadata(cluster)
    cluster_name = str(meta_c.get("name", ""))
    cluster_spec = spec(cluster)
    head = as_map(cluster_spec.get("headGroupSpec"))
    port = head_port(cluster)

    template, meta, pod_spec = _template_parts(head.get("template"))
    name = head_pod_name(cluster_name, deterministic=options.enable_deterministic_head_pod_name)
    if options.enable_deterministic_head_pod_name:
        meta["name"] = name
    else:
        meta["generateName"] = name
    meta["namespace"] = meta_c.get("namespace", "")

    update_ray_start_params_resources(params, as_map(head.get("resources")))
    update_ray_start_params_labels(params, str_map(head.get("labels")))
    meta["labels"] = label_pod(
        c.HEAD_NODE, cluster_name, c.RAY_NODE_HEAD_GROUP_LABEL_VALUE, _merged_labels(head, meta)
    )
    set_missing_ray_start_params(params, c.HEAD_NODE, port, "")
    annotations = _init_template_annotations(cluster, meta)

    containers = _containers(pod_spec, "head")
    ray = containers[RAY_CONTAINER_INDEX]
    auth_options = as_map(cluster_spec.get("authOptions"))
    if is_autoscaling_enabled(cluster):
        params["no-monitor"] = "true"
        pod_spec["serviceAccountName"] = autoscaler_service_account_name(cluster)
        autoscaler = build_autoscaler_container(as_str(ray.get("image")), options)
        if is_auth_enabled(cluster):
            set_container_token_auth_env_vars(cluster_name, autoscaler, auth_options)
        if is_tls_enabled(cluster, features):
            set_container_tls_config(autoscaler)
        merge_autoscaler_overrides(autoscaler, as_map(cluster_spec.get("autoscalerOptions")))
        containers.append(autoscaler)
        if is_autoscaling_v2_enabled(cluster):
            ray["env"] = [*as_list(ray.get("env")), _value_env(c.RAY_ENABLE_AUTOSCALER_V2, "true")]
            pod_spec["restartPolicy"] = "Never"
        elif is_autoscaling_v1_enabled(cluster):
            ray["env"] = [*as_list(ray.get("env")), _value_env(c.RAY_ENABLE_AUTOSCALER_V2, "false")]

    configure_gcs_fault_tolerance(annotations, pod_spec, cluster, params, c.HEAD_NODE)
    _add_metrics_port(ray)
    if is_auth_enabled(cluster):
        configure_token_auth(cluster_name, pod_spec, auth_options)
    if is_tls_enabled(cluster, features):
        configure_tls(pod_spec, cluster, c.HEAD_NODE)
    if is_history_server_enabled(cluster, features):
        fqdn = fqdn_head_service_name(cluster, options.cluster_domain)
        containers.append(_collector(cluster, c.HEAD_NODE, fqdn))
    return template


def _worker_template(
    cluster: Mapping[str, Any],
    group: Mapping[str, Any],
    params: dict[str, str],
    options: BuildOptions,
    features: Mapping[str, bool] | None,
    fqdn: str,
    replica_group_name: str,
    replica_index: int,
    host_index: int,
) -> dict[str, Any]:
    meta_c = metadata(cluster)
    cluster_name = str(meta_c.get("name", ""))
    cluster_spec = spec(cluster)
    port = head_port(cluster)
    group_name = as_str(group.get("groupName"))

    template, meta, pod_spec = _template_parts(group.get("template"))
    meta["generateName"] = worker_pod_generate_name(cluster_name, group_name)
    meta["namespace"] = meta_c.get("namespace", "")

    containers = _containers(pod_spec, "worker")
    ray = containers[RAY_CONTAINER_INDEX]
    if options.enable_init_container_injection:
        init = _wait_gcs_ready_container(ray, fqdn, port, options)
        pod_spec["initContainers"] = [*as_list(pod_spec.get("initContainers")), init]
    meta.pop("name", None)

    update_ray_start_params_resources(params, as_map(group.get("resources")))
    update_ray_start_params_labels(params, str_map(group.get("labels")))
    labels = label_pod(c.WORKER_NODE, cluster_name, group_name, _merged_labels(group, meta))
    if gates.feature_enabled(features, gates.RAY_MULTI_HOST_INDEXING):
        labels[c.RAY_WORKER_REPLICA_INDEX_KEY] = str(replica_index)
        num_of_hosts = group.get("numOfHosts")
        if isinstance(num_of_hosts, int) and num_of_hosts > 1:
            labels[c.RAY_WORKER_REPLICA_NAME_KEY] = replica_group_name
            labels[c.RAY_HOST_INDEX_KEY] = str(host_index)
    meta["labels"] = labels
    set_missing_ray_start_params(params, c.WORKER_NODE, port, fqdn)
    annotations = _init_template_annotations(cluster, meta)
    configure_gcs_fault_tolerance(annotations, pod_spec, cluster, params, c.WORKER_NODE)
    _add_metrics_port(ray)
    if is_autoscaling_enabled(cluster) and is_autoscaling_v2_enabled(cluster):
        pod_spec["restartPolicy"] = "Never"
    if is_auth_enabled(cluster):
        configure_token_auth(cluster_name, pod_spec, as_map(cluster_spec.get("authOptions")))
    if is_tls_enabled(cluster, features):
        configure_tls(pod_spec, cluster, c.WORKER_NODE)
    if is_history_server_enabled(cluster, features):
        containers.append(_collector(cluster, c.WORKER_NODE, fqdn))
    return template


def _apply_operator_config(
    template: dict[str, Any], sidecars: Sequence[Mapping[str, Any]], options: BuildOptions
) -> None:
    pod_spec = template["spec"]
    meta = template["metadata"]
    if sidecars:
        pod_spec["containers"] = [*pod_spec["containers"], *copy.deepcopy(list(sidecars))]
    annotations = meta.setdefault("annotations", {})
    for key, value in options.default_pod_annotations.items():
        annotations.setdefault(key, value)
    labels = meta.setdefault("labels", {})
    for key, value in options.default_pod_labels.items():
        labels.setdefault(key, value)


# ----- BuildPod ----------------------------------------------------------------------------------
def _add_empty_dir(
    container: MutableMapping[str, Any],
    pod_spec: MutableMapping[str, Any],
    volume_name: str,
    mount_path: str,
    memory_medium: bool,
) -> None:
    mounts = list(as_list(container.get("volumeMounts")))
    if any(as_map(m).get("mountPath") == mount_path for m in mounts):
        return
    volumes = list(as_list(pod_spec.get("volumes")))
    if not any(as_map(v).get("name") == volume_name for v in volumes):
        empty_dir: dict[str, Any] = {}
        if memory_medium:
            empty_dir["medium"] = "Memory"
            resources = as_map(container.get("resources"))
            for section in ("limits", "requests"):
                values = as_map(resources.get(section))
                if "memory" in values:
                    empty_dir["sizeLimit"] = str(Quantity.from_json(values["memory"]))
                    break
        volumes.append({"name": volume_name, "emptyDir": empty_dir})
        pod_spec["volumes"] = volumes
    mounts.append({"name": volume_name, "mountPath": mount_path})
    container["volumeMounts"] = mounts


def _index_of_container(containers: Sequence[Any], name: str) -> int:
    for i, container in enumerate(containers):
        if as_map(container).get("name") == name:
            return i
    return -1


def _set_container_env_vars(
    pod_spec: MutableMapping[str, Any],
    node_type: str,
    fqdn: str,
    port: str,
    ray_start_cmd: str,
    creator: str,
    options: BuildOptions,
    collector_present: bool,
) -> None:
    container = pod_spec["containers"][RAY_CONTAINER_INDEX]
    env: list[Any] = list(as_list(container.get("env")))
    for default_env in options.default_container_envs:
        name = as_str(default_env.get("name"))
        if not env_var_exists(name, env):
            env.append(copy.deepcopy(dict(default_env)))
    ip = LOCAL_HOST
    if node_type == c.WORKER_NODE:
        ip = fqdn
        env.append(_value_env(c.FQ_RAY_IP, ip))
        env.append(_value_env(c.RAY_IP, extract_ray_ip_from_fqdn(ip)))
    env.append(_field_env(c.RAY_CLUSTER_NAME, f"metadata.labels['{c.RAY_CLUSTER_LABEL_KEY}']"))
    env.append(_field_env(c.RAY_CLUSTER_NAMESPACE, "metadata.namespace"))
    env.append(_field_env(c.RAY_CLOUD_INSTANCE_ID, "metadata.name"))
    env.append(_field_env(c.RAY_NODE_TYPE_NAME, f"metadata.labels['{c.RAY_NODE_GROUP_LABEL_KEY}']"))
    env.append(_value_env(c.KUBERAY_GEN_RAY_START_CMD, ray_start_cmd))
    _append_if_absent(env, c.RAY_PORT, port)
    if creator == c.KIND_RAYSERVICE:
        _append_if_absent(env, c.RAY_TIMEOUT_MS_TASK_WAIT_FOR_DEATH_INFO, "0")
        _append_if_absent(env, c.RAY_GCS_SERVER_REQUEST_TIMEOUT_SECONDS, "5")
        _append_if_absent(env, c.RAY_SERVE_KV_TIMEOUT_S, "5")
    _append_if_absent(env, c.RAY_ADDRESS, f"{ip}:{port}")
    _append_if_absent(env, c.RAY_USAGE_STATS_KUBERAY_IN_USE, "1")
    if node_type == c.HEAD_NODE:
        env.append(
            _value_env(
                c.RAY_USAGE_STATS_EXTRA_TAGS,
                f"kuberay_version={options.kuberay_version};kuberay_crd={creator}",
            )
        )
    _append_if_absent(env, c.RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE, "1")
    if collector_present:
        for event_env in ray_event_export_env():
            _append_if_absent(env, event_env["name"], event_env["value"])
    container["env"] = env


def _build_pod(
    template: dict[str, Any],
    node_type: str,
    params: dict[str, str],
    cluster: Mapping[str, Any],
    fqdn: str,
    options: BuildOptions,
    features: Mapping[str, bool] | None,
) -> dict[str, Any]:
    meta: dict[str, Any] = template["metadata"]
    pod_spec: dict[str, Any] = template["spec"]
    creator = creator_crd_type(cluster)
    port = head_port(cluster)
    labels = meta.setdefault("labels", {})
    if creator == c.KIND_RAYSERVICE:
        labels[c.RAY_CLUSTER_SERVING_SERVICE_LABEL_KEY] = (
            c.ENABLE_RAY_CLUSTER_SERVING_SERVICE_FALSE
            if node_type == c.HEAD_NODE
            else c.ENABLE_RAY_CLUSTER_SERVING_SERVICE_TRUE
        )

    containers = pod_spec["containers"]
    ray = containers[RAY_CONTAINER_INDEX]
    if c.PLASMA_DIRECTORY_PARAM_KEY not in params:
        _add_empty_dir(
            ray, pod_spec, c.SHARED_MEMORY_VOLUME_NAME, c.SHARED_MEMORY_VOLUME_MOUNT_PATH, True
        )
    if node_type == c.HEAD_NODE and is_autoscaling_enabled(cluster):
        index = _index_of_container(containers, c.AUTOSCALER_CONTAINER_NAME)
        _add_empty_dir(ray, pod_spec, c.RAY_LOG_VOLUME_NAME, c.RAY_LOG_VOLUME_MOUNT_PATH, False)
        if index >= 0:
            _add_empty_dir(
                containers[index],
                pod_spec,
                c.RAY_LOG_VOLUME_NAME,
                c.RAY_LOG_VOLUME_MOUNT_PATH,
                False,
            )
    collector_index = -1
    if gates.feature_enabled(features, gates.RAY_CLUSTER_HISTORY_SERVER):
        collector_index = _index_of_container(containers, c.COLLECTOR_CONTAINER_NAME)
        if collector_index >= 0:
            _add_empty_dir(ray, pod_spec, c.RAY_LOG_VOLUME_NAME, c.RAY_LOG_VOLUME_MOUNT_PATH, False)
            _add_empty_dir(
                containers[collector_index],
                pod_spec,
                c.RAY_LOG_VOLUME_NAME,
                c.RAY_LOG_VOLUME_MOUNT_PATH,
                False,
            )

    ray_start_cmd = generate_ray_start_command(node_type, params, as_map(ray.get("resources")))
    overwrite_value = as_map(meta.get("annotations")).get(
        c.RAY_OVERWRITE_CONTAINER_CMD_ANNOTATION_KEY
    )
    overwrite = isinstance(overwrite_value, str) and overwrite_value.lower() == "true"
    new_command = ray_container_command(ray, ray_start_cmd, overwrite=overwrite, options=options)
    if new_command is not None:
        ray["command"], ray["args"] = new_command

    init_containers = [dict(x) for x in as_list(pod_spec.get("initContainers"))]
    for init in init_containers:
        init["env"] = [
            *as_list(init.get("env")),
            _value_env(c.FQ_RAY_IP, fqdn),
            _value_env(c.RAY_IP, extract_ray_ip_from_fqdn(fqdn)),
        ]
    if init_containers:
        pod_spec["initContainers"] = init_containers

    _set_container_env_vars(
        pod_spec, node_type, fqdn, port, ray_start_cmd, creator, options, collector_index >= 0
    )
    if options.enable_probes_injection:
        init_liveness_and_readiness_probes(
            ray, node_type, creator, params, as_str(spec(cluster).get("rayVersion"))
        )
    if not meta.get("annotations"):
        meta.pop("annotations", None)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}


# ----- public builders ---------------------------------------------------------------------------
def build_head_pod_without_upgrade_annotations(
    cluster: Mapping[str, Any],
    options: BuildOptions | None = None,
    features: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """KubeRay ``buildHeadPod``: the head pod without the recreate-hash/version annotations.

    This is also the starting point of the Redis cleanup Job.
    """
    opts = options if options is not None else BuildOptions()
    working = dict(cluster)
    working["spec"] = with_default_ray_start_params(spec(cluster))
    head = as_map(spec(working).get("headGroupSpec"))
    params = str_map(head.get("rayStartParams"))
    template = _head_template(working, params, opts, features)
    _apply_operator_config(template, opts.head_sidecar_containers, opts)
    fqdn = fqdn_head_service_name(working, opts.cluster_domain)
    pod = _build_pod(template, c.HEAD_NODE, params, working, fqdn, opts, features)
    pod["metadata"]["ownerReferences"] = [controller_owner_reference(cluster)]
    return pod


def build_head_pod(
    cluster: Mapping[str, Any],
    options: BuildOptions | None = None,
    features: Mapping[str, bool] | None = None,
    *,
    recreate_hash: str | None = None,
) -> dict[str, Any]:
    """The head pod KubeRay creates for ``cluster`` (``createHeadPod``).

    ``recreate_hash`` defaults to the hash of the (defaulted) spec, which is what KubeRay stamps
    as ``ray.io/upgrade-strategy-recreate-hash``; pass the value you already computed to avoid
    hashing twice. An empty string skips both upgrade annotations, as KubeRay does.
    """
    opts = options if options is not None else BuildOptions()
    pod = build_head_pod_without_upgrade_annotations(cluster, opts, features)
    if recreate_hash is None:
        recreate_hash = generate_hash_without_replicas_and_workers_to_delete(
            with_default_ray_start_params(spec(cluster))
        )
    if recreate_hash:
        annotations = pod["metadata"].setdefault("annotations", {})
        annotations[c.UPGRADE_STRATEGY_RECREATE_HASH_KEY] = recreate_hash
        annotations[c.KUBERAY_VERSION_ANNOTATION_KEY] = opts.kuberay_version
    return pod


def build_worker_pod(
    cluster: Mapping[str, Any],
    group: str | Mapping[str, Any],
    options: BuildOptions | None = None,
    features: Mapping[str, bool] | None = None,
    *,
    replica_group_name: str = "",
    replica_index: int = 0,
    host_index: int = 0,
    pod_name: str | None = None,
) -> dict[str, Any]:
    """A worker pod of ``group`` (its name or its spec dict), as ``buildWorkerPod``.

    KubeRay names workers with ``generateName`` (``<cluster>-<group>-worker-``); pass
    ``pod_name`` to get a fixed ``metadata.name`` instead (``generateName`` is then dropped).

    With the ``RayMultiHostIndexing`` gate (default on) every worker carries
    ``ray.io/worker-group-replica-index=<replica_index>``; groups with ``numOfHosts > 1`` also
    get ``ray.io/worker-group-replica-name=<replica_group_name>`` and
    ``ray.io/replica-host-index=<host_index>``.
    """
    opts = options if options is not None else BuildOptions()
    working = dict(cluster)
    working["spec"] = with_default_ray_start_params(spec(cluster))
    group_spec = copy.deepcopy(dict(find_worker_group(working, group)))
    if group_spec.get("rayStartParams") is None:
        group_spec["rayStartParams"] = {}
    params = str_map(group_spec.get("rayStartParams"))
    fqdn = fqdn_head_service_name(working, opts.cluster_domain)
    template = _worker_template(
        working,
        group_spec,
        params,
        opts,
        features,
        fqdn,
        replica_group_name,
        replica_index,
        host_index,
    )
    _apply_operator_config(template, opts.worker_sidecar_containers, opts)
    pod = _build_pod(template, c.WORKER_NODE, params, working, fqdn, opts, features)
    pod["metadata"]["ownerReferences"] = [controller_owner_reference(cluster)]
    if pod_name:
        pod["metadata"].pop("generateName", None)
        pod["metadata"]["name"] = pod_name
    return pod
