"""Helpers for the builder tests: a KubeRay-style RayCluster and the Go reference data.

``data/`` holds outputs of KubeRay's own Go code (see ``data/README.md``), among them:

* ``kuberay_go_golden.json.gz``: cases (RayCluster + operator env/gates/config) and the objects
  KubeRay v1.7 builds for them (head/worker pods, services, ingress, route, RBAC, PVC, Job, hash);
* ``go_spec_hash_vectors.json.gz``: RayClusterSpecs with Go's ``encoding/json`` bytes and hashes;
* ``go_quantity_vectors.json``: ``resource.Quantity`` parse/print/arithmetic results.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from kuberay.gocompat.quantity import Quantity
from tests.kuberay_samples import KUBERAY_SAMPLES

DATA = Path(__file__).parents[1] / "data"
SAMPLES = KUBERAY_SAMPLES


def load_gz(name: str) -> Any:
    with gzip.open(DATA / name, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def normalize(value: Any, parent: str = "") -> Any:
    """Go's JSON view of an object: drop null/{}/[] and a zero targetPort; canonical quantities."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if parent in ("limits", "requests") and isinstance(item, str | int | float):
                item = str(Quantity.from_json(item))
            item = normalize(item, key)
            if item is None or item == {} or item == []:
                continue
            if key == "targetPort" and item == 0:
                continue
            out[key] = item
        return out
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def fixture_p(name: str = "raycluster-sample") -> dict[str, Any]:
    """The scenario catalogue's fixture "P" (head 1 CPU/1Gi, worker group with 3 GPUs)."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": "default", "uid": "uid-p"},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-head",
                                "image": "repo/image:custom",
                                "env": [{"name": "TEST_ENV_NAME", "value": "TEST_ENV_VALUE"}],
                                "resources": {
                                    "requests": {"cpu": "1", "memory": "1Gi"},
                                    "limits": {"cpu": "1", "memory": "1Gi"},
                                },
                                "ports": [
                                    {"name": "gcs-server", "containerPort": 6379},
                                    {"name": "dashboard", "containerPort": 8265},
                                    {"name": "client", "containerPort": 10001},
                                    {"name": "serve", "containerPort": 8000},
                                ],
                            }
                        ]
                    }
                },
            },
            "workerGroupSpecs": [
                {
                    "groupName": "small-group",
                    "replicas": 3,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {"port": "6379"},
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "ray-worker",
                                    "image": "repo/image:custom",
                                    "resources": {
                                        "limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 3}
                                    },
                                }
                            ]
                        }
                    },
                }
            ],
        },
    }


def env_map(container: dict[str, Any]) -> dict[str, Any]:
    """name -> value (or valueFrom) of a container's env."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def env_names(container: dict[str, Any]) -> list[str]:
    return [e["name"] for e in container.get("env", [])]


def ray_container(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod's first container (the Ray container KubeRay builds)."""
    container: dict[str, Any] = pod["spec"]["containers"][0]
    return container


def small_group_worker(cluster: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """The worker pod of ``cluster``'s ``small-group``."""
    from kuberay.controllers.builders.pod import build_worker_pod

    return build_worker_pod(cluster, "small-group", **kw)
