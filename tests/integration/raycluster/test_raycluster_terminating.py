"""Worker pods that stay Terminating (held by a finalizer) longer than the expectation
TTL never cost a healthy worker; a multi-host takeover never deletes pods an older
KubeRay made without replica names."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.kube import Client, Conflict, NotFound
from kuberay.reconcile import Request
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator, start_operator
from tests.integration.raycluster.helpers import RAY_IMAGE, get_cluster, raycluster

WORKER = "ray.io/node-type=worker"
HOLD = "test/hold"
TTL = 0.5  # expectation TTL of the operator under test


async def worker_pods(client: Client, ns: str, cluster: str) -> list[dict[str, Any]]:
    """Every worker pod of ``cluster``, terminating ones included."""
    items, _ = await client.list_all(
        "v1", "Pod", ns, label_selector=f"ray.io/cluster={cluster},{WORKER}"
    )
    return items


def names(pods: list[dict[str, Any]], *, terminating: bool) -> set[str]:
    return {
        p["metadata"]["name"]
        for p in pods
        if bool(p["metadata"].get("deletionTimestamp")) == terminating
    }


async def set_finalizers(client: Client, ns: str, name: str, finalizers: list[str] | None) -> None:
    with contextlib.suppress(NotFound):
        await client.patch("v1", "Pod", name, {"metadata": {"finalizers": finalizers}}, ns)


async def passes(op: Operator, ns: str, name: str, n: int = 4) -> None:
    """``n`` reconcile passes, each after the expectation TTL has run out. The operator's
    own worker may be writing the status at the same time: a Conflict is a lost race
    for that write (the worker retries), not a failure of the pass."""
    for _ in range(n):
        await asyncio.sleep(TTL * 2)
        with contextlib.suppress(ReconcileError, Conflict):
            await op.reconciler.reconcile(Request(ns, name))


async def set_group(client: Client, ns: str, name: str, **fields: Any) -> None:
    rc = await get_cluster(client, ns, name)
    groups = rc["spec"]["workerGroupSpecs"]
    groups[0].update(fields)
    await client.patch("ray.io/v1", "RayCluster", name, {"spec": {"workerGroupSpecs": groups}}, ns)


@pytest.fixture
async def short_ttl_operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[Operator]:
    async with start_operator(kclient, namespace, expectation_timeout=TTL) as op:
        try:
            yield op
        finally:
            items, _ = await kclient.list_all("v1", "Pod", namespace)
            for pod in items:
                if HOLD in (pod["metadata"].get("finalizers") or []):
                    await set_finalizers(kclient, namespace, pod["metadata"]["name"], None)


async def three_held_workers(client: Client, ns: str, name: str, **spec: Any) -> set[str]:
    """A cluster with 3 workers, each holding finalizer ``test/hold``."""
    await client.create(raycluster(name, ns, replicas=3, **spec))

    async def three() -> list[dict[str, Any]] | None:
        pods = await worker_pods(client, ns, name)
        return pods if len(names(pods, terminating=False)) == 3 else None

    pods = await eventually(three, timeout=60, message="3 workers")
    workers = names(pods, terminating=False)
    for pod in workers:
        await set_finalizers(client, ns, pod, [HOLD])
    return workers


async def assert_live_workers_stay(
    client: Client, op: Operator, ns: str, name: str, expected: set[str]
) -> None:
    for _ in range(4):
        await passes(op, ns, name, n=1)
        assert names(await worker_pods(client, ns, name), terminating=False) == expected


async def release_and_wait_gone(client: Client, ns: str, pod: str) -> None:
    await set_finalizers(client, ns, pod, None)

    async def gone() -> bool:
        try:
            await client.get("v1", "Pod", pod, ns)
        except NotFound:
            return True
        return False

    await eventually(gone, timeout=60, message=f"{pod} gone")


async def test_victim_stuck_terminating_past_ttl_keeps_healthy_workers(
    short_ttl_operator: Operator, kclient: Client, namespace: str
) -> None:
    op, ns = short_ttl_operator, namespace
    workers = await three_held_workers(kclient, ns, "stuck")
    await set_group(kclient, ns, "stuck", replicas=2)

    async def one_terminating() -> set[str] | None:
        pods = await worker_pods(kclient, ns, "stuck")
        doomed = names(pods, terminating=True)
        return doomed if len(doomed) == 1 else None

    victim = (await eventually(one_terminating, timeout=60, message="victim terminating")).pop()
    survivors = workers - {victim}
    await assert_live_workers_stay(kclient, op, ns, "stuck", survivors)
    await release_and_wait_gone(kclient, ns, victim)
    await assert_live_workers_stay(kclient, op, ns, "stuck", survivors)
    assert names(await worker_pods(kclient, ns, "stuck"), terminating=True) == set()


async def test_worker_deleted_by_someone_else_during_scale_down(
    short_ttl_operator: Operator, kclient: Client, namespace: str
) -> None:
    op, ns = short_ttl_operator, namespace
    workers = await three_held_workers(kclient, ns, "external")
    gone = sorted(workers)[0]
    await kclient.delete("v1", "Pod", gone, ns)  # held Terminating by its finalizer
    await set_group(kclient, ns, "external", replicas=2)
    survivors = workers - {gone}
    await assert_live_workers_stay(kclient, op, ns, "external", survivors)
    await release_and_wait_gone(kclient, ns, gone)
    await assert_live_workers_stay(kclient, op, ns, "external", survivors)


async def test_terminating_worker_named_in_workers_to_delete(
    short_ttl_operator: Operator, kclient: Client, namespace: str
) -> None:
    op, ns = short_ttl_operator, namespace
    workers = await three_held_workers(kclient, ns, "named")
    named = sorted(workers)[1]
    await kclient.delete("v1", "Pod", named, ns)  # held Terminating by its finalizer
    await set_group(kclient, ns, "named", replicas=2, scaleStrategy={"workersToDelete": [named]})
    survivors = workers - {named}
    await assert_live_workers_stay(kclient, op, ns, "named", survivors)
    await release_and_wait_gone(kclient, ns, named)
    await assert_live_workers_stay(kclient, op, ns, "named", survivors)


def legacy_worker(cluster: dict[str, Any], replica: int, host: int) -> dict[str, Any]:
    """A multi-host worker pod as a KubeRay from before replica names made it: no
    ``ray.io/worker-group-replica-name``, the replica index label holding a name."""
    name = cluster["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-tpu-worker-legacy-{replica}-{host}",
            "namespace": cluster["metadata"]["namespace"],
            "labels": {
                "ray.io/cluster": name,
                "ray.io/group": "small-group",
                "ray.io/node-type": "worker",
                "ray.io/identifier": f"{name}-worker",
                "ray.io/is-ray-node": "yes",
                "ray.io/worker-group-replica-index": f"small-group-legacy{replica}",
                "ray.io/replica-host-index": str(host),
                "app.kubernetes.io/created-by": "kuberay-operator",
                "app.kubernetes.io/name": "kuberay",
            },
            "ownerReferences": [
                {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayCluster",
                    "name": name,
                    "uid": cluster["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "ray-worker", "image": RAY_IMAGE}]},
    }


async def test_multi_host_takeover_keeps_pods_without_replica_name(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    ns = namespace
    body = raycluster("legacy", ns, replicas=1)
    body["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 2
    cluster = await kclient.create(body)
    legacy = set()
    for host in range(2):
        pod = await kclient.create(legacy_worker(cluster, 0, host))
        legacy.add(pod["metadata"]["name"])

    async with start_operator(kclient, ns, expectation_timeout=TTL) as op:
        await passes(op, ns, "legacy", n=2)
        before = await worker_pods(kclient, ns, "legacy")
        await passes(op, ns, "legacy", n=3)
        after = await worker_pods(kclient, ns, "legacy")
    assert names(after, terminating=True) == set()  # nothing deleted
    assert legacy <= names(after, terminating=False)
    # Stable: no pass after the first ones changes the group.
    assert names(after, terminating=False) == names(before, terminating=False)
