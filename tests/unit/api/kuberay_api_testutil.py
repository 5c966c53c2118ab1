"""Shared builders for the kuberay.api.v1 unit tests (valid base objects as plain dicts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.kuberay_samples import KUBERAY_SAMPLES

REPO = Path(__file__).resolve().parents[3]
OWN_SAMPLES = REPO / "tests" / "samples"
REFERENCE_SAMPLES = KUBERAY_SAMPLES
RAY_KINDS = ("RayCluster", "RayJob", "RayService", "RayCronJob")
ALL_GATES_ON = {
    "RayClusterStatusConditions": True,
    "RayJobDeletionPolicy": True,
    "RayMultiHostIndexing": True,
    "RayServiceIncrementalUpgrade": True,
    "RayCronJob": True,
    "SidecarSubmitterRestart": True,
    "RayClusterNetworkPolicy": True,
    "GCSFaultToleranceEmbeddedStorage": True,
    "RayClusterMTLS": True,
    "RayClusterHistoryServer": True,
    "KubernetesWAS": True,
}


def container(name: str = "ray-head", **extra: Any) -> dict[str, Any]:
    """A ray container dict."""
    return {"name": name, "image": "rayproject/ray:2.52.0", **extra}


def cluster_spec(**overrides: Any) -> dict[str, Any]:
    """A valid RayClusterSpec dict: a head and one worker group named ``workers``."""
    spec: dict[str, Any] = {
        "rayVersion": "2.52.0",
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {"spec": {"containers": [container()]}},
        },
        "workerGroupSpecs": [
            {
                "groupName": "workers",
                "replicas": 1,
                "minReplicas": 0,
                "maxReplicas": 3,
                "rayStartParams": {},
                "template": {"spec": {"containers": [container("ray-worker")]}},
            }
        ],
    }
    spec.update(overrides)
    return spec


def raycluster(name: str = "raycluster-test", **spec_overrides: Any) -> dict[str, Any]:
    """A valid RayCluster dict."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": "default"},
        "spec": cluster_spec(**spec_overrides),
    }


def rayjob(name: str = "rayjob-test", **spec_overrides: Any) -> dict[str, Any]:
    """A valid RayJob dict (K8sJobMode, embedded cluster spec)."""
    spec: dict[str, Any] = {
        "entrypoint": "python job.py",
        "rayClusterSpec": cluster_spec(),
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def rayservice(name: str = "rayservice-test", **spec_overrides: Any) -> dict[str, Any]:
    """A valid RayService dict."""
    spec: dict[str, Any] = {
        "serveConfigV2": "applications: []\n",
        "rayClusterConfig": cluster_spec(),
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def raycronjob(name: str = "raycronjob-test", **spec_overrides: Any) -> dict[str, Any]:
    """A valid RayCronJob dict."""
    spec: dict[str, Any] = {
        "schedule": "*/5 * * * *",
        "jobTemplate": {"entrypoint": "python job.py", "rayClusterSpec": cluster_spec()},
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def load_documents(path: Path) -> list[dict[str, Any]]:
    """Every non-empty YAML document of a file."""
    with path.open() as handle:
        return [d for d in yaml.safe_load_all(handle) if isinstance(d, dict)]


def ray_documents(directory: Path, pattern: str = "*.yaml") -> list[tuple[str, dict[str, Any]]]:
    """``(id, document)`` for every ray.io object in ``directory`` (sorted by file)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(directory.glob(pattern)):
        for index, doc in enumerate(load_documents(path)):
            if (
                str(doc.get("apiVersion", "")).startswith("ray.io/")
                and doc.get("kind") in RAY_KINDS
            ):
                out.append((f"{path.name}#{index}", doc))
    return out
