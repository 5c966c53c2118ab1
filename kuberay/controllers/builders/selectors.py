"""Label selectors KubeRay uses to find the objects of a RayCluster (``common/association.go``).

Each function returns the ``matchLabels`` map; list/delete them in the cluster's namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.objects import as_str, metadata

from .names import check_label, generate_identifier

__all__ = [
    "all_pods_selector",
    "group_pods_selector",
    "head_pods_selector",
    "head_service_selector",
    "headless_service_selector",
    "network_resources_selector",
    "redis_cleanup_job_selector",
    "worker_pods_selector",
]


def _name(cluster: Mapping[str, Any]) -> str:
    return as_str(metadata(cluster).get("name"))


def all_pods_selector(cluster: Mapping[str, Any]) -> dict[str, str]:
    """Every Ray pod of the cluster (suspend, Recreate, status)."""
    return {c.RAY_CLUSTER_LABEL_KEY: _name(cluster)}


def head_pods_selector(cluster: Mapping[str, Any]) -> dict[str, str]:
    return {c.RAY_CLUSTER_LABEL_KEY: _name(cluster), c.RAY_NODE_TYPE_LABEL_KEY: c.HEAD_NODE}


def worker_pods_selector(cluster: Mapping[str, Any]) -> dict[str, str]:
    return {c.RAY_CLUSTER_LABEL_KEY: _name(cluster), c.RAY_NODE_TYPE_LABEL_KEY: c.WORKER_NODE}


def group_pods_selector(cluster: Mapping[str, Any], group_name: str) -> dict[str, str]:
    """Pods of one worker group (``ray.io/group``)."""
    return {c.RAY_CLUSTER_LABEL_KEY: _name(cluster), c.RAY_NODE_GROUP_LABEL_KEY: group_name}


def redis_cleanup_job_selector(cluster: Mapping[str, Any]) -> dict[str, str]:
    return {
        c.RAY_CLUSTER_LABEL_KEY: _name(cluster),
        c.RAY_NODE_TYPE_LABEL_KEY: c.REDIS_CLEANUP_NODE,
    }


def head_service_selector(cluster: Mapping[str, Any]) -> dict[str, str]:
    """How KubeRay finds an existing head Service (0 -> create, >1 -> error)."""
    name = _name(cluster)
    return {
        c.RAY_CLUSTER_LABEL_KEY: name,
        c.RAY_NODE_TYPE_LABEL_KEY: c.HEAD_NODE,
        c.RAY_ID_LABEL_KEY: check_label(generate_identifier(name, c.HEAD_NODE)),
    }


def headless_service_selector(cluster: Mapping[str, Any]) -> dict[str, str]:
    return {c.RAY_CLUSTER_HEADLESS_SERVICE_LABEL_KEY: _name(cluster)}


def network_resources_selector(cluster: Mapping[str, Any]) -> dict[str, str]:
    """OpenShift Routes of the cluster."""
    return {c.RAY_CLUSTER_LABEL_KEY: _name(cluster)}
