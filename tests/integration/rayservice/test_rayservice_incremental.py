"""``NewClusterWithIncrementalUpgrade`` end to end on the real apiserver (RS-24 and the
incremental part of issue 11): the test plays the gateway controller (Gateway ``Programmed``,
HTTPRoute ``Accepted``) and the fake dashboards play Serve. Covered: a full upgrade to
promotion with the HTTPRoute weights and the ``target_capacity`` sequence observed, then no
writes on quiet passes; a rollback half-way; a Gateway that is never Programmed (named in the
condition, no promotion, abandoned at ``ray.io/upgrade-timeout``); missing Gateway API CRDs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.controllers.rayservice.gateway_builder import GATEWAY_API_VERSION
from kuberay.kube import Client, NotFound
from tests.helpers import eventually, wait_quiet
from tests.integration.raycluster.helpers import events_for, wait_event_reasons
from tests.integration.rayservice.conftest import ServiceOperator, start_service_operator
from tests.integration.rayservice.helpers import (
    active_name,
    add_ready_endpoint,
    cluster_exists,
    cond,
    fake_dashboard,
    get_rs,
    pending_name,
    run_apps,
    serve_head,
    wait_put,
    wait_rs,
)
from tests.integration.rayservice.incremental_helpers import (
    GW,
    FakeRouteController,
    capacities,
    deploy_incremental,
    incremental_rayservice,
    record_route_writes,
    set_gateway,
    weights_of,
)
from tests.integration.rayservice.test_rayservice_upgrade import count_passes, with_image


@pytest.fixture
async def routes(kclient: Client, namespace: str) -> AsyncIterator[FakeRouteController]:
    """The gateway controller's HTTPRoute part for RayService ``svc``."""
    controller = FakeRouteController(kclient, namespace, "svc-httproute", "svc-gateway")
    yield controller
    await controller.stop()


async def _start_upgrade(kclient: Client, namespace: str, rs: dict[str, Any]) -> str:
    await kclient.patch(
        "ray.io/v1",
        "RayService",
        "svc",
        {"spec": {"rayClusterConfig": with_image(rs, "rayproject/ray:2.47.0")}},
        namespace,
    )
    upgrading = await wait_rs(kclient, namespace, "svc", pending_name, message="new pending")
    assert upgrading["status"]["pendingServiceStatus"]["targetCapacity"] == 0
    return pending_name(upgrading)


async def test_incremental_upgrade_steps_traffic_and_capacity_to_promotion(
    service_operator: ServiceOperator,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    written = record_route_writes(service_operator)
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        rs = await deploy_incremental(
            kclient, namespace, "svc", old_fake, routes, rayClusterDeletionDelaySeconds=1
        )
        old = active_name(rs)
        gw = await kclient.get(GW, "Gateway", "svc-gateway", namespace)
        assert gw["spec"]["gatewayClassName"] == "test-class"
        await wait_event_reasons(kclient, namespace, "svc", {"CreatedGateway", "CreatedHTTPRoute"})
        assert rs["status"]["activeServiceStatus"]["targetCapacity"] == 100
        assert rs["status"]["activeServiceStatus"]["lastTrafficMigratedTime"]
        # The first cluster got its config with target_capacity 100.
        assert capacities(old_fake) == [100]

        new = await _start_upgrade(kclient, namespace, rs)
        await serve_head(kclient, namespace, new, new_fake)
        await wait_put(new_fake)
        route = await kclient.get(GW, "HTTPRoute", "svc-httproute", namespace)
        assert [b["name"] for b in route["spec"]["rules"][0]["backendRefs"]] == [
            f"{old}-serve-svc",
            f"{new}-serve-svc",
        ]
        run_apps(new_fake)

        done = await wait_rs(kclient, namespace, "svc", lambda r: active_name(r) == new, timeout=90)
        assert pending_name(done) == ""
        active = done["status"]["activeServiceStatus"]
        assert (active["trafficRoutedPercent"], active["targetCapacity"]) == (100, 100)
        # Capacity first, then traffic, maxSurgePercent / stepSizePercent (50) at a time.
        assert capacities(new_fake) == [0, 50, 100]
        assert capacities(old_fake) == [100, 50, 0]
        await eventually(
            lambda: written[-1] == (100,), timeout=30, message="route back to one backend"
        )
        assert written == [(100,), (100, 0), (50, 50), (0, 100), (100,)]
        await wait_event_reasons(kclient, namespace, "svc", {"DeletedRayCluster"})
        assert not await cluster_exists(kclient, namespace, old)

        # A quiet world: the next passes write nothing (Gateway, HTTPRoute, status included).
        await add_ready_endpoint(kclient, namespace, f"{new}-serve-svc", "uid-1", "10.0.0.1")
        await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: r["status"].get("serviceStatus") == "Running",
            message="Running",
        )
        stats = service_operator.client.stats
        settled = await wait_quiet(lambda: stats.writes, quiet=5.0, timeout=90)
        new_puts = len(new_fake.serve_config_history)
        await count_passes(service_operator, 3)
        assert stats.writes == settled
        assert len(new_fake.serve_config_history) == new_puts


