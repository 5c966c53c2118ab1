"""RayCluster controller on the real apiserver: creation, status, scaling, healing."""

from __future__ import annotations

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import (
    all_running,
    condition,
    events_for,
    get_cluster,
    pods_of,
    raycluster,
)


async def test_create_makes_head_service_and_pods(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(raycluster("raycluster-static", namespace))

    async def three_workers() -> bool:
        return (
            len(
                await pods_of(
                    kclient, namespace, "raycluster-static", **{"ray.io/node-type": "worker"}
                )
            )
            == 3
        )

    await eventually(three_workers, timeout=30, message="3 workers")
    svc = await kclient.get("v1", "Service", "raycluster-static-head-svc", namespace)
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["publishNotReadyAddresses"] is True
    assert svc["spec"]["selector"] == {
        "ray.io/cluster": "raycluster-static",
        "ray.io/node-type": "head",
        "ray.io/identifier": "raycluster-static-head",
        "app.kubernetes.io/name": "kuberay",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }
    assert [(p["name"], p["port"]) for p in svc["spec"]["ports"]] == [
        ("client", 10001),
        ("dashboard", 8265),
        ("gcs-server", 6379),
        ("metrics", 8080),
        ("serve", 8000),
    ]
    owner = svc["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "RayCluster" and owner["controller"] is True
    heads = await pods_of(kclient, namespace, "raycluster-static", **{"ray.io/node-type": "head"})
    assert len(heads) == 1
    assert heads[0]["metadata"]["generateName"] == "raycluster-static-head-"
    workers = await pods_of(
        kclient, namespace, "raycluster-static", **{"ray.io/group": "small-group"}
    )
    assert all(
        w["metadata"]["generateName"] == "raycluster-static-small-group-worker-" for w in workers
    )

    async def provisioning_status() -> bool:
        rc = await get_cluster(kclient, namespace, "raycluster-static")
        s = rc.get("status") or {}
        cond = condition(rc, "RayClusterProvisioned")
        return (
            s.get("desiredWorkerReplicas") == 3
            and s.get("maxWorkerReplicas") == 4
            and (s.get("head") or {}).get("podName") == heads[0]["metadata"]["name"]
            and cond is not None
            and cond["reason"] == "RayClusterPodsProvisioning"
        )

    await eventually(provisioning_status, timeout=20, message="initial status")
    await all_running(kclient, namespace, "raycluster-static")

    async def ready() -> bool:
        rc = await get_cluster(kclient, namespace, "raycluster-static")
        s = rc.get("status") or {}
        cond = condition(rc, "RayClusterProvisioned")
        return s.get("state") == "ready" and cond is not None and cond["status"] == "True"

    await eventually(ready, timeout=20, message="ready")
    rc = await get_cluster(kclient, namespace, "raycluster-static")
    assert rc["status"]["readyWorkerReplicas"] == 3
    assert rc["status"]["head"]["serviceIP"] == rc["status"]["head"]["podIP"]
    assert condition(rc, "HeadPodReady")["status"] == "True"  # type: ignore[index]

    reasons = [e["reason"] for e in await events_for(kclient, namespace, "raycluster-static")]
    assert "CreatedService" in reasons and "CreatedHeadPod" in reasons
    assert reasons.count("CreatedWorkerPod") >= 1


async def test_kuberay_metrics(crds_installed: None, kclient: Client, namespace: str) -> None:
    from prometheus_client import CollectorRegistry

    from tests.integration.raycluster.conftest import start_operator

    registry = CollectorRegistry()
    async with start_operator(kclient, namespace, registry=registry, enable_metrics=True):
        created = await kclient.create(raycluster("metered", namespace, replicas=1))
        uid = created["metadata"]["uid"]
        ident = {"name": "metered", "namespace": namespace, "uid": uid}

        async def two_pods() -> bool:
            return len(await pods_of(kclient, namespace, "metered")) == 2

        await eventually(two_pods, timeout=30)
        assert (
            registry.get_sample_value("kuberay_cluster_info", {**ident, "owner_kind": "None"}) == 1
        )
        assert (
            registry.get_sample_value(
                "kuberay_cluster_condition_provisioned", {**ident, "condition": "false"}
            )
            == 1
        )
        await all_running(kclient, namespace, "metered")

        async def provisioned() -> float | None:
            return registry.get_sample_value("kuberay_cluster_provisioned_duration_seconds", ident)

        seconds = await eventually(provisioned, timeout=20)
        assert 0 <= seconds < 60
        await kclient.delete("ray.io/v1", "RayCluster", "metered", namespace)

        async def forgotten() -> bool:
            return (
                registry.get_sample_value("kuberay_cluster_provisioned_duration_seconds", ident)
                is None
            )

        await eventually(forgotten, timeout=20)
