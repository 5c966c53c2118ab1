"""History-server collector sidecar (gate ``RayClusterHistoryServer``).

With ``historyServerOptions.collectorOptions`` set, every head and worker pod gets a
``ray-history-collector`` container that shares the ``ray-logs`` emptyDir (``/tmp/ray``) with the
Ray container, and the Ray container gets the event-export env vars of
:func:`ray_event_export_env`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.objects import as_list, as_map, env_var_exists

__all__ = ["build_collector_container", "ray_event_export_env"]


def build_collector_container(
    collector_options: Mapping[str, Any],
    node_type: str,
    cluster_name: str,
    cluster_namespace: str,
    fqdn_ray_ip: str,
    cluster_labels: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """KubeRay ``BuildCollectorContainer``."""
    image = collector_options.get("image")
    pull_policy = collector_options.get("imagePullPolicy")
    resources = collector_options.get("resources")
    env: list[dict[str, Any]] = [
        {"name": c.POD_IP, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": c.RAY_CLUSTER_NAME, "value": cluster_name},
        {"name": c.RAY_CLUSTER_NAMESPACE, "value": cluster_namespace},
        {"name": c.RAY_ROLE, "value": "Head" if node_type == c.HEAD_NODE else "Worker"},
        {"name": c.EVENTS_PORT, "value": c.DEFAULT_EVENTS_PORT},
    ]
    if fqdn_ray_ip:
        env.append({"name": c.FQ_RAY_IP, "value": fqdn_ray_ip})
    labels = as_map(cluster_labels)
    if labels.get(c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY):
        env.append({"name": c.OWNER_KIND, "value": labels[c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY]})
    if labels.get(c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY):
        env.append({"name": c.OWNER_NAME, "value": labels[c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY]})
    user_env = as_list(collector_options.get("env"))
    if node_type == c.HEAD_NODE and not env_var_exists(c.RAY_DASHBOARD_ADDRESS, user_env):
        env.append(
            {"name": c.RAY_DASHBOARD_ADDRESS, "value": c.DEFAULT_COLLECTOR_DASHBOARD_ADDRESS}
        )
    env.extend(copy.deepcopy(list(user_env)))
    container: dict[str, Any] = {
        "name": c.COLLECTOR_CONTAINER_NAME,
        "image": image if isinstance(image, str) else "",
        "imagePullPolicy": pull_policy if pull_policy is not None else "IfNotPresent",
        "resources": copy.deepcopy(resources)
        if resources is not None
        else {
            "limits": {"cpu": "200m", "memory": "256Mi"},
            "requests": {"cpu": "50m", "memory": "64Mi"},
        },
        "env": env,
    }
    return container


def ray_event_export_env() -> list[dict[str, Any]]:
    """Env vars the Ray container gets (each only if absent) when a collector is present."""
    return [
        {"name": c.RAY_ENABLE_RAY_EVENT, "value": "true"},
        {"name": c.RAY_ENABLE_CORE_WORKER_RAY_EVENT_TO_AGGREGATOR, "value": "true"},
        {
            "name": c.RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR,
            "value": c.DEFAULT_EVENTS_EXPORT_ADDR,
        },
        {
            "name": c.RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES,
            "value": c.DEFAULT_RAY_EXPOSABLE_EVENT_TYPES,
        },
        {
            "name": c.RAY_DASHBOARD_AGGREGATOR_AGENT_PUBLISHER_HTTP_ENDPOINT_EXPOSABLE_EVENT_TYPES,
            "value": c.DEFAULT_RAY_EXPOSABLE_EVENT_TYPES,
        },
    ]