async def test_traffic_moves_to_the_pending_cluster_only_once_its_replicas_are_up(
    service_operator: ServiceOperator,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    """Beyond KubeRay: the capacity sent to the pending cluster must have reached Serve and
    its deployments be up (none UPSCALING/UPDATING) before traffic moves there; a request
    routed to replicas still starting waits in the proxy (lost requests, issue 26)."""
    written = record_route_writes(service_operator)
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        rs = await deploy_incremental(kclient, namespace, "svc", old_fake, routes)
        new = await _start_upgrade(kclient, namespace, rs)
        await serve_head(kclient, namespace, new, new_fake)
        await wait_put(new_fake)
        starting = {
            app: {dep: "UPSCALING" for dep in new_fake.applications[app]["deployments"]}
            for app in new_fake.applications
        }
        assert any(starting.values())  # the sample's applications have deployments
        for app, deployments in starting.items():
            new_fake.set_app_status(app, "RUNNING", deployments=deployments)
        await eventually(
            lambda: capacities(new_fake)[-1] == 50, timeout=30, message="capacity 50 sent"
        )
        await count_passes(service_operator, 4)  # intervalSeconds is 1
        await asyncio.sleep(2)
        assert written[-1] == (100, 0)  # no traffic to replicas still starting
        waiting = cond(await get_rs(kclient, namespace, "svc"), "UpgradeInProgress")
        assert (
            waiting is not None
            and "traffic cannot move: waiting for the Serve replicas" in (waiting["message"])
        )
        assert "UPSCALING" in waiting["message"] and "target_capacity 50" in waiting["message"]
        run_apps(new_fake)  # the replicas are up
        await eventually(lambda: (50, 50) in written, timeout=30, message="traffic 50/50")
        done = await wait_rs(kclient, namespace, "svc", lambda r: active_name(r) == new, timeout=90)
        assert active_name(done) == new


async def test_replicas_that_never_come_up_hold_traffic_only_for_a_bound(
    crds_installed: None,
    kubeconfig_path: Path,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    """Issue 44, item 4: the wait above is bounded. Serve on the new cluster stays UPSCALING
    (its replicas wait for nodes the old cluster holds); after max(3 x intervalSeconds, the
    floor) the step is taken as KubeRay takes it, with a Warning naming the deployments.
    The floor (30 s in the operator) is 0 here, so the bound is 3 x 1 s."""
    async with (
        start_service_operator(kubeconfig_path, namespace, settle_hold_floor_seconds=0.0) as op,
        fake_dashboard() as old_fake,
        fake_dashboard() as new_fake,
    ):
        written = record_route_writes(op)
        rs = await deploy_incremental(kclient, namespace, "svc", old_fake, routes)
        new = await _start_upgrade(kclient, namespace, rs)
        await serve_head(kclient, namespace, new, new_fake)
        await wait_put(new_fake)
        stuck = sorted(
            f"{app}/{dep} UPSCALING"
            for app in new_fake.applications
            for dep in new_fake.applications[app]["deployments"]
        )
        for app in new_fake.applications:
            deps = {dep: "UPSCALING" for dep in new_fake.applications[app]["deployments"]}
            new_fake.set_app_status(app, "RUNNING", deployments=deps)
        await eventually(
            lambda: capacities(new_fake)[-1] == 50, timeout=30, message="capacity 50 sent"
        )
        held_from = time.monotonic()
        await eventually(lambda: (50, 50) in written, timeout=30, message="traffic 50/50")
        assert time.monotonic() - held_from >= 2.0  # held (3 s from when the step was due)
        events = await wait_event_reasons(
            kclient, namespace, "svc", {"TrafficMovedBeforeServeSettled"}
        )
        (warning,) = [e for e in events if e["reason"] == "TrafficMovedBeforeServeSettled"]
        assert warning["type"] == "Warning"
        assert warning["message"] == (
            f"Moved traffic to RayCluster {new} (weights 50/50) although its Serve had not "
            f"settled within 3s: {', '.join(stuck)}"
        )
        # the route does not go back, and nothing is announced twice for that step
        await asyncio.sleep(1)
        assert written[written.index((50, 50)) :].count((100, 0)) == 0


async def test_reverting_the_spec_half_way_rolls_traffic_back(
    service_operator: ServiceOperator,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        rs = await deploy_incremental(
            kclient,
            namespace,
            "svc",
            old_fake,
            routes,
            interval=3,
            rayClusterDeletionDelaySeconds=1,
        )
        old = active_name(rs)
        new = await _start_upgrade(kclient, namespace, rs)
        await serve_head(kclient, namespace, new, new_fake)
        await wait_put(new_fake)
        run_apps(new_fake)
        half = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: r["status"]["pendingServiceStatus"].get("trafficRoutedPercent") == 50,
            timeout=60,
            message="half the traffic on the new cluster",
        )
        assert half["status"]["activeServiceStatus"]["trafficRoutedPercent"] == 50

        await kclient.patch(
            "ray.io/v1",
            "RayService",
            "svc",
            {"spec": {"rayClusterConfig": rs["spec"]["rayClusterConfig"]}},
            namespace,
        )
        rolling = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: (cond(r, "RollbackInProgress") or {}).get("status") == "True",
            message="rollback started",
        )
        assert cond(rolling, "RollbackInProgress")["reason"] == "DesiredClusterSpecChanged"  # type: ignore[index]
        back = await wait_rs(kclient, namespace, "svc", lambda r: pending_name(r) == "", timeout=60)
        assert active_name(back) == old
        assert cond(back, "RollbackInProgress") is None
        assert cond(back, "UpgradeInProgress")["status"] == "False"  # type: ignore[index]
        active = back["status"]["activeServiceStatus"]
        assert (active["trafficRoutedPercent"], active["targetCapacity"]) == (100, 100)
        assert capacities(new_fake)[-1] == 0  # the new cluster drained before it was dropped
        route = await kclient.get(GW, "HTTPRoute", "svc-httproute", namespace)
        assert weights_of(route)[0] == 100
        await wait_event_reasons(kclient, namespace, "svc", {"DeletedRayCluster"})
        assert not await cluster_exists(kclient, namespace, new)


async def test_a_gateway_never_programmed_is_named_and_the_upgrade_abandoned(
    service_operator: ServiceOperator,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        rs = await deploy_incremental(kclient, namespace, "svc", old_fake, routes)
        old = active_name(rs)
        await set_gateway(
            kclient, namespace, "svc-gateway", programmed=False, why="no address for the LB"
        )
        new = await _start_upgrade(kclient, namespace, rs)
        await serve_head(kclient, namespace, new, new_fake)
        await wait_put(new_fake)
        run_apps(new_fake)
        stuck = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: (
                "Gateway svc-gateway is not Programmed"
                in (cond(r, "UpgradeInProgress") or {}).get("message", "")
            ),
            message="the Gateway named in UpgradeInProgress",
        )
        message = cond(stuck, "UpgradeInProgress")["message"]  # type: ignore[index]
        assert "AddressNotAssigned: no address for the LB" in message
        await count_passes(service_operator, 3)
        still = await get_rs(kclient, namespace, "svc")
        assert (active_name(still), pending_name(still)) == (old, new)
        assert still["status"]["pendingServiceStatus"].get("trafficRoutedPercent", 0) == 0
        assert capacities(new_fake) == [0]  # no capacity step without a ready Gateway

        # The upgrade deadline (beyond KubeRay) applies: the pending cluster is given up.
        await kclient.patch(
            "ray.io/v1",
            "RayService",
            "svc",
            {"metadata": {"annotations": {"ray.io/upgrade-timeout": "1"}}},
            namespace,
        )
        gave_up = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: (cond(r, "UpgradeAbandoned") or {}).get("status") == "True",
            message="abandoned",
        )
        assert (
            "Gateway svc-gateway is not Programmed" in cond(gave_up, "UpgradeAbandoned")["message"]
        )  # type: ignore[index]
        assert (active_name(gave_up), pending_name(gave_up)) == (old, "")

        async def one_backend() -> bool:
            found = await kclient.get(GW, "HTTPRoute", "svc-httproute", namespace)
            return weights_of(found) == (100,)

        # The next pass routes everything to the active cluster again.
        await eventually(one_backend, timeout=30, message="route back to the active cluster")


