"""What the RayCluster status looks like on the wire: fields KubeRay's Go types tag
``omitempty`` are absent at their zero value, and a cluster that becomes ready is
written once per change, not once plus a 409 retry."""

from __future__ import annotations

from typing import Any

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator
from tests.integration.raycluster.helpers import (
    all_running,
    get_cluster,
    pods_of,
    raycluster,
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
