"""Upgrades that cannot finish are visible and bounded; names two clusters would share are
refused; incremental upgrades are refused loudly (issue 11, beyond KubeRay)."""

from __future__ import annotations

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
    head_pod,
    pending_name,
    puts,
    rayservice,
    wait_rs,
)
from tests.integration.rayservice.test_rayservice_upgrade import count_passes, with_image


async def image_pull_backoff(client: Client, pod: dict[str, Any]) -> None:
    """What a kubelet reports for an image it cannot pull."""
    await client.patch_status(
        "v1",
        "Pod",
        pod["metadata"]["name"],
        {
            "status": {
                "phase": "Pending",
                "containerStatuses": [
                    {
                        "name": "ray-head",
                        "ready": False,
                        "restartCount": 0,
                        "image": "bad",
                        "imageID": "",
                        "state": {
                            "waiting": {
                                "reason": "ImagePullBackOff",
                                "message": 'Back-off pulling image "rayproject/ray:nope"',
                            }
                        },
                    }
                ],
            }
        },
        pod["metadata"]["namespace"],
    )


async def test_stuck_pending_cluster_is_named_then_abandoned_at_the_deadline(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        body_annotations = {"ray.io/upgrade-timeout": "4s"}
        await kclient.create(
            {
                **rayservice("svc", namespace, rayClusterDeletionDelaySeconds=0),
                "metadata": {
                    "name": "svc",
                    "namespace": namespace,
                    "annotations": body_annotations,
                },
            }
        )
        rs = await wait_rs(kclient, namespace, "svc", pending_name, message="pending named")
        from tests.integration.rayservice.helpers import run_apps, serve_head, wait_put

        first = pending_name(rs)
        await serve_head(kclient, namespace, first, fake)
        await wait_put(fake)
        run_apps(fake)
        rs = await wait_rs(kclient, namespace, "svc", lambda r: active_name(r) == first)
        old_puts = puts(fake)

        await kclient.patch(
            "ray.io/v1",
            "RayService",
            "svc",
            {
                "spec": {
                    "rayClusterConfig": with_image(rs, "rayproject/ray:nope"),
                    "serveConfigV2": rs["spec"]["serveConfigV2"].replace("app1", "app2"),
                }
            },
            namespace,
        )
        rs = await wait_rs(kclient, namespace, "svc", pending_name, message="pending named")
        stuck = pending_name(rs)
        await image_pull_backoff(kclient, await head_pod(kclient, namespace, stuck))
        # The upgrade condition says why the new cluster is not ready (#5088) ...
        rs = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: (
                "ImagePullBackOff" in ((cond(r, "UpgradeInProgress") or {}).get("message") or "")
                or (cond(r, "UpgradeAbandoned") or {}).get("status") == "True"
            ),
            message="the head pod's problem named",
        )
        # ... and at the deadline the upgrade is abandoned; the active cluster keeps serving.
        rs = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: (cond(r, "UpgradeAbandoned") or {}).get("status") == "True",
            timeout=60,
            message="upgrade abandoned",
        )
        abandoned = cond(rs, "UpgradeAbandoned")
        assert abandoned is not None and abandoned["reason"] == "UpgradeTimeout"
        assert stuck in abandoned["message"] and "ImagePullBackOff" in abandoned["message"]
        assert active_name(rs) == first and pending_name(rs) == ""
        upgrading = cond(rs, "UpgradeInProgress")
        assert upgrading is not None and upgrading["status"] == "False"
        await wait_event_reasons(kclient, namespace, "svc", {"RayServiceUpgradeTimeout"})
        await eventually(
            lambda: _gone(kclient, namespace, stuck), message="abandoned cluster deleted"
        )
        # Not retried, and its Serve config never reaches the old cluster.
        await count_passes(service_operator, 3)
        rs = await get_rs(kclient, namespace, "svc")
        assert pending_name(rs) == "" and active_name(rs) == first
        assert puts(fake) == old_puts
        # A new spec starts a new upgrade.
        await kclient.patch(
            "ray.io/v1",
            "RayService",
            "svc",
            {"spec": {"rayClusterConfig": with_image(rs, "rayproject/ray:2.47.0")}},
            namespace,
        )
        rs = await wait_rs(kclient, namespace, "svc", pending_name, message="new upgrade")
        assert pending_name(rs) != stuck
        assert cond(rs, "UpgradeAbandoned") is None


