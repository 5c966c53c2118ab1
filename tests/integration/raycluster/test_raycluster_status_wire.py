"""What the RayCluster status looks like on the wire: fields KubeRay's Go types tag
``omitempty`` are absent at their zero value, and a cluster that becomes ready is
written once per change, not once plus a 409 retry."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator
from tests.integration.raycluster.helpers import (
    all_running,
    get_cluster,
    pods_of,
    raycluster,
    set_running,
)


async def test_status_leaves_out_zero_values_like_kuberay(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace):
        await kclient.create(raycluster("zeros", namespace, replicas=2))

        async def pending_status() -> dict[str, Any]:
            status: dict[str, Any] = (await get_cluster(kclient, namespace, "zeros")).get(
                "status"
            ) or {}
            return status if status.get("desiredWorkerReplicas") == 2 else {}

        status = await eventually(pending_status, timeout=20, message="a first status")
        # Pods exist but none runs: no state, no reason, no ready/available/min counts.
        for absent in (
            "state",
            "reason",
            "readyWorkerReplicas",
            "availableWorkerReplicas",
            "minWorkerReplicas",
        ):
            assert absent not in status, (absent, status)
        assert status["maxWorkerReplicas"] == 4
        assert status["head"]["serviceName"] == "zeros-head-svc"
        assert status["desiredGPU"] == "0"  # a Quantity is always written

        async def two_workers_and_head() -> bool:
            return len(await pods_of(kclient, namespace, "zeros")) == 3

        await eventually(two_workers_and_head, timeout=20)
        await all_running(kclient, namespace, "zeros")

        async def ready_status() -> dict[str, Any]:
            status: dict[str, Any] = (await get_cluster(kclient, namespace, "zeros")).get(
                "status"
            ) or {}
            return status if status.get("state") == "ready" else {}

        status = await eventually(ready_status, timeout=20, message="state ready")
        assert status["readyWorkerReplicas"] == status["availableWorkerReplicas"] == 2
        assert "reason" not in status  # KubeRay clears it to "" and omits it


async def test_a_lagging_cache_causes_no_status_conflicts(
    crds_installed: None, kubeconfig_path: Path, namespace: str
) -> None:
    """RayCluster watch events arrive 0.1 s late (a loaded apiserver): passes that pod
    events start right after a status write still write no status on a stale version."""
    op_client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    real_watch = op_client.watch

    async def lagging_watch(api_version: str, kind: str, *a: Any, **kw: Any) -> Any:
        async for event in real_watch(api_version, kind, *a, **kw):
            if kind == "RayCluster":
                await asyncio.sleep(0.1)
            yield event

    op_client.watch = lagging_watch  # type: ignore[method-assign]
    names = [f"lag{i}" for i in range(4)]
    try:
        async with start_operator(op_client, namespace):
            for name in names:
                await kclient_create(kubeconfig_path, raycluster(name, namespace, replicas=2))

            async def all_ready() -> bool:
                for name in names:
                    pods = await pods_of(op_client, namespace, name)
                    for i, pod in enumerate(pods):
                        if (pod.get("status") or {}).get("phase") != "Running":
                            await set_running(op_client, pod, ip=f"10.7.{len(name)}.{i + 1}")
                    status = (await get_cluster(op_client, namespace, name)).get("status") or {}
                    if status.get("state") != "ready":
                        return False
                return True

            await eventually(all_ready, timeout=60, interval=0.3, message="all ready")
            conflicts = {k: n for k, n in op_client.stats.by_code.items() if k[1] == 409}
            assert conflicts == {}, conflicts
    finally:
        await op_client.close()


async def kclient_create(kubeconfig_path: Path, obj: dict[str, Any]) -> None:
    """Create as another client: the operator's request counts stay its own."""
    async with await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1) as admin:
        await admin.create(obj)
