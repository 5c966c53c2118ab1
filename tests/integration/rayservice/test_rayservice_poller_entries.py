"""The dashboard poller keeps only what exists now (issue 26, item 4): a RayService upgraded
again and again, each time to a new cluster with a new Serve config, keeps the calls to its
active cluster only; none once it is deleted."""

from __future__ import annotations

from kuberay.kube import Client
from tests.helpers import eventually, wait_quiet
from tests.integration.rayservice.conftest import ServiceOperator
from tests.integration.rayservice.helpers import (
    SERVE_CONFIG,
    active_name,
    deploy,
    fake_dashboard,
    pending_name,
    puts,
    run_apps,
    serve_head,
    wait_put,
    wait_rs,
)
from tests.integration.rayservice.test_rayservice_upgrade import with_image

UPGRADES = 5  # 20 keeps it at 3 too; before the fix: 63


async def test_upgrades_leave_no_poller_entries_behind(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    poller = service_operator.poller
    async with fake_dashboard() as fake:
        rs = await deploy(
            kclient,
            namespace,
            "svc",
            fake,
            rayClusterDeletionDelaySeconds=0,
            upgradeStrategy={"type": "NewCluster"},
        )
        entries = [await wait_quiet(lambda: poller.entries, quiet=1.0)]
        for i in range(1, UPGRADES + 1):
            old = active_name(rs)
            sent = puts(fake)
            await kclient.patch(
                "ray.io/v1",
                "RayService",
                "svc",
                {
                    "spec": {
                        "rayClusterConfig": with_image(rs, f"rayproject/ray:2.46.{i}"),
                        "serveConfigV2": SERVE_CONFIG.replace("name: app1", f"name: app{i}"),
                    }
                },
                namespace,
            )
            rs = await wait_rs(
                kclient, namespace, "svc", lambda r, old=old: pending_name(r) not in ("", old)
            )
            new = pending_name(rs)
            await serve_head(kclient, namespace, new, fake)
            await wait_put(fake, sent + 1)
            run_apps(fake)
            rs = await wait_rs(
                kclient, namespace, "svc", lambda r, new=new: active_name(r) == new, timeout=60
            )
            entries.append(await wait_quiet(lambda: poller.entries, quiet=1.0))
        print(f"poller entries after each upgrade: {entries}")
        assert max(entries) <= entries[0], entries

        await kclient.delete("ray.io/v1", "RayService", "svc", namespace)
        await eventually(lambda: poller.entries == 0, timeout=60, message="entries dropped")
