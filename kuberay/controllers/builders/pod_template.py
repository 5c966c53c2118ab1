"""Pod template defaulting of a RayCluster's head and workers, as KubeRay v1.7 does it
(``DefaultHeadPodTemplate`` / ``DefaultWorkerPodTemplate``) plus the operator config.

name/generateName and namespace; group ``resources``/``labels`` folded into ``rayStartParams``;
labels (``ray.io/cluster``, ``ray.io/node-type``, ``ray.io/group`` cannot be overridden by the
user); missing start params; ``ray.io/overwrite-container-cmd`` copied onto the template; head:
autoscaler sidecar (+ ``no-monitor``, ServiceAccount, ``RAY_enable_autoscaler_v2``); worker:
``wait-gcs-ready`` init container (a copy of the Ray container's *original* env and mounts) and
multi-host labels; GCS FT; ``metrics`` port; token auth; mTLS; history-server collector. Then
the operator config: ``headSidecarContainers``/``workerSidecarContainers`` appended, default pod
annotations and labels added where absent. :mod:`.pod` turns the template into the Pod.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.api.v1.rules import (
    head_port,
    is_auth_enabled,
    is_autoscaling_enabled,
    is_autoscaling_v1_enabled,
    is_autoscaling_v2_enabled,
    is_history_server_enabled,
    is_overwrite_ray_container_cmd,
    is_tls_enabled,
)
from kuberay.controllers.common import gates
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import (
    as_list,
    as_map,
    as_str,
    metadata,
    spec,
    str_map,
)
from kuberay.controllers.common.options import BuildOptions

from .auth import configure_token_auth, set_container_token_auth_env_vars
from .autoscaler import build_autoscaler_container, merge_autoscaler_overrides
from .gcs_ft import configure_gcs_fault_tolerance
from .history_server import build_collector_container
from .names import (
    autoscaler_service_account_name,
    check_label,
    fqdn_head_service_name,
    generate_identifier,
    head_pod_name,
    worker_pod_generate_name,
)
from .pod_env import value_env
from .ray_start import (
    set_missing_ray_start_params,
    update_ray_start_params_labels,
    update_ray_start_params_resources,
)
from .tls import configure_tls, set_container_tls_config

__all__ = [
    "apply_operator_config",
    "find_worker_group",
    "head_template",
    "label_pod",
    "wait_gcs_ready_script",
    "worker_template",
]

_WAIT_GCS_READY_RESOURCES: Final = {
    "limits": {"cpu": "200m", "memory": "256Mi"},
    "requests": {"cpu": "200m", "memory": "256Mi"},
}
_TROUBLESHOOTING_URL: Final = (
    "https://docs.ray.io/en/master/cluster/kubernetes/troubleshooting.html"
)


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
def head_template(
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
            ray["env"] = [*as_list(ray.get("env")), value_env(c.RAY_ENABLE_AUTOSCALER_V2, "true")]
            pod_spec["restartPolicy"] = "Never"
        elif is_autoscaling_v1_enabled(cluster):
            ray["env"] = [*as_list(ray.get("env")), value_env(c.RAY_ENABLE_AUTOSCALER_V2, "false")]

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


def worker_template(
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


def apply_operator_config(
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