async def test_no_capacity_is_taken_from_a_cluster_the_gateway_still_sends_traffic_to(
    service_operator: ServiceOperator,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    """Beyond KubeRay (the requests lost through a real Gateway): the old cluster keeps its
    ``target_capacity`` while the gateway has not observed the HTTPRoute generation that
    moved its traffic away, and lowers it once it has."""
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        rs = await deploy_incremental(
            kclient, namespace, "svc", old_fake, routes, rayClusterDeletionDelaySeconds=1
        )
        routes.hold = lambda weights: weights == (50, 50)  # the data plane lags at 50/50
        new = await _start_upgrade(kclient, namespace, rs)
        await serve_head(kclient, namespace, new, new_fake)
        await wait_put(new_fake)
        run_apps(new_fake)

        async def half_written() -> bool:
            route = await kclient.get(GW, "HTTPRoute", "svc-httproute", namespace)
            return weights_of(route) == (50, 50)

        await eventually(half_written, timeout=60, message="HTTPRoute written at 50/50")
        assert capacities(new_fake) == [0, 50]
        # Ten seconds of passes (every 2 s) with the gateway still at the old generation: the
        # old cluster is not scaled down under the traffic it still receives.
        for _ in range(20):
            assert capacities(old_fake) == [100]
            await asyncio.sleep(0.5)
        assert routes.observed[-1] == (100, 0)

        # What the gateway had accepted when each capacity reached the old cluster.
        seen_by_gateway: dict[Any, list[tuple[int, ...]]] = {}
        old_fake.on_serve_config = lambda body: seen_by_gateway.setdefault(
            body.get("target_capacity"), list(routes.observed)
        )
        routes.hold = lambda _weights: False
        await eventually(
            lambda: capacities(old_fake) == [100, 50], timeout=30, message="old capacity 50"
        )
        assert seen_by_gateway[50][-1] == (50, 50)
        done = await wait_rs(kclient, namespace, "svc", lambda r: active_name(r) == new, timeout=90)
        assert capacities(old_fake) == [100, 50, 0]
        assert done["status"]["activeServiceStatus"]["trafficRoutedPercent"] == 100


async def test_missing_gateway_api_crds_fail_validation_naming_the_field(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    client: Any = service_operator.client
    original = client.resource

    async def without_gateway_api(api_version: str, kind: str) -> Any:
        if api_version == GATEWAY_API_VERSION:
            raise NotFound(404, "NotFound", f"the server has no resource for kind {kind}")
        return await original(api_version, kind)

    client.resource = without_gateway_api
    await kclient.create(incremental_rayservice("svc", namespace))
    rs = await wait_rs(
        kclient,
        namespace,
        "svc",
        lambda r: (cond(r, "Ready") or {}).get("reason") == "ValidationFailed",
    )
    message = cond(rs, "Ready")["message"]  # type: ignore[index]
    assert message.startswith("spec.upgradeStrategy.type NewClusterWithIncrementalUpgrade")
    assert "Gateway and HTTPRoute" in message
    await wait_event_reasons(kclient, namespace, "svc", {"InvalidRayServiceSpec"})
    clusters, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
    assert clusters == []
    events = await events_for(kclient, namespace, "svc")
    assert len([e for e in events if e["reason"] == "InvalidRayServiceSpec"]) == 1
