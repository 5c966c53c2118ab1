"""Faults: apiserver restarts, cut watches and concurrent writers still converge exactly."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import get_cluster, pods_of, raycluster, wait_status

WORKER = {"ray.io/node-type": "worker"}


async def test_apiserver_restart_mid_scale_up(
    operator: Operator, kclient: Client, namespace: str, control_plane: Any
) -> None:
    if not hasattr(control_plane, "restart_apiserver"):
        pytest.skip("needs the local control plane")
    body = raycluster("restart", namespace, replicas=1)
    body["spec"]["workerGroupSpecs"][0]["maxReplicas"] = 20

    await kclient.create(body)

    async def one() -> bool:
        return len(await pods_of(kclient, namespace, "restart", **WORKER)) == 1

    await eventually(one, timeout=60)
    rc = await get_cluster(kclient, namespace, "restart")
    groups = rc["spec"]["workerGroupSpecs"]
    groups[0]["replicas"] = 15
    await kclient.patch(
        "ray.io/v1", "RayCluster", "restart", {"spec": {"workerGroupSpecs": groups}}, namespace
    )
    await asyncio.sleep(0.3)
    await asyncio.to_thread(control_plane.restart_apiserver)

    async def fifteen() -> bool:
        return len(await pods_of(kclient, namespace, "restart", **WORKER)) == 15

    await eventually(fifteen, timeout=90, interval=0.5, message="15 workers after restart")
    await asyncio.sleep(3.0)
    pods = await pods_of(kclient, namespace, "restart")
    assert len(pods) == 16  # exactly: no duplicates from a stale cache


async def test_cut_watches_do_not_duplicate_pods(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    body = raycluster("cut", namespace, replicas=1)
    await kclient.create(body)

    async def one() -> bool:
        return len(await pods_of(kclient, namespace, "cut", **WORKER)) == 1

    await eventually(one, timeout=60)
    rc = await get_cluster(kclient, namespace, "cut")
    groups = rc["spec"]["workerGroupSpecs"]
    groups[0]["replicas"] = 4
    await kclient.patch(
        "ray.io/v1", "RayCluster", "cut", {"spec": {"workerGroupSpecs": groups}}, namespace
    )
    for _ in range(5):
        kclient.close_watches()  # the operator shares this client: its informers re-watch
        await asyncio.sleep(0.3)

    async def four() -> bool:
        return len(await pods_of(kclient, namespace, "cut", **WORKER)) == 4

    await eventually(four, timeout=60)
    await asyncio.sleep(3.0)
    assert len(await pods_of(kclient, namespace, "cut", **WORKER)) == 4


async def test_concurrent_spec_writer_is_not_overwritten(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    """Users keep editing the spec while the operator writes status: no edit is lost."""
    await kclient.create(raycluster("writer", namespace, replicas=1))
    for i in range(10):
        await kclient.patch(
            "ray.io/v1",
            "RayCluster",
            "writer",
            {
                "metadata": {"labels": {"edit": str(i)}},
                "spec": {"headServiceAnnotations": {"n": str(i)}},
            },
            namespace,
        )
        await asyncio.sleep(0.1)

    async def two_pods() -> bool:
        return len(await pods_of(kclient, namespace, "writer")) == 2

    await eventually(two_pods, timeout=60)
    # The status is written after the pods are made: wait for it, then check no edit was lost.
    rc = await wait_status(
        kclient,
        namespace,
        "writer",
        lambda rc: (rc.get("status") or {}).get("desiredWorkerReplicas") == 1,
        message="desiredWorkerReplicas 1",
    )
    assert rc["metadata"]["labels"]["edit"] == "9"
    assert rc["spec"]["headServiceAnnotations"] == {"n": "9"}
