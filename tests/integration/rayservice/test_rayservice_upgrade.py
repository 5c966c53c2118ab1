"""Cluster changes: zero-downtime upgrade with promotion and delayed deletion, strategy None,
appended worker groups in place (RS-09, RS-11..13), and the wedges of issue 11 (#3423, #1559)."""

from __future__ import annotations

import copy
from typing import Any

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.helpers import wait_event_reasons
from tests.integration.rayservice.conftest import ServiceOperator
from tests.integration.rayservice.helpers import (
    active_name,
    cluster_exists,
    cond,
    deploy,
    fake_dashboard,
    get_rs,
    pending_name,
    puts,
    run_apps,
    serve_head,
    wait_put,
    wait_rs,
)


async def count_passes(op: ServiceOperator, n: int) -> None:
    """Wait until the RayService reconciler has run ``n`` more passes."""
    reconciler = op.reconciler
    passes = 0
    original = reconciler.reconcile

    async def counting(request: Any) -> Any:
        nonlocal passes
        passes += 1
        return await original(request)

    reconciler.reconcile = counting
    try:
        await eventually(lambda: passes >= n, timeout=30, message=f"{n} more passes")
    finally:
        reconciler.reconcile = original


def with_image(rs: dict[str, Any], image: str) -> dict[str, Any]:
    config = copy.deepcopy(rs["spec"]["rayClusterConfig"])
    config["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] = image
    return config


async def test_zero_downtime_upgrade_promotes_then_deletes_the_old_cluster(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as old_fake, fake_dashboard() as new_fake:
        rs = await deploy(
            kclient,
            namespace,
            "svc",
            old_fake,
            rayClusterDeletionDelaySeconds=1,
            upgradeStrategy={"type": "NewCluster"},
        )
        old = active_name(rs)
        old_puts = puts(old_fake)
        # Image and Serve config change together (#3423): the config is for the new image.
        new_config = rs["spec"]["serveConfigV2"].replace("name: app1", "name: newapp")
        await kclient.patch(
            "ray.io/v1",
            "RayService",
            "svc",
            {
                "spec": {
                    "rayClusterConfig": with_image(rs, "rayproject/ray:2.47.0"),
                    "serveConfigV2": new_config,
                }
            },
            namespace,
        )
        rs = await wait_rs(kclient, namespace, "svc", pending_name, message="pending named")
        new = pending_name(rs)
        upgrading = cond(rs, "UpgradeInProgress")
        assert upgrading is not None and upgrading["reason"] == "BothActivePendingClustersExist"
        assert active_name(rs) == old
        # #1559: the new head's proxy is not ready from the start (a proxy seen healthy
        # before the flip could still be the operator's latest observation).
        new_fake.proxy_healthy = False
        await serve_head(kclient, namespace, new, new_fake)
        await wait_put(new_fake)
        assert [a["name"] for a in new_fake.serve_config["applications"]] == ["newapp"]

        # Apps RUNNING but the new head's proxy not ready -> traffic stays.
        run_apps(new_fake)
        rs = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: "Serve proxy" in ((cond(r, "UpgradeInProgress") or {}).get("message") or ""),
            message="waiting on the new proxy",
        )
        assert active_name(rs) == old
        svc = await kclient.get("v1", "Service", "svc-serve-svc", namespace)
        assert svc["spec"]["selector"]["ray.io/cluster"] == old
        new_fake.proxy_healthy = True
        rs = await wait_rs(
            kclient, namespace, "svc", lambda r: active_name(r) == new, message="promoted"
        )
        assert pending_name(rs) == ""
        upgrading = cond(rs, "UpgradeInProgress")
        assert upgrading is not None and upgrading["reason"] == "NoPendingCluster"
        svc = await kclient.get("v1", "Service", "svc-serve-svc", namespace)
        assert svc["spec"]["selector"]["ray.io/cluster"] == new
        head = await kclient.get("v1", "Service", "svc-head-svc", namespace)
        assert head["spec"]["selector"]["ray.io/cluster"] == new
        await wait_event_reasons(kclient, namespace, "svc", {"UpdatedService", "DeletedRayCluster"})
        await eventually(
            lambda: _gone(kclient, namespace, old), message="old cluster deleted after the delay"
        )
        # The old cluster never received the new Serve config, and the promoted cluster is
        # not sent its config again (the cache is per cluster, RS-26).
        await count_passes(service_operator, 2)
        assert puts(new_fake) == 1
        assert puts(old_fake) == old_puts
        assert [a["name"] for a in old_fake.serve_config["applications"]] == ["app1"]


async def _gone(client: Client, namespace: str, name: str) -> bool:
    return not await cluster_exists(client, namespace, name)


async def test_strategy_none_never_creates_a_cluster_but_applies_serve_changes(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        rs = await deploy(kclient, namespace, "svc", fake, upgradeStrategy={"type": "None"})
        cluster = active_name(rs)
        patched = await kclient.patch(
            "ray.io/v1",
            "RayService",
            "svc",
            {"spec": {"rayClusterConfig": with_image(rs, "rayproject/ray:2.47.0")}},
            namespace,
        )
        generation = patched["metadata"]["generation"]
        await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: r["status"].get("observedGeneration") == generation,
            message="observed",
        )
        await count_passes(service_operator, 3)
        rs = await get_rs(kclient, namespace, "svc")
        assert pending_name(rs) == "" and active_name(rs) == cluster
        clusters, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
        assert [c["metadata"]["name"] for c in clusters] == [cluster]
        before = puts(fake)
        new_config = rs["spec"]["serveConfigV2"].replace("name: app1", "name: other")
        await kclient.patch(
            "ray.io/v1", "RayService", "svc", {"spec": {"serveConfigV2": new_config}}, namespace
        )
        await wait_put(fake, before + 1)


async def test_env_disables_zero_downtime_without_a_strategy(
    crds_installed: None, kubeconfig_path: Any, kclient: Client, namespace: str
) -> None:
    from tests.integration.rayservice.conftest import start_service_operator

    async with (
        start_service_operator(
            kubeconfig_path, namespace, env={"ENABLE_ZERO_DOWNTIME": "false"}
        ) as op,
        fake_dashboard() as fake,
    ):
        rs = await deploy(kclient, namespace, "svc", fake)
        patched = await kclient.patch(
            "ray.io/v1",
            "RayService",
            "svc",
            {"spec": {"rayClusterConfig": with_image(rs, "rayproject/ray:2.47.0")}},
            namespace,
        )
        await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: r["status"].get("observedGeneration") == patched["metadata"]["generation"],
        )
        await count_passes(op, 3)
        assert pending_name(await get_rs(kclient, namespace, "svc")) == ""


