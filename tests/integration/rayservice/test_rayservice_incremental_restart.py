"""An incremental upgrade, or its rollback, survives an operator restart (issue 26, item 2):
nothing the operator needs to finish it lives only in memory. The first operator stops half
way; a new one (new Manager, empty memory) finishes, giving each cluster's Serve only a new
``target_capacity`` with the applications that cluster runs."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.rayservice.conftest import start_service_operator
from tests.integration.rayservice.helpers import (
    SERVE_CONFIG,
    active_name,
    cond,
    fake_dashboard,
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
    weights_of,
)
from tests.integration.rayservice.test_rayservice_upgrade import with_image

NEW_SERVE_CONFIG = SERVE_CONFIG.replace("num_replicas: 1", "num_replicas: 2")


@pytest.fixture
async def routes(kclient: Client, namespace: str) -> AsyncIterator[FakeRouteController]:
    """The gateway controller's HTTPRoute part for RayService ``svc``."""
    controller = FakeRouteController(kclient, namespace, "svc-httproute", "svc-gateway")
    yield controller
    await controller.stop()


async def _route_written(kclient: Client, namespace: str, weights: tuple[int, ...]) -> None:
    async def written() -> bool:
        route = await kclient.get(GW, "HTTPRoute", "svc-httproute", namespace)
        return weights_of(route) == weights

    await eventually(written, timeout=60, message=f"HTTPRoute written at {weights}")


async def _upgrade_half_way(
    kclient: Client, namespace: str, rs: dict[str, Any], new_fake: Any, routes: Any
) -> str:
    """A new image and Serve config; returns the pending cluster once the HTTPRoute is written
    at 50/50, which the gateway is kept from observing (so no capacity moves after it)."""
    routes.hold = lambda weights: weights == (50, 50)
    await kclient.patch(
        "ray.io/v1",
        "RayService",
        "svc",
        {
            "spec": {
                "rayClusterConfig": with_image(rs, "rayproject/ray:2.47.0"),
                "serveConfigV2": NEW_SERVE_CONFIG,
            }
        },
        namespace,
    )
    new = pending_name(await wait_rs(kclient, namespace, "svc", pending_name, message="pending"))
    await serve_head(kclient, namespace, new, new_fake)
    await wait_put(new_fake)
    run_apps(new_fake)
    await _route_written(kclient, namespace, (50, 50))
    return new


async def test_an_incremental_upgrade_finishes_after_an_operator_restart(
    crds_installed: None,
    kubeconfig_path: Path,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        async with start_service_operator(kubeconfig_path, namespace):
            rs = await deploy_incremental(
                kclient, namespace, "svc", old_fake, routes, rayClusterDeletionDelaySeconds=1
            )
            old = active_name(rs)
            old_apps = copy.deepcopy(old_fake.serve_config_history[0]["applications"])
            new = await _upgrade_half_way(kclient, namespace, rs, new_fake, routes)
            assert capacities(new_fake) == [0, 50]
            assert capacities(old_fake) == [100]
        # The operator is gone with all it remembered; a new one takes over.
        async with start_service_operator(kubeconfig_path, namespace):
            routes.hold = lambda _weights: False
            done = await wait_rs(
                kclient,
                namespace,
                "svc",
                lambda r: active_name(r) == new,
                timeout=120,
                message="promoted by the new operator",
            )
            assert pending_name(done) == ""
            assert cond(done, "UpgradeInProgress")["status"] == "False"  # type: ignore[index]
            active = done["status"]["activeServiceStatus"]
            assert (active["trafficRoutedPercent"], active["targetCapacity"]) == (100, 100)
            assert capacities(old_fake) == [100, 50, 0]
            assert capacities(new_fake) == [0, 50, 100]
            # The old cluster kept its own applications: only its capacity changed.
            assert all(body["applications"] == old_apps for body in old_fake.serve_config_history)
            assert old != new


async def test_an_incremental_rollback_finishes_after_an_operator_restart(
    crds_installed: None,
    kubeconfig_path: Path,
    kclient: Client,
    namespace: str,
    routes: FakeRouteController,
) -> None:
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        async with start_service_operator(kubeconfig_path, namespace):
            rs = await deploy_incremental(
                kclient, namespace, "svc", old_fake, routes, rayClusterDeletionDelaySeconds=1
            )
            old = active_name(rs)
            new = await _upgrade_half_way(kclient, namespace, rs, new_fake, routes)
            new_apps = copy.deepcopy(new_fake.serve_config_history[-1]["applications"])
            routes.hold = lambda _weights: True  # no capacity moves from here on
            await kclient.patch(
                "ray.io/v1",
                "RayService",
                "svc",
                {"spec": {k: rs["spec"][k] for k in ("rayClusterConfig", "serveConfigV2")}},
                namespace,
            )
            await wait_rs(
                kclient,
                namespace,
                "svc",
                lambda r: (cond(r, "RollbackInProgress") or {}).get("status") == "True",
                message="rollback started",
            )
            await _route_written(kclient, namespace, (100, 0))
            assert capacities(new_fake) == [0, 50]
        async with start_service_operator(kubeconfig_path, namespace):
            routes.hold = lambda _weights: False
            back = await wait_rs(
                kclient,
                namespace,
                "svc",
                lambda r: pending_name(r) == "",
                timeout=120,
                message="rollback finished by the new operator",
            )
            assert active_name(back) == old
            assert cond(back, "RollbackInProgress") is None
            active = back["status"]["activeServiceStatus"]
            assert (active["trafficRoutedPercent"], active["targetCapacity"]) == (100, 100)
            # The new cluster drained with its own applications (its config is held back).
            assert capacities(new_fake)[-1] == 0
            assert new_fake.serve_config_history[-1]["applications"] == new_apps
            assert new != old
