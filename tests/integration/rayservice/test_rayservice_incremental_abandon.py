"""Abandoning an incremental upgrade at ``ray.io/upgrade-timeout`` on the real apiserver (issue
26, item 10): the old cluster's ``target_capacity`` had been lowered to 50 with the HTTPRoute
at 50/50; the HTTPRoute must not give the old cluster all traffic again before that cluster
was sent ``target_capacity`` 100 *and* its Serve reports it scaled up (the fake reports the
deployment ``UPSCALING`` until the test says otherwise). Then the route goes back to 100/0,
the pending cluster is retired and ``UpgradeInProgress`` ends with ``UpgradeAbandoned``
True. The second test restarts the operator in the middle of it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client
from kuberay.testing import FakeDashboard
from tests.helpers import eventually
from tests.integration.raycluster.helpers import wait_event_reasons
from tests.integration.rayservice.conftest import ServiceOperator, start_service_operator
from tests.integration.rayservice.helpers import (
    active_name,
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
    record_route_writes,
    weights_of,
)
from tests.integration.rayservice.test_rayservice_upgrade import with_image


@pytest.fixture
async def routes(kclient: Client, namespace: str) -> AsyncIterator[FakeRouteController]:
    """The gateway controller's HTTPRoute part for RayService ``svc``."""
    controller = FakeRouteController(kclient, namespace, "svc-httproute", "svc-gateway")
    yield controller
    await controller.stop()


def _upscaling(fake: FakeDashboard, *, done: bool) -> None:
    """Serve on ``fake`` reports its deployments ``UPSCALING`` (apps still ``RUNNING``, as
    Ray while replicas are added for a raised ``target_capacity``), or ``HEALTHY``."""
    for app, entry in fake.applications.items():
        status = "HEALTHY" if done else "UPSCALING"
        fake.set_app_status(app, "RUNNING", deployments=dict.fromkeys(entry["deployments"], status))


async def _route(kclient: Client, namespace: str) -> tuple[int, ...]:
    return weights_of(await kclient.get(GW, "HTTPRoute", "svc-httproute", namespace))


async def _upgrade_with_old_capacity_lowered(
    kclient: Client,
    namespace: str,
    old_fake: FakeDashboard,
    new_fake: FakeDashboard,
    routes: FakeRouteController,
) -> tuple[str, str]:
    """Deploy, start an upgrade (traffic steps 10 s apart), and return (old, new) once the
    route is at 50/50 and the old cluster's ``target_capacity`` was lowered to 50; the new
    cluster's applications turn ``UNHEALTHY`` at 50/50 (so traffic moves no further) and the
    old cluster's Serve then reports its deployments ``UPSCALING``."""
    rs = await deploy_incremental(
        kclient, namespace, "svc", old_fake, routes, interval=10, rayClusterDeletionDelaySeconds=1
    )
    old = active_name(rs)
    await kclient.patch(
        "ray.io/v1",
        "RayService",
        "svc",
        {"spec": {"rayClusterConfig": with_image(rs, "rayproject/ray:2.47.0")}},
        namespace,
    )
    new = pending_name(await wait_rs(kclient, namespace, "svc", pending_name, message="pending"))
    await serve_head(kclient, namespace, new, new_fake)
    await wait_put(new_fake)
    run_apps(new_fake)

    async def half_way() -> bool:
        return await _route(kclient, namespace) == (50, 50)

    await eventually(half_way, timeout=60, message="HTTPRoute written at 50/50")
    for app in new_fake.applications:
        new_fake.set_app_status(app, "UNHEALTHY", "replica crashed")
    await eventually(
        lambda: capacities(old_fake) == [100, 50], timeout=60, message="old capacity 50"
    )
    lowered = await wait_rs(
        kclient,
        namespace,
        "svc",
        lambda r: r["status"]["activeServiceStatus"].get("targetCapacity") == 50,
        message="old capacity 50 in the status",
    )
    assert lowered["status"]["activeServiceStatus"]["trafficRoutedPercent"] == 50
    assert await _route(kclient, namespace) == (50, 50)
    _upscaling(old_fake, done=False)
    return old, new


