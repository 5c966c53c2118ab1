"""RayCluster status writes: no write loop with the conditions gate off, and
``RayClusterProvisioned`` True only once every pod the cluster wants is in the cache and
running: not while the cache has not shown a worker just created, nor while a
ResourceQuota keeps a worker from being created."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client import REGISTRY

from kuberay.controllers.raycluster.setup import CONTROLLER_NAME
from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator
from tests.integration.raycluster.helpers import (
    all_running,
    condition,
    get_cluster,
    pods_of,
    raycluster,
    set_running,
)


def reconciles() -> float:
    """Finished reconciles of the RayCluster controller in this process (any result)."""
    return sum(
        REGISTRY.get_sample_value(
            "controller_runtime_reconcile_total", {"controller": CONTROLLER_NAME, "result": r}
        )
        or 0.0
        for r in ("success", "error", "requeue", "requeue_after")
    )


async def test_gate_off_makes_no_status_writes_on_an_unchanged_cluster(
    crds_installed: None, kclient: Client, kubeconfig_path: object, namespace: str
) -> None:
    # Created under the default gate: the cluster carries conditions.
    async with start_operator(kclient, namespace):
        await kclient.create(raycluster("quiet", namespace, replicas=1))

        async def two_pods() -> bool:
            return len(await pods_of(kclient, namespace, "quiet")) == 2

        await eventually(two_pods, timeout=60)
        await all_running(kclient, namespace, "quiet")

        async def provisioned() -> bool:
            rc = await get_cluster(kclient, namespace, "quiet")
            c = condition(rc, "RayClusterProvisioned")
            return (
                rc.get("status", {}).get("state") == "ready" and bool(c) and (c["status"] == "True")
            )

        await eventually(provisioned, timeout=60)
    conditions = (await get_cluster(kclient, namespace, "quiet"))["status"]["conditions"]

    # The operator restarts with RayClusterStatusConditions=false.
    op_client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)  # type: ignore[arg-type]
    try:
        started = reconciles()
        async with start_operator(op_client, namespace, gates="RayClusterStatusConditions=false"):
            # initial sync and the first pass (on a busy machine that can take a while)
            await eventually(lambda: reconciles() > started, timeout=60, message="first pass")
            await asyncio.sleep(2.5)
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


class LaggingCache:
    """The operator's cache with its worker pods held back while ``hide`` is set: what a
    pass sees in the moment after it created a worker, before the watch event arrives."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.hide = True

    def _hidden(self, kind: str, obj: dict[str, Any] | None) -> bool:
        labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
        return self.hide and kind == "Pod" and labels.get("ray.io/node-type") == "worker"

    def list(self, api_version: str, kind: str, *args: Any, **kw: Any) -> list[dict[str, Any]]:
        found = self.inner.list(api_version, kind, *args, **kw)
        return [o for o in found if not self._hidden(kind, o)]

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Any:
        obj = self.inner.get(api_version, kind, namespace, name)
        return None if self._hidden(kind, obj) else obj

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_not_provisioned_while_the_cache_lacks_the_worker_it_just_created(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    # The created worker's expectation outlives the test: the hidden worker is not
    # created again.
    async with start_operator(kclient, namespace, expectation_timeout=600) as op:
        lagging = LaggingCache(op.reconciler.ctx.cache)
        op.reconciler.ctx.cache = lagging
        await kclient.create(raycluster("lag", namespace, replicas=1))

        async def two_pods() -> list[dict[str, Any]]:
            pods = await pods_of(kclient, namespace, "lag")
            assert len(pods) == 2, pods
            return pods

        pods = await eventually(two_pods, timeout=60, message="head and worker created")
        (head,) = [p for p in pods if p["metadata"]["labels"]["ray.io/node-type"] == "head"]
        await set_running(kclient, head)

        async def head_seen_ready() -> dict[str, Any]:
            rc = await get_cluster(kclient, namespace, "lag")
            c = condition(rc, "HeadPodReady")
            assert c and c["status"] == "True", c
            return rc

        # A pass saw the head Running and Ready, and no worker.
        rc = await eventually(head_seen_ready, timeout=60, message="HeadPodReady=True")
        provisioned = condition(rc, "RayClusterProvisioned")
        assert provisioned is not None
        assert (provisioned["status"], provisioned["reason"]) == (
            "False",
            "RayClusterPodsProvisioning",
        )
        assert len(await pods_of(kclient, namespace, "lag")) == 2  # none created twice

        # The worker reaches the cache and runs: now it is provisioned.
        lagging.hide = False
        await all_running(kclient, namespace, "lag")

        async def now_provisioned() -> bool:
            c = condition(await get_cluster(kclient, namespace, "lag"), "RayClusterProvisioned")
            return bool(c) and c["status"] == "True"

        await eventually(now_provisioned, timeout=60, message="RayClusterProvisioned=True")


async def test_not_provisioned_while_a_quota_blocks_a_worker(
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

        await eventually(head_and_one_worker, timeout=60)
        await all_running(kclient, namespace, "quota")

        async def seen_running_and_refused() -> dict[str, Any]:
            rc = await get_cluster(kclient, namespace, "quota")
            assert rc["status"].get("availableWorkerReplicas") == 1, rc["status"]
            head = condition(rc, "HeadPodReady")
            assert head and head["status"] == "True", head
            failure = condition(rc, "ReplicaFailure")
            assert failure and failure["reason"] == "FailedCreateWorkerPod", failure
            return rc

        # A pass saw both pods Running and the third pod refused: still provisioning.
        rc = await eventually(seen_running_and_refused, timeout=60, message="pods seen")
        assert condition(rc, "RayClusterProvisioned")["status"] == "False"  # type: ignore[index]
        assert rc["status"].get("state") != "ready"

        # The quota is raised: the missing workers are created, run, and only then is
        # the cluster provisioned.
        raised = {"spec": {"hard": {"pods": "10"}}}
        await kclient.patch("v1", "ResourceQuota", "two-pods", raised, namespace)
        await kclient.patch_status(
            "v1", "ResourceQuota", "two-pods", {"status": {"hard": {"pods": "10"}}}, namespace
        )

        async def four_pods() -> bool:
            return len(await pods_of(kclient, namespace, "quota")) == 4

        await eventually(four_pods, timeout=120, message="all three workers")
        await all_running(kclient, namespace, "quota")

        async def provisioned() -> bool:
            c = condition(await get_cluster(kclient, namespace, "quota"), "RayClusterProvisioned")
            return bool(c) and c["status"] == "True"

        await eventually(provisioned, timeout=60, message="RayClusterProvisioned=True")
