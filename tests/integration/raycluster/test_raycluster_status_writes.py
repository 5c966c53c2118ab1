"""RayCluster status writes: no write loop with the conditions gate off, and
``RayClusterProvisioned`` judged on the pods that exist (a ResourceQuota that keeps
some workers from being created must not keep a cluster unprovisioned forever)."""

from __future__ import annotations

import asyncio

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator
from tests.integration.raycluster.helpers import (
    all_running,
    condition,
    get_cluster,
    pods_of,
    raycluster,
)


async def test_gate_off_makes_no_status_writes_on_an_unchanged_cluster(
    crds_installed: None, kclient: Client, kubeconfig_path: object, namespace: str
) -> None:
    # Created under the default gate: the cluster carries conditions.
    async with start_operator(kclient, namespace):
        await kclient.create(raycluster("quiet", namespace, replicas=1))

        async def two_pods() -> bool:
            return len(await pods_of(kclient, namespace, "quiet")) == 2

        await eventually(two_pods, timeout=20)
        await all_running(kclient, namespace, "quiet")

        async def provisioned() -> bool:
            rc = await get_cluster(kclient, namespace, "quiet")
            c = condition(rc, "RayClusterProvisioned")
            return (
                rc.get("status", {}).get("state") == "ready" and bool(c) and (c["status"] == "True")
            )

        await eventually(provisioned, timeout=20)
    conditions = (await get_cluster(kclient, namespace, "quiet"))["status"]["conditions"]

    # The operator restarts with RayClusterStatusConditions=false.
    op_client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)  # type: ignore[arg-type]
    try:
        async with start_operator(op_client, namespace, gates="RayClusterStatusConditions=false"):
            await asyncio.sleep(2.5)  # initial sync and the first pass
            rv = (await get_cluster(kclient, namespace, "quiet"))["metadata"]["resourceVersion"]
            writes = op_client.stats.writes
            # Old behaviour: a status write every 2 s, forever.
            await asyncio.sleep(7.0)
            rc = await get_cluster(kclient, namespace, "quiet")
            assert rc["metadata"]["resourceVersion"] == rv
            assert op_client.stats.writes == writes
            assert rc["status"]["conditions"] == conditions  # left exactly as they were
    finally:
        await op_client.close()


async def test_provisioned_when_a_quota_blocks_some_workers(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "two-pods", "namespace": namespace},
        "spec": {"hard": {"pods": "2"}},
    }
    await kclient.create(quota)
    # No kube-controller-manager here: seed the status the quota controller would write,
    # so the admission plugin enforces the limit.
    await kclient.patch_status(
        "v1",
        "ResourceQuota",
        "two-pods",
        {"status": {"hard": {"pods": "2"}, "used": {"pods": "0"}}},
        namespace,
    )
    async with start_operator(kclient, namespace):
        await kclient.create(raycluster("quota", namespace, replicas=3))

        async def head_and_one_worker() -> bool:
            return len(await pods_of(kclient, namespace, "quota")) == 2

        await eventually(head_and_one_worker, timeout=20)
        await all_running(kclient, namespace, "quota")

        async def provisioned() -> bool:
            c = condition(await get_cluster(kclient, namespace, "quota"), "RayClusterProvisioned")
            return bool(c) and c["status"] == "True"

        await eventually(provisioned, timeout=20, message="RayClusterProvisioned=True")
        rc = await get_cluster(kclient, namespace, "quota")
        assert condition(rc, "RayClusterProvisioned")["reason"] == (  # type: ignore[index]
            "AllPodRunningAndReadyFirstTime"
        )
        # Not every desired worker exists: the cluster is provisioned but not "ready".
        assert rc["status"].get("state") != "ready"
        assert len(await pods_of(kclient, namespace, "quota")) == 2