async def test_appended_worker_group_updates_the_cluster_in_place(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        rs = await deploy(kclient, namespace, "svc", fake)
        cluster = active_name(rs)
        config = copy.deepcopy(rs["spec"]["rayClusterConfig"])
        extra = copy.deepcopy(config["workerGroupSpecs"][0])
        extra["groupName"] = "extra-group"
        config["workerGroupSpecs"].append(extra)
        await kclient.patch(
            "ray.io/v1", "RayService", "svc", {"spec": {"rayClusterConfig": config}}, namespace
        )

        async def updated() -> bool:
            rc = await kclient.get("ray.io/v1", "RayCluster", cluster, namespace)
            groups = [g["groupName"] for g in rc["spec"]["workerGroupSpecs"]]
            return groups == ["small-group", "extra-group"] and (
                rc["metadata"]["annotations"]["ray.io/num-worker-groups"] == "2"
            )

        await eventually(updated, message="worker group appended in place")
        await wait_event_reasons(kclient, namespace, "svc", {"UpdatedRayCluster"})
        await count_passes(service_operator, 2)
        rs = await get_rs(kclient, namespace, "svc")
        assert active_name(rs) == cluster and pending_name(rs) == ""
        # Scaling edits made on the cluster itself never trigger an upgrade (RS-10).
        await kclient.patch(
            "ray.io/v1",
            "RayCluster",
            cluster,
            {
                "spec": {
                    "workerGroupSpecs": [
                        {**g, "replicas": 1}
                        for g in (await kclient.get("ray.io/v1", "RayCluster", cluster, namespace))[
                            "spec"
                        ]["workerGroupSpecs"]
                    ]
                }
            },
            namespace,
        )
        await count_passes(service_operator, 3)
        assert pending_name(await get_rs(kclient, namespace, "svc")) == ""