async def _abandon(kclient: Client, namespace: str) -> dict[str, Any]:
    await kclient.patch(
        "ray.io/v1",
        "RayService",
        "svc",
        {"metadata": {"annotations": {"ray.io/upgrade-timeout": "1"}}},
        namespace,
    )
    return await wait_rs(
        kclient,
        namespace,
        "svc",
        lambda r: (cond(r, "UpgradeAbandoned") or {}).get("status") == "True",
        message="abandoned",
    )


async def _traffic_held(
    kclient: Client, namespace: str, written: list[tuple[int, ...]], mark: int, new: str
) -> None:
    """Six seconds of passes (one every 2 s): no HTTPRoute write gives the old cluster all
    traffic, the route stays at 50/50 and the pending cluster is still named."""
    for _ in range(12):
        assert all(w[0] != 100 for w in written[mark:]), written[mark:]
        assert await _route(kclient, namespace) == (50, 50)
        await asyncio.sleep(0.5)
    rs = await get_rs(kclient, namespace, "svc")
    assert pending_name(rs) == new
    upgrading = cond(rs, "UpgradeInProgress") or {}
    assert upgrading.get("status") == "True"
    assert "upgrade is abandoned" in upgrading.get("message", ""), upgrading


async def _finished(
    kclient: Client, namespace: str, old: str, written: list[tuple[int, ...]], mark: int
) -> None:
    done = await wait_rs(
        kclient, namespace, "svc", lambda r: pending_name(r) == "", message="pending retired"
    )
    assert active_name(done) == old
    assert (cond(done, "UpgradeInProgress") or {}).get("status") == "False"
    assert (cond(done, "UpgradeAbandoned") or {}).get("reason") == "UpgradeTimeout"
    active = done["status"]["activeServiceStatus"]
    assert (active["trafficRoutedPercent"], active["targetCapacity"]) == (100, 100)
    await eventually(
        lambda: written[-1:] == [(100,)], timeout=30, message="route back to one backend"
    )
    assert written[mark:] == [(100, 0), (100,)]  # one step back, then the pending one gone


async def test_an_abandoned_upgrade_restores_the_old_capacity_before_traffic_goes_back(
    service_operator: ServiceOperator,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    written = record_route_writes(service_operator)
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        old, new = await _upgrade_with_old_capacity_lowered(
            kclient, namespace, old_fake, new_fake, routes
        )
        mark = len(written)
        abandoned = await _abandon(kclient, namespace)
        await wait_event_reasons(kclient, namespace, "svc", {"RayServiceUpgradeTimeout"})
        assert "did not become ready" in (cond(abandoned, "UpgradeAbandoned") or {})["message"]
        # target_capacity 100 is sent to the old cluster and accepted ...
        await eventually(
            lambda: capacities(old_fake) == [100, 50, 100], timeout=30, message="old back at 100"
        )
        # ... but Serve still reports it scaling up: the traffic stays where it is.
        await _traffic_held(kclient, namespace, written, mark, new)

        _upscaling(old_fake, done=True)
        await _finished(kclient, namespace, old, written, mark)
        assert capacities(old_fake) == [100, 50, 100]
        await wait_event_reasons(kclient, namespace, "svc", {"DeletedRayCluster"})


async def test_an_abandon_under_way_is_finished_by_a_restarted_operator(
    crds_installed: None,
    kubeconfig_path: Path,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        async with start_service_operator(kubeconfig_path, namespace) as first:
            written = record_route_writes(first)
            old, new = await _upgrade_with_old_capacity_lowered(
                kclient, namespace, old_fake, new_fake, routes
            )
            mark = len(written)
            await _abandon(kclient, namespace)
            await eventually(
                lambda: capacities(old_fake)[-1] == 100, timeout=30, message="old back at 100"
            )
            assert all(w[0] != 100 for w in written[mark:]), written[mark:]
        # The operator is gone with all it remembered; the new one reads the status and Serve.
        async with start_service_operator(kubeconfig_path, namespace) as second:
            written = record_route_writes(second)
            await _traffic_held(kclient, namespace, written, 0, new)
            _upscaling(old_fake, done=True)
            await _finished(kclient, namespace, old, written, 0)
