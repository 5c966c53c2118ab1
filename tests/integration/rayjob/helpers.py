"""Helpers for RayJob integration tests: the baseline RayJob, what a kubelet and the Job
controller would report, and bounded waits for what the operator writes."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

from kuberay.kube import Client, NotFound
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.operator_harness import wait_for

RAY_IMAGE = "rayproject/ray:2.52.0"


def rayjob(name: str, namespace: str, *, workers: int = 0, **spec: Any) -> dict[str, Any]:
    """A RayJob whose cluster is one head (dashboard port 8265) and ``workers`` workers."""
    groups = []
    if workers:
        groups = [
            {
                "groupName": "small-group",
                "replicas": workers,
                "minReplicas": 0,
                "maxReplicas": 4,
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-worker", "image": RAY_IMAGE}]}},
            }
        ]
    body: dict[str, Any] = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": namespace, "annotations": {"foo": "bar"}},
        "spec": {
            "entrypoint": "python -c 'print(42)'",
            "rayClusterSpec": {
                "rayVersion": "2.52.0",
                "headGroupSpec": {
                    "rayStartParams": {},
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "ray-head",
                                    "image": RAY_IMAGE,
                                    "ports": [
                                        {"name": "gcs-server", "containerPort": 6379},
                                        {"name": "dashboard", "containerPort": 8265},
                                        {"name": "client", "containerPort": 10001},
                                    ],
                                }
                            ]
                        }
                    },
                },
                "workerGroupSpecs": groups,
            },
        },
    }
    body["spec"].update(copy.deepcopy(spec))
    return body


async def get_job(client: Client, namespace: str, name: str) -> dict[str, Any]:
    return await client.get("ray.io/v1", "RayJob", name, namespace)


async def wait_job(
    client: Client,
    namespace: str,
    name: str,
    check: Callable[[dict[str, Any]], bool],
    *,
    timeout: float = 60.0,
    message: str = "status",
) -> dict[str, Any]:
    """Wait until ``check(rayjob)`` holds; returns the RayJob."""

    result: dict[str, Any] = await wait_for(
        lambda: get_job(client, namespace, name),
        check,
        timeout=timeout,
        message=f"{name}: {message}",
    )
    return result


def state(job: dict[str, Any]) -> str:
    return str((job.get("status") or {}).get("jobDeploymentStatus") or "")


async def wait_state(
    client: Client, namespace: str, name: str, want: str, *, timeout: float = 60.0
) -> dict[str, Any]:
    return await wait_job(
        client, namespace, name, lambda j: state(j) == want, timeout=timeout, message=want
    )


async def wait_gone(
    client: Client, api_version: str, kind: str, namespace: str, name: str, timeout: float = 60
) -> None:
    async def gone() -> bool:
        try:
            await client.get(api_version, kind, name, namespace)
        except NotFound:
            return True
        return False

    await wait_for(gone, timeout=timeout, message=f"{kind} {name} deleted")


async def head_pod(client: Client, namespace: str, cluster: str) -> dict[str, Any]:
    async def find() -> dict[str, Any] | None:
        items, _ = await client.list_all(
            "v1", "Pod", namespace, label_selector=f"ray.io/cluster={cluster},ray.io/node-type=head"
        )
        live = [p for p in items if not p["metadata"].get("deletionTimestamp")]
        return live[0] if live else None

    pod: dict[str, Any] = await eventually(find, timeout=60, message=f"head pod of {cluster}")
    return pod


async def make_ready(
    client: Client, namespace: str, cluster: str, dashboard: FakeDashboard | None = None
) -> None:
    """What a kubelet would report for every pod of ``cluster``: Running and Ready; the
    head's IP is the fake dashboard's host (so the operator dials the fake)."""

    async def pods() -> list[dict[str, Any]] | None:
        items, _ = await client.list_all(
            "v1", "Pod", namespace, label_selector=f"ray.io/cluster={cluster}"
        )
        return items or None

    for i, pod in enumerate(await eventually(pods, timeout=60, message=f"pods of {cluster}")):
        is_head = pod["metadata"]["labels"].get("ray.io/node-type") == "head"
        ip = dashboard.host if (is_head and dashboard is not None) else f"10.9.0.{i + 2}"
        await set_pod_status(
            client,
            pod,
            {
                "phase": "Running",
                "podIP": ip,
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "ContainersReady", "status": "True"},
                ],
            },
        )


async def set_pod_status(client: Client, pod: dict[str, Any], status: dict[str, Any]) -> None:
    await client.patch_status(
        "v1", "Pod", pod["metadata"]["name"], {"status": status}, pod["metadata"]["namespace"]
    )


def now_rfc3339() -> str:
    """Now, as the apiserver writes times."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def finish_submitter(
    client: Client, namespace: str, name: str, *, failed: bool = False
) -> None:
    """What the Job controller would write when the submitter Job ends."""
    now = now_rfc3339()
    if failed:
        conditions = [
            {
                "type": "FailureTarget",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
                "lastTransitionTime": now,
            },
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
                "lastTransitionTime": now,
            },
        ]
        status: dict[str, Any] = {"startTime": now, "failed": 3, "conditions": conditions}
    else:
        conditions = [
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
            {"type": "Complete", "status": "True", "lastTransitionTime": now},
        ]
        status = {"startTime": now, "completionTime": now, "succeeded": 1, "conditions": conditions}
    await client.patch_status("batch/v1", "Job", name, {"status": status}, namespace)


async def events_about(client: Client, namespace: str, name: str) -> list[dict[str, Any]]:
    items, _ = await client.list_all("events.k8s.io/v1", "Event", namespace)
    return [e for e in items if (e.get("regarding") or {}).get("name") == name]


async def wait_events(
    client: Client, namespace: str, name: str, reasons: set[str], *, timeout: float = 60
) -> list[dict[str, Any]]:
    def has_all(events: list[dict[str, Any]]) -> bool:
        seen = {e.get("reason") for e in events}
        assert reasons <= seen, f"missing {sorted(reasons - seen)}; seen {sorted(map(str, seen))}"
        return True

    result: list[dict[str, Any]] = await wait_for(
        lambda: events_about(client, namespace, name),
        has_all,
        timeout=timeout,
        message=f"events {sorted(reasons)} about {name}",
    )
    return result
