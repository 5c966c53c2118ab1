"""Initializing timeout, suspend/resume, deletion and managedBy (RS-18..22)."""

from __future__ import annotations

from kuberay.kube import Client, NotFound
from tests.helpers import eventually
from tests.integration.raycluster.helpers import wait_event_reasons
from tests.integration.rayservice.conftest import ServiceOperator
from tests.integration.rayservice.helpers import (
    active_name,
    cluster_exists,
    cond,
    deploy,
    fake_dashboard,
    pending_name,
    rayservice,
    wait_rs,
)


async def test_initializing_timeout_is_terminal_and_removes_the_cluster(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    body = rayservice("svc", namespace, rayClusterDeletionDelaySeconds=0)
    body["metadata"]["annotations"] = {"ray.io/initializing-timeout": "2s"}
    await kclient.create(body)
    rs = await wait_rs(kclient, namespace, "svc", pending_name, message="pending named")
    cluster = pending_name(rs)
    rs = await wait_rs(
        kclient,
        namespace,
        "svc",
        lambda r: (cond(r, "Ready") or {}).get("reason") == "InitializingTimeout",
        message="initializing timeout",
    )
    ready = cond(rs, "Ready")
    assert ready is not None and ready["message"].startswith(
        "RayService failed to become ready within the configured timeout of 2s."
    )
    assert pending_name(rs) == "" and active_name(rs) == ""
    await wait_event_reasons(kclient, namespace, "svc", {"RayServiceInitializingTimeout"})

    async def gone() -> bool:
        return not await cluster_exists(kclient, namespace, cluster)

    await eventually(gone, message="cluster deleted")
    clusters, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
    assert clusters == []


async def test_suspend_deletes_everything_and_resume_starts_again(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        rs = await deploy(kclient, namespace, "svc", fake)
        cluster = active_name(rs)
        await kclient.patch(
            "ray.io/v1", "RayService", "svc", {"spec": {"suspend": True}}, namespace
        )
        rs = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: (cond(r, "Suspended") or {}).get("status") == "True",
            message="suspended",
        )
        assert cond(rs, "Suspended")["reason"] == "SuspendComplete"  # type: ignore[index]
        ready = cond(rs, "Ready")
        assert ready is not None and (ready["reason"], ready["message"]) == (
            "SuspendComplete",
            "RayService is suspended.",
        )
        assert (cond(rs, "Suspending") or {}).get("status") == "False"
        assert active_name(rs) == "" and rs["status"].get("numServeEndpoints", 0) == 0
        assert not await cluster_exists(kclient, namespace, cluster)
        for svc in ("svc-head-svc", "svc-serve-svc"):

            async def svc_gone(name: str = svc) -> bool:
                try:
                    found = await kclient.get("v1", "Service", name, namespace)
                except NotFound:
                    return True
                return bool(found["metadata"].get("deletionTimestamp"))

            await eventually(svc_gone, message=f"{svc} deleted")
        await wait_event_reasons(kclient, namespace, "svc", {"DeletedRayCluster", "DeletedService"})

        await kclient.patch(
            "ray.io/v1", "RayService", "svc", {"spec": {"suspend": False}}, namespace
        )
        rs = await wait_rs(kclient, namespace, "svc", pending_name, message="resumed")
        suspended = cond(rs, "Suspended")
        assert suspended is not None and (suspended["status"], suspended["reason"]) == (
            "False",
            "RayServiceResumed",
        )
        assert pending_name(rs) != cluster
        assert (cond(rs, "Ready") or {}).get("reason") == "Initializing"


async def test_deleting_a_rayservice_deletes_its_clusters_then_the_finalizer(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        rs = await deploy(kclient, namespace, "svc", fake)
        cluster = active_name(rs)
        await kclient.delete("ray.io/v1", "RayService", "svc", namespace)

        async def all_gone() -> bool:
            if await cluster_exists(kclient, namespace, cluster):
                return False
            try:
                await kclient.get("ray.io/v1", "RayService", "svc", namespace)
            except NotFound:
                return True
            return False

        await eventually(all_gone, message="cluster and RayService gone")
        await wait_event_reasons(kclient, namespace, "svc", {"DeletedRayCluster"})


async def test_managed_by_another_controller_is_left_alone(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    await kclient.create(rayservice("other", namespace, managedBy="kueue.x-k8s.io/multikueue"))
    await kclient.create(rayservice("mine", namespace))
    await wait_rs(kclient, namespace, "mine", pending_name, message="ours reconciled")
    other = await kclient.get("ray.io/v1", "RayService", "other", namespace)
    assert not other["metadata"].get("finalizers")
    assert not other.get("status")
