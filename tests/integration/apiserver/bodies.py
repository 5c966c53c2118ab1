"""Small valid bodies of KubeRay's three kinds, for the API server's tests."""

from __future__ import annotations

from typing import Any

IMAGE = "rayproject/ray:2.52.0"


def _group(container: str, resources: dict[str, Any] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": container, "image": IMAGE}
    if resources is not None:
        c["resources"] = resources
    return {"spec": {"containers": [c]}}


def cluster_spec(head_extra: dict[str, Any] | None = None, worker: bool = True) -> dict[str, Any]:
    """A RayCluster spec: a head group and one worker group ``small``."""
    spec: dict[str, Any] = {
        "headGroupSpec": {
            "rayStartParams": {},
            "template": _group("ray-head"),
            **(head_extra or {}),
        }
    }
    if worker:
        spec["workerGroupSpecs"] = [
            {
                "groupName": "small",
                "replicas": 1,
                "minReplicas": 0,
                "maxReplicas": 2,
                "rayStartParams": {},
                "template": _group("ray-worker"),
            }
        ]
    return spec


def raycluster(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    """A RayCluster."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": cluster_spec(**spec),
    }


def rayjob(name: str, namespace: str) -> dict[str, Any]:
    """A RayJob with its own cluster, suspended (the operator is not running here)."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "entrypoint": "python -c 'print(1)'",
            "suspend": True,
            "rayClusterSpec": cluster_spec(),
        },
    }


def rayservice(name: str, namespace: str) -> dict[str, Any]:
    """A RayService."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"serveConfigV2": "applications: []\n", "rayClusterConfig": cluster_spec()},
    }