async def _gone(client: Client, namespace: str, name: str) -> bool:
    return not await cluster_exists(client, namespace, name)


async def test_fixed_head_service_name_is_rejected_with_the_field(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    body = rayservice("svc", namespace)
    body["spec"]["rayClusterConfig"]["headGroupSpec"]["headService"] = {
        "metadata": {"name": "my-head"}
    }
    await kclient.create(body)
    rs = await wait_rs(
        kclient,
        namespace,
        "svc",
        lambda r: (cond(r, "Ready") or {}).get("reason") == "ValidationFailed",
        message="validation failed",
    )
    message = cond(rs, "Ready")["message"]  # type: ignore[index]
    assert "headGroupSpec.headService.metadata.name" in message
    assert "both the active and the pending RayCluster" in message
    events = await wait_event_reasons(kclient, namespace, "svc", {"InvalidRayServiceSpec"})
    assert any("headService.metadata.name" in e.get("message", "") for e in events)
    # No requeue after a validation failure (as KubeRay): nothing was or will be created.
    clusters, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
    assert clusters == []


async def test_serve_service_owned_by_another_rayservice_is_not_taken_over(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    shared = {
        "metadata": {"name": "shared-serve"},
        "spec": {"ports": [{"name": "serve", "port": 8000}]},
    }
    async with fake_dashboard() as fake_a, fake_dashboard() as fake_b:
        rs_a = await deploy(kclient, namespace, "a", fake_a, serveService=shared)
        await kclient.create(rayservice("b", namespace, serveService=shared))
        rs_b = await wait_rs(kclient, namespace, "b", pending_name)
        from tests.integration.rayservice.helpers import run_apps, serve_head, wait_put

        await serve_head(kclient, namespace, pending_name(rs_b), fake_b)
        await wait_put(fake_b)
        run_apps(fake_b)
        events = await wait_event_reasons(kclient, namespace, "b", {"ServiceNameConflict"})
        assert any("shared-serve" in e.get("message", "") for e in events)
        svc = await kclient.get("v1", "Service", "shared-serve", namespace)
        assert svc["spec"]["selector"]["ray.io/cluster"] == active_name(rs_a)
        assert active_name(await get_rs(kclient, namespace, "b")) == ""


async def test_unschedulable_pending_head_is_named_in_the_upgrade_condition(
    service_operator: ServiceOperator, kclient: Client, namespace: str
) -> None:
    async with fake_dashboard() as fake:
        rs = await deploy(kclient, namespace, "svc", fake)
        first = active_name(rs)
        await kclient.patch(
            "ray.io/v1",
            "RayService",
            "svc",
            {"spec": {"rayClusterConfig": with_image(rs, "rayproject/ray:2.47.0")}},
            namespace,
        )
        rs = await wait_rs(kclient, namespace, "svc", pending_name, message="pending named")
        pod = await head_pod(kclient, namespace, pending_name(rs))
        scheduler = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
        await kclient.patch_status(
            "v1",
            "Pod",
            pod["metadata"]["name"],
            {
                "status": {
                    "phase": "Pending",
                    "conditions": [
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "reason": "Unschedulable",
                            "message": scheduler,
                        }
                    ],
                }
            },
            namespace,
        )
        rs = await wait_rs(
            kclient,
            namespace,
            "svc",
            lambda r: scheduler in ((cond(r, "UpgradeInProgress") or {}).get("message") or ""),
            message="the scheduler's message in the condition",
        )
        upgrading = cond(rs, "UpgradeInProgress")
        assert upgrading is not None
        assert (upgrading["status"], upgrading["reason"]) == (
            "True",
            "BothActivePendingClustersExist",
        )
        assert pod["metadata"]["name"] in upgrading["message"]
        assert active_name(rs) == first  # the active cluster keeps serving
