"""Head and worker pods of a RayCluster, as KubeRay v1.7 builds them.

:func:`build_head_pod` / :func:`build_worker_pod` take the RayCluster exactly as stored (a plain
dict, never mutated) and return a complete Pod dict ready to be created. The assembly follows
KubeRay step by step because the *order* of env vars, volumes and containers is observable:

template defaulting (``DefaultHeadPodTemplate`` / ``DefaultWorkerPodTemplate``; ``pod_template``)
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
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.api.v1.rules import creator_crd_type, head_port, is_autoscaling_enabled
from kuberay.controllers.common import gates
from kuberay.controllers.common.constants import LOCAL_HOST, RAY_CONTAINER_INDEX
from kuberay.controllers.common.defaults import with_default_ray_start_params
from kuberay.controllers.common.objects import (
    as_list,
    as_map,
    as_str,
    env_var_exists,
    spec,
    str_map,
)
from kuberay.controllers.common.options import BuildOptions
from kuberay.gocompat.quantity import Quantity

from .hashing import generate_hash_without_replicas_and_workers_to_delete
from .history_server import ray_event_export_env
from .names import (
    extract_ray_ip_from_fqdn,
    fqdn_head_service_name,
)
from .owner import controller_owner_reference
from .pod_env import append_if_absent, field_env, value_env
from .pod_template import apply_operator_config, find_worker_group, head_template, worker_template
from .probes import init_liveness_and_readiness_probes
from .ray_start import (
    generate_ray_start_command,
    ray_container_command,
)

__all__ = [
    "build_head_pod",
    "build_head_pod_without_upgrade_annotations",
    "build_worker_pod",
]


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
        env.append(value_env(c.FQ_RAY_IP, ip))
        env.append(value_env(c.RAY_IP, extract_ray_ip_from_fqdn(ip)))
    env.append(field_env(c.RAY_CLUSTER_NAME, f"metadata.labels['{c.RAY_CLUSTER_LABEL_KEY}']"))
    env.append(field_env(c.RAY_CLUSTER_NAMESPACE, "metadata.namespace"))
    env.append(field_env(c.RAY_CLOUD_INSTANCE_ID, "metadata.name"))
    env.append(field_env(c.RAY_NODE_TYPE_NAME, f"metadata.labels['{c.RAY_NODE_GROUP_LABEL_KEY}']"))
    env.append(value_env(c.KUBERAY_GEN_RAY_START_CMD, ray_start_cmd))
    append_if_absent(env, c.RAY_PORT, port)
    if creator == c.KIND_RAYSERVICE:
        append_if_absent(env, c.RAY_TIMEOUT_MS_TASK_WAIT_FOR_DEATH_INFO, "0")
        append_if_absent(env, c.RAY_GCS_SERVER_REQUEST_TIMEOUT_SECONDS, "5")
        append_if_absent(env, c.RAY_SERVE_KV_TIMEOUT_S, "5")
    append_if_absent(env, c.RAY_ADDRESS, f"{ip}:{port}")
    append_if_absent(env, c.RAY_USAGE_STATS_KUBERAY_IN_USE, "1")
    if node_type == c.HEAD_NODE:
        env.append(
            value_env(
                c.RAY_USAGE_STATS_EXTRA_TAGS,
                f"kuberay_version={options.kuberay_version};kuberay_crd={creator}",
            )
        )
    append_if_absent(env, c.RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE, "1")
    if collector_present:
        for event_env in ray_event_export_env():
            append_if_absent(env, event_env["name"], event_env["value"])
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
            value_env(c.FQ_RAY_IP, fqdn),
            value_env(c.RAY_IP, extract_ray_ip_from_fqdn(fqdn)),
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
    template = head_template(working, params, opts, features)
    apply_operator_config(template, opts.head_sidecar_containers, opts)
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
    template = worker_template(
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
    apply_operator_config(template, opts.worker_sidecar_containers, opts)
    pod = _build_pod(template, c.WORKER_NODE, params, working, fqdn, opts, features)
    pod["metadata"]["ownerReferences"] = [controller_owner_reference(cluster)]
    if pod_name:
        pod["metadata"].pop("generateName", None)
        pod["metadata"]["name"] = pod_name
    return pod
