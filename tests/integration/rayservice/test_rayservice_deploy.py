"""First deployment, in-place Serve updates, endpoints and an unchanged world (RS-01..08)."""

from __future__ import annotations

import asyncio
from typing import Any

from kuberay.kube import Client
from tests.helpers import eventually, wait_quiet
from tests.integration.raycluster.helpers import wait_event_reasons
from tests.integration.rayservice.conftest import ServiceOperator
from tests.integration.rayservice.helpers import (
    active_name,
    add_ready_endpoint,
    cond,
    deploy,
    fake_dashboard,
    get_rs,
    head_pod,
    pending_name,
    puts,
    rayservice,
    run_apps,
    serve_head,
    wait_put,
    wait_rs,
)


async def test_first_deployment_reaches_ready(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        fake.proxy_healthy = False
        body = rayservice("svc", namespace)
        body["metadata"]["labels"] = {"team": "a"}
        body["metadata"]["annotations"] = {"foo": "bar"}
        await kclient.create(body)
        rs = await wait_rs(kclient, namespace, "svc", pending_name, message="pending named")
        assert "ray.io/rayservice-finalizer" in rs["metadata"]["finalizers"]
        ready = cond(rs, "Ready")
        assert ready is not None and (ready["status"], ready["reason"]) == ("False", "Initializing")
        assert ready["message"] == "RayService is initializing"
        cluster_name = pending_name(rs)
        assert cluster_name.startswith("svc-") and len(cluster_name) == len("svc-") + 5
        cluster = await eventually(
            lambda: kclient.get("ray.io/v1", "RayCluster", cluster_name, namespace),
            message="pending RayCluster created",
        )
        meta = cluster["metadata"]
        assert meta["labels"] == {
            "team": "a",
            "ray.io/originated-from-cr-name": "svc",
            "ray.io/originated-from-crd": "RayService",
        }
        assert meta["annotations"]["foo"] == "bar"
        assert meta["annotations"]["ray.io/num-worker-groups"] == "1"
        assert len(meta["annotations"]["ray.io/hash-without-replicas-and-workers-to-delete"]) == 32
        assert meta["ownerReferences"][0]["kind"] == "RayService"

        # Nothing is sent and no Service exists until the head is Ready.
        pod = await head_pod(kclient, namespace, cluster_name)
        assert fake.requests == []
        await serve_head(kclient, namespace, cluster_name, fake)
        await wait_put(fake)
        assert fake.serve_config is not None
        assert [a["name"] for a in fake.serve_config["applications"]] == ["app1"]
        rs = await get_rs(kclient, namespace, "svc")
        assert active_name(rs) == ""  # apps still DEPLOYING: no promotion
        run_apps(fake)
        rs = await wait_rs(
            kclient, namespace, "svc", lambda r: active_name(r) == cluster_name, message="promoted"
        )
        assert pending_name(rs) == ""
        upgrading = cond(rs, "UpgradeInProgress")
        assert upgrading is not None and upgrading["reason"] == "NoPendingCluster"
        apps = rs["status"]["activeServiceStatus"]["applicationStatuses"]
        assert apps["app1"]["status"] == "RUNNING"
        assert apps["app1"]["serveDeploymentStatuses"]["MangoStand"]["status"] == "HEALTHY"
        head_svc = await kclient.get("v1", "Service", "svc-head-svc", namespace)
        assert head_svc["metadata"]["labels"]["ray.io/identifier"] == "svc-head"
        serve_svc = await kclient.get("v1", "Service", "svc-serve-svc", namespace)
        assert serve_svc["spec"]["selector"] == {
            "ray.io/cluster": cluster_name,
            "ray.io/serve": "true",
        }
        assert [p["port"] for p in serve_svc["spec"]["ports"]] == [8000]
        await wait_event_reasons(
            kclient,
            namespace,
            "svc",
            {"CreatedRayCluster", "UpdatedServeApplications", "CreatedService"},
        )
        # The proxy is unhealthy: the head pod stays out of the serve Service.
        pod = await head_pod(kclient, namespace, cluster_name)
        assert pod["metadata"]["labels"]["ray.io/serve"] == "false"
        fake.proxy_healthy = True
        await eventually(
            lambda: _label(kclient, namespace, pod["metadata"]["name"]), message="serve label true"
        )
        await wait_event_reasons(kclient, namespace, "svc", {"UpdatedHeadPodServeLabel"})

        # Ready comes from serve endpoints, de-duplicated by pod UID.
        await add_ready_endpoint(kclient, namespace, "svc-serve-svc", "uid-1", "10.0.0.1")
        await add_ready_endpoint(
            kclient, namespace, "svc-serve-svc", "uid-1", "10.0.0.2", slice_name="second"
        )
        rs = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: r["status"].get("serviceStatus") == "Running",
            message="Ready",
        )
        assert rs["status"]["numServeEndpoints"] == 1
        ready = cond(rs, "Ready")
        assert ready is not None and ready["reason"] == "NonZeroServeEndpoints"
        assert ready["observedGeneration"] == rs["metadata"]["generation"]


