"""RayCluster controller on the real apiserver: creation, status, scaling, healing."""

from __future__ import annotations

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import (
    all_running,
    condition,
    get_cluster,
    pods_of,
    raycluster,
    wait_event_reasons,
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

    await eventually(three_workers, timeout=60, message="3 workers")
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

    await eventually(provisioning_status, timeout=60, message="initial status")
    await all_running(kclient, namespace, "raycluster-static")

    async def ready() -> bool:
        rc = await get_cluster(kclient, namespace, "raycluster-static")
        s = rc.get("status") or {}
        cond = condition(rc, "RayClusterProvisioned")
        return (
            s.get("state") == "ready"
            and cond is not None
            and cond["status"] == "True"
            and s.get("readyWorkerReplicas") == 3
        )

    await eventually(ready, timeout=60, message="ready with 3 ready workers")
    rc = await get_cluster(kclient, namespace, "raycluster-static")
    assert rc["status"]["head"]["serviceIP"] == rc["status"]["head"]["podIP"]
    assert condition(rc, "HeadPodReady")["status"] == "True"  # type: ignore[index]

    # Events are written by the recorder's background task: wait for them.
    await wait_event_reasons(
        kclient,
        namespace,
        "raycluster-static",
        {"CreatedService", "CreatedHeadPod", "CreatedWorkerPod"},
    )


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

        await eventually(two_pods, timeout=60)

        # The metrics are set when the status is written, after the pods: poll them.
        def info_and_unprovisioned() -> bool:
            info = registry.get_sample_value(
                "kuberay_cluster_info", {**ident, "owner_kind": "None"}
            )
            cond = registry.get_sample_value(
                "kuberay_cluster_condition_provisioned", {**ident, "condition": "false"}
            )
            return info == 1 and cond == 1

        await eventually(info_and_unprovisioned, timeout=60, message="cluster info metrics")
        await all_running(kclient, namespace, "metered")

        async def provisioned() -> float | None:
            return registry.get_sample_value("kuberay_cluster_provisioned_duration_seconds", ident)

        seconds = await eventually(provisioned, timeout=60)
        assert 0 <= seconds < 300  # a duration, not a timestamp
        await kclient.delete("ray.io/v1", "RayCluster", "metered", namespace)

        async def forgotten() -> bool:
            return (
                registry.get_sample_value("kuberay_cluster_provisioned_duration_seconds", ident)
                is None
            )

        await eventually(forgotten, timeout=60)
