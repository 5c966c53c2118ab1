"""Helpers for RayCluster integration tests: the baseline CR, pod status patches, and
bounded waits for what the operator writes asynchronously (Events, status)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kuberay.kube import Client
from tests.integration.operator_harness import wait_for

RAY_IMAGE = "rayproject/ray:2.52.0"


def raycluster(name: str, namespace: str, *, replicas: int = 3, **spec: Any) -> dict[str, Any]:
    """KubeRay's baseline test cluster "T": one head, one worker group ``small-group``."""
    body: dict[str, Any] = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [{"name": "ray-head", "image": RAY_IMAGE}],
                    }
                },
            },
            "workerGroupSpecs": [
                {
                    "groupName": "small-group",
                    "replicas": replicas,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": {
                        "spec": {"containers": [{"name": "ray-worker", "image": RAY_IMAGE}]}
                    },
                }
            ],
        },
    }
    body["spec"].update(copy.deepcopy(spec))
    return body


async def pods_of(
    client: Client, namespace: str, cluster: str, **labels: str
) -> list[dict[str, Any]]:
    sel = ",".join([f"ray.io/cluster={cluster}"] + [f"{k}={v}" for k, v in labels.items()])
    items, _ = await client.list_all("v1", "Pod", namespace, label_selector=sel)
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def set_running(
    client: Client, pod: dict[str, Any], *, ready: bool = True, ip: str = "10.1.0.1"
) -> None:
    """What a kubelet would report: phase Running, a pod IP, Ready (or not)."""
    status = "True" if ready else "False"
    await client.patch_status(
        "v1",
        "Pod",
        pod["metadata"]["name"],
        {
            "status": {
                "phase": "Running",
                "podIP": ip,
                "conditions": [
                    {"type": "Ready", "status": status},
                    {"type": "ContainersReady", "status": status},
                ],
            }
        },
        pod["metadata"]["namespace"],
    )


async def all_running(client: Client, namespace: str, cluster: str) -> None:
    for i, pod in enumerate(await pods_of(client, namespace, cluster)):
        await set_running(client, pod, ip=f"10.1.0.{i + 1}")


async def get_cluster(client: Client, namespace: str, name: str) -> dict[str, Any]:
    return await client.get("ray.io/v1", "RayCluster", name, namespace)


def condition(cluster: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    for c in (cluster.get("status") or {}).get("conditions") or []:
        if c["type"] == ctype:
            return c
    return None


async def events_for(client: Client, namespace: str, name: str) -> list[dict[str, Any]]:
    items, _ = await client.list_all("v1", "Event", namespace)
    return [e for e in items if (e.get("involvedObject") or {}).get("name") == name]


async def wait_event_reasons(
    client: Client,
    namespace: str,
    name: str,
    reasons: set[str],
    *,
    timeout: float = 60.0,
) -> list[dict[str, Any]]:
    """Wait until Events about ``name`` include every reason in ``reasons`` (the
    EventRecorder writes them from a background task); returns the Events."""

    def has_all(events: list[dict[str, Any]]) -> bool:
        seen = {e["reason"] for e in events}
        assert reasons <= seen, f"missing {sorted(reasons - seen)}; seen {sorted(seen)}"
        return True

    result: list[dict[str, Any]] = await wait_for(
        lambda: events_for(client, namespace, name),
        has_all,
        timeout=timeout,
        message=f"events {sorted(reasons)} about {name}",
    )
    return result


async def wait_status(
    client: Client,
    namespace: str,
    name: str,
    check: Callable[[dict[str, Any]], bool],
    *,
    timeout: float = 60.0,
    message: str = "status",
) -> dict[str, Any]:
    """Wait until ``check(cluster)`` holds (status is written after the children are
    made, so it lags them); returns the cluster."""

    result: dict[str, Any] = await wait_for(
        lambda: get_cluster(client, namespace, name),
        check,
        timeout=timeout,
        message=f"{name}: {message}",
    )
    return result


async def wait_observed(operator: Any, namespace: str, name: str, *, timeout: float = 60.0) -> None:
    """Wait until the in-process ``operator`` has seen in its cache every pod it created
    or deleted for cluster ``name`` (no pending expectations). Deleting one of its pods
    before then races the operator: a pod gone before any pass saw it holds its group
    until the expectation TTL (as in KubeRay)."""
    expectations = operator.reconciler.ctx.expectations
    prefix = f"{namespace}/{name}/"

    def pending() -> dict[str, Any]:
        return {o: expectations.pending(o) for o in expectations.owners(prefix)}

    def settled(pending: dict[str, Any]) -> bool:
        assert all(expectations.satisfied(o) for o in pending), f"pending: {pending}"
        return True

    await wait_for(
        pending,
        settled,
        timeout=timeout,
        interval=0.1,
        message=f"operator observed the pods of {name}",
    )