async def _label(client: Client, namespace: str, pod: str) -> bool:
    found = await client.get("v1", "Pod", pod, namespace)
    return bool(found["metadata"]["labels"].get("ray.io/serve") == "true")


async def test_serve_config_change_is_applied_in_place_once(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        rs = await deploy(kclient, namespace, "svc", fake)
        cluster = active_name(rs)
        before = puts(fake)
        new_config = rs["spec"]["serveConfigV2"].replace("name: app1", "name: newapp")
        await kclient.patch(
            "ray.io/v1", "RayService", "svc", {"spec": {"serveConfigV2": new_config}}, namespace
        )
        await wait_put(fake, before + 1)
        run_apps(fake)
        rs = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: (
                "newapp"
                in ((r["status"].get("activeServiceStatus") or {}).get("applicationStatuses") or {})
            ),
            message="newapp reported",
        )
        assert active_name(rs) == cluster and pending_name(rs) == ""
        # Several passes later (one every 2 s) the config was sent exactly once.
        await asyncio.sleep(0)  # let the poller's refreshes run
        await wait_quiet(lambda: puts(fake), quiet=5.0)
        assert puts(fake) == before + 1

        # A head restarted without GCS FT reports no application: the config is re-sent.
        fake.applications.clear()
        await wait_put(fake, before + 2)


async def test_no_writes_on_an_unchanged_world(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        await deploy(kclient, namespace, "svc", fake)
        await add_ready_endpoint(kclient, namespace, "svc-serve-svc", "uid-1", "10.0.0.1")
        await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: r["status"].get("serviceStatus") == "Running",
            message="Ready",
        )
        stats = service_operator.client.stats
        settled = await wait_quiet(lambda: stats.writes, quiet=5.0, timeout=90)
        reconciler = service_operator.reconciler
        passes = 0
        original = reconciler.reconcile

        async def counting(request: Any) -> Any:
            nonlocal passes
            passes += 1
            return await original(request)

        reconciler.reconcile = counting
        # Each RayService is reconciled again every 2 s: wait for three passes.
        await eventually(lambda: passes >= 3, timeout=30, message="three more passes")
        assert stats.writes == settled
        assert puts(fake) == 1


async def test_a_hanging_dashboard_delays_only_its_own_rayservice(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as stuck, fake_dashboard() as fine:
        stuck.hang = True
        await kclient.create(rayservice("slow", namespace))
        rs = await wait_rs(kclient, namespace, "slow", pending_name)
        await serve_head(kclient, namespace, pending_name(rs), stuck)
        await eventually(lambda: stuck.requests, message="the stuck dashboard was asked")
        rs = await deploy(kclient, namespace, "fast", fine)
        assert active_name(rs)
        assert active_name(await get_rs(kclient, namespace, "slow")) == ""


async def test_exclude_head_pod_from_serve_service_forces_the_label_false(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        rs = await deploy(kclient, namespace, "svc", fake, excludeHeadPodFromServeSvc=True)
        pod = await head_pod(kclient, namespace, active_name(rs))
        assert pod["metadata"]["labels"]["ray.io/serve"] == "false"
        assert not fake.requests_to("/-/healthz")  # the proxy is not even asked
