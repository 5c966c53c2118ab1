"""What happens to a finished RayJob's cluster and to the RayJob itself: legacy
onSuccess/onFailure, deletionRules (one action per pass, staged TTLs),
shutdownAfterJobFinishes with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES (RJ-07, RJ-08, RJ-31..34)."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client import CollectorRegistry

from kuberay.kube import Client, NotFound
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import Operator, start_operator
from tests.integration.rayjob.helpers import (
    get_job,
    make_ready,
    rayjob,
    state,
    wait_events,
    wait_gone,
    wait_state,
)


async def _finish(
    client: Client, namespace: str, name: str, dashboard: FakeDashboard, outcome: str
) -> str:
    """Run an HTTPMode RayJob to the end with ``outcome``; its cluster name."""
    job = await wait_state(client, namespace, name, "Initializing")
    cluster, job_id = job["status"]["rayClusterName"], job["status"]["jobId"]
    await make_ready(client, namespace, cluster, dashboard)
    await wait_state(client, namespace, name, "Running")
    await eventually(lambda: job_id in dashboard.jobs, timeout=30, message="submitted")
    dashboard.set_job_status(job_id, outcome)
    want = "Complete" if outcome == "SUCCEEDED" else "Failed"

    async def ended() -> bool:
        try:
            return state(await get_job(client, namespace, name)) == want
        except NotFound:  # a DeleteSelf policy may be quicker than this poll
            return True

    await eventually(ended, timeout=60, message=f"{name}: {want}")
    return str(cluster)


def http_job(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return rayjob(name, namespace, workers=1, submissionMode="HTTPMode", **spec)


def rules(*items: tuple[str, int]) -> dict[str, Any]:
    return {
        "deletionRules": [
            {"policy": policy, "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": ttl}}
            for policy, ttl in items
        ]
    }


async def _workers(client: Client, namespace: str, cluster: str) -> list[dict[str, Any]]:
    items, _ = await client.list_all(
        "v1", "Pod", namespace, label_selector=f"ray.io/cluster={cluster},ray.io/node-type=worker"
    )
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def test_legacy_delete_workers_on_success(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    strategy = {"onSuccess": {"policy": "DeleteWorkers"}, "onFailure": {"policy": "DeleteCluster"}}
    await kclient.create(http_job("dw", namespace, deletionStrategy=strategy))
    cluster = await _finish(kclient, namespace, "dw", dashboard, "SUCCEEDED")
    await wait_events(kclient, namespace, "dw", {"UpdatedRayCluster"})
    rc = await kclient.get("ray.io/v1", "RayCluster", cluster, namespace)
    assert all(g.get("suspend") is True for g in rc["spec"]["workerGroupSpecs"])

    async def no_workers() -> bool:
        return not await _workers(kclient, namespace, cluster)

    await eventually(no_workers, timeout=60, message="workers deleted")
    await get_job(kclient, namespace, "dw")  # the RayJob stays


async def test_legacy_delete_cluster_on_failure(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    strategy = {"onSuccess": {"policy": "DeleteNone"}, "onFailure": {"policy": "DeleteCluster"}}
    await kclient.create(http_job("dc", namespace, deletionStrategy=strategy))
    cluster = await _finish(kclient, namespace, "dc", dashboard, "FAILED")
    await wait_gone(kclient, "ray.io/v1", "RayCluster", namespace, cluster)
    await get_job(kclient, namespace, "dc")


async def test_legacy_delete_none_keeps_everything(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    strategy = {"onSuccess": {"policy": "DeleteNone"}, "onFailure": {"policy": "DeleteNone"}}
    await kclient.create(http_job("dn", namespace, deletionStrategy=strategy))
    cluster = await _finish(kclient, namespace, "dn", dashboard, "SUCCEEDED")
    await asyncio.sleep(3)
    rc = await kclient.get("ray.io/v1", "RayCluster", cluster, namespace)
    assert not any(g.get("suspend") for g in rc["spec"]["workerGroupSpecs"])


async def test_most_destructive_rule_wins(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    strategy = rules(("DeleteWorkers", 0), ("DeleteCluster", 0), ("DeleteSelf", 0))
    await kclient.create(http_job("all", namespace, deletionStrategy=strategy))
    await _finish(kclient, namespace, "all", dashboard, "SUCCEEDED")
    await wait_gone(kclient, "ray.io/v1", "RayJob", namespace, "all")
    events = await wait_events(kclient, namespace, "all", {"CreatedRayCluster"})
    assert not {"UpdatedRayCluster", "DeletedRayCluster"} & {e["reason"] for e in events}


async def test_staged_rules(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    strategy = rules(("DeleteWorkers", 0), ("DeleteCluster", 4), ("DeleteSelf", 8))
    await kclient.create(http_job("staged", namespace, deletionStrategy=strategy))
    cluster = await _finish(kclient, namespace, "staged", dashboard, "SUCCEEDED")

    async def no_workers() -> bool:
        return not await _workers(kclient, namespace, cluster)

    await eventually(no_workers, timeout=30, message="workers deleted first")
    await kclient.get("ray.io/v1", "RayCluster", cluster, namespace)
    await wait_gone(kclient, "ray.io/v1", "RayCluster", namespace, cluster, timeout=30)
    await get_job(kclient, namespace, "staged")  # DeleteSelf not due yet
    await wait_gone(kclient, "ray.io/v1", "RayJob", namespace, "staged", timeout=30)


async def test_rule_for_another_outcome_does_nothing(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(http_job("other", namespace, deletionStrategy=rules(("DeleteCluster", 0))))
    cluster = await _finish(kclient, namespace, "other", dashboard, "FAILED")
    await asyncio.sleep(3)
    await kclient.get("ray.io/v1", "RayCluster", cluster, namespace)


async def test_shutdown_ttl_then_delete_the_rayjob(
    crds_installed: None, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    registry = CollectorRegistry()
    env = {"DELETE_RAYJOB_CR_AFTER_JOB_FINISHES": "true"}
    async with start_operator(kclient, namespace, env=env, registry=registry, enable_metrics=True):
        await kclient.create(
            http_job("ttl", namespace, shutdownAfterJobFinishes=True, ttlSecondsAfterFinished=3)
        )
        job = await wait_state(kclient, namespace, "ttl", "Initializing")
        uid = job["metadata"]["uid"]
        await _finish(kclient, namespace, "ttl", dashboard, "SUCCEEDED")
        await get_job(kclient, namespace, "ttl")  # kept for the TTL
        labels = {
            "name": "ttl",
            "namespace": namespace,
            "uid": uid,
            "job_deployment_status": "Complete",
            "retry_count": "0",
        }
        duration = registry.get_sample_value("kuberay_job_execution_duration_seconds", labels)
        assert duration is not None and duration >= 0
        assert (
            registry.get_sample_value(
                "kuberay_job_deployment_status",
                {
                    "name": "ttl",
                    "namespace": namespace,
                    "uid": uid,
                    "deployment_status": "Complete",
                },
            )
            == 1.0
        )
        await wait_gone(kclient, "ray.io/v1", "RayJob", namespace, "ttl", timeout=30)
        await eventually(
            lambda: (
                registry.get_sample_value("kuberay_job_execution_duration_seconds", labels) is None
            ),
            timeout=30,
            message="series of the deleted RayJob removed",
        )
