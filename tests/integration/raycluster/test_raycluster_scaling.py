"""Scaling, healing, suspend, idempotency and validation of the RayCluster controller."""

from __future__ import annotations

import asyncio
from typing import Any

from kuberay.kube import Client
from kuberay.reconcile import Request
from tests.helpers import eventually, wait_quiet
from tests.integration.operator_harness import wait_for
from tests.integration.raycluster.conftest import Operator, start_operator
from tests.integration.raycluster.helpers import (
    all_running,
    condition,
    get_cluster,
    pods_of,
    raycluster,
    wait_event_reasons,
    wait_observed,
)

WORKER = {"ray.io/node-type": "worker"}


async def count(client: Client, ns: str, name: str, **labels: str) -> int:
    return len(await pods_of(client, ns, name, **labels))


async def wait_workers(client: Client, ns: str, name: str, n: int, timeout: float = 60) -> None:
    await wait_for(
        lambda: count(client, ns, name, **WORKER),
        lambda got: got == n,
        timeout=timeout,
        interval=0.1,
        message=f"{n} workers",
    )


async def patch_spec(client: Client, ns: str, name: str, spec: dict[str, Any]) -> None:
    await client.patch("ray.io/v1", "RayCluster", name, {"spec": spec}, ns)


def group(**fields: Any) -> dict[str, Any]:
    return {"groupName": "small-group", **fields}


async def set_group(client: Client, ns: str, name: str, **fields: Any) -> None:
    rc = await get_cluster(client, ns, name)
    groups = rc["spec"]["workerGroupSpecs"]
    groups[0].update(fields)
    await patch_spec(client, ns, name, {"workerGroupSpecs": groups})


async def test_scale_up_clamp_and_down(operator: Operator, kclient: Client, namespace: str) -> None:
    await kclient.create(raycluster("scale", namespace))
    await wait_workers(kclient, namespace, "scale", 3)
    await set_group(kclient, namespace, "scale", replicas=5)  # above maxReplicas=4
    await wait_workers(kclient, namespace, "scale", 4)
    await asyncio.sleep(1.0)
    assert await count(kclient, namespace, "scale", **WORKER) == 4
    await set_group(kclient, namespace, "scale", replicas=1)  # no autoscaler: operator scales down
    await wait_workers(kclient, namespace, "scale", 1)
    await asyncio.sleep(1.0)
    assert await count(kclient, namespace, "scale", **WORKER) == 1


async def test_deleted_worker_is_replaced_once(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(raycluster("heal", namespace))
    await wait_workers(kclient, namespace, "heal", 3)
    await wait_observed(operator, namespace, "heal")
    victim = (await pods_of(kclient, namespace, "heal", **WORKER))[0]
    await kclient.delete("v1", "Pod", victim["metadata"]["name"], namespace, grace_period_seconds=0)

    async def replaced() -> bool:
        names = {p["metadata"]["name"] for p in await pods_of(kclient, namespace, "heal", **WORKER)}
        return len(names) == 3 and victim["metadata"]["name"] not in names

    await eventually(replaced, timeout=60, message="worker replaced")
    await asyncio.sleep(1.5)
    assert await count(kclient, namespace, "heal", **WORKER) == 3


async def test_failed_pods_are_replaced(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(raycluster("failed", namespace, replicas=1))
    await wait_workers(kclient, namespace, "failed", 1)
    head = (await pods_of(kclient, namespace, "failed", **{"ray.io/node-type": "head"}))[0]
    await kclient.patch_status(
        "v1", "Pod", head["metadata"]["name"], {"status": {"phase": "Failed"}}, namespace
    )

    async def new_head() -> bool:
        heads = await pods_of(kclient, namespace, "failed", **{"ray.io/node-type": "head"})
        return len(heads) == 1 and heads[0]["metadata"]["name"] != head["metadata"]["name"]

    await eventually(new_head, timeout=60, message="head replaced")
    await wait_event_reasons(kclient, namespace, "failed", {"DeletedHeadPod"})


async def test_workers_to_delete_with_autoscaler(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(raycluster("autoscaled", namespace, enableInTreeAutoscaling=True))
    await wait_workers(kclient, namespace, "autoscaled", 3)
    # Autoscaler RBAC exists with KubeRay's names.
    await eventually(
        lambda: kclient.get("v1", "ServiceAccount", "autoscaled", namespace),
        timeout=60,
        message="autoscaler ServiceAccount",
    )
    role = await eventually(
        lambda: kclient.get("rbac.authorization.k8s.io/v1", "Role", "autoscaled", namespace),
        timeout=60,
        message="autoscaler Role",
    )
    assert {
        "apiGroups": ["ray.io"],
        "resources": ["rayclusters"],
        "verbs": ["get", "patch"],
    } in role["rules"]
    await eventually(
        lambda: kclient.get("rbac.authorization.k8s.io/v1", "RoleBinding", "autoscaled", namespace),
        timeout=60,
        message="autoscaler RoleBinding",
    )
    head = (await pods_of(kclient, namespace, "autoscaled", **{"ray.io/node-type": "head"}))[0]
    assert [c["name"] for c in head["spec"]["containers"]] == ["ray-head", "autoscaler"]

    # replicas lowered without workersToDelete: the operator waits for the autoscaler.
    await set_group(kclient, namespace, "autoscaled", replicas=2)
    await asyncio.sleep(2.0)
    assert await count(kclient, namespace, "autoscaled", **WORKER) == 3
    victim = sorted(
        p["metadata"]["name"] for p in await pods_of(kclient, namespace, "autoscaled", **WORKER)
    )[0]
    await set_group(
        kclient,
        namespace,
        "autoscaled",
        scaleStrategy={"workersToDelete": [victim, "gone-already"]},
    )

    async def exact() -> bool:
        names = {
            p["metadata"]["name"] for p in await pods_of(kclient, namespace, "autoscaled", **WORKER)
        }
        return len(names) == 2 and victim not in names

    await eventually(exact, timeout=60, message="named worker deleted")
    rc = await get_cluster(kclient, namespace, "autoscaled")
    # The operator leaves the list for the autoscaler to clear.
    assert rc["spec"]["workerGroupSpecs"][0]["scaleStrategy"]["workersToDelete"] == [
        victim,
        "gone-already",
    ]


async def test_suspend_and_resume(operator: Operator, kclient: Client, namespace: str) -> None:
    await kclient.create(raycluster("sus", namespace, replicas=2))
    await wait_workers(kclient, namespace, "sus", 2)
    await patch_spec(kclient, namespace, "sus", {"suspend": True})

    async def suspended() -> bool:
        rc = await get_cluster(kclient, namespace, "sus")
        c = condition(rc, "RayClusterSuspended")
        return (
            c is not None
            and c["status"] == "True"
            and rc["status"].get("state") == "suspended"
            and await count(kclient, namespace, "sus") == 0
        )

    await eventually(suspended, timeout=60, message="suspended")
    await kclient.get("v1", "Service", "sus-head-svc", namespace)  # services stay
    await patch_spec(kclient, namespace, "sus", {"suspend": False})
    await wait_workers(kclient, namespace, "sus", 2)

    async def resumed() -> bool:
        rc = await get_cluster(kclient, namespace, "sus")
        c = condition(rc, "RayClusterSuspended")
        return c is not None and c["status"] == "False"

    await eventually(resumed, timeout=60)
    assert await count(kclient, namespace, "sus", **{"ray.io/node-type": "head"}) == 1


async def test_unchanged_world_makes_zero_writes(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(raycluster("idem", namespace, replicas=2))
    await wait_workers(kclient, namespace, "idem", 2)
    await all_running(kclient, namespace, "idem")

    async def ready() -> bool:
        return (await get_cluster(kclient, namespace, "idem")).get("status", {}).get(
            "state"
        ) == "ready"

    await eventually(ready, timeout=60)
    # Let the 2 s post-write requeue (and any pass still in flight) settle: no write by
    # this shared client for a while, every Event written.
    await wait_quiet(lambda: kclient.stats.writes, quiet=3.0, timeout=60, message="writes")
    await operator.reconciler.ctx.recorder.flush()
    before = kclient.stats.writes
    for _ in range(3):
        await operator.reconciler.reconcile(Request(namespace, "idem"))
    await operator.reconciler.ctx.recorder.flush()
    assert kclient.stats.writes == before


async def test_invalid_spec_gets_condition_and_event(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    bad = raycluster("invalid", namespace)
    bad["spec"]["workerGroupSpecs"][0].update({"minReplicas": 5, "maxReplicas": 3})
    await kclient.create(bad)

    async def flagged() -> dict[str, Any] | None:
        rc = await get_cluster(kclient, namespace, "invalid")
        return condition(rc, "InvalidSpec")

    cond = await eventually(flagged, timeout=60, message="InvalidSpec condition")
    assert cond["status"] == "True" and cond["reason"] == "InvalidRayClusterSpec"
    assert "workerGroupSpecs[0]" in cond["message"]
    events = await wait_event_reasons(kclient, namespace, "invalid", {"InvalidRayClusterSpec"})
    warning = [e for e in events if e["reason"] == "InvalidRayClusterSpec"]
    assert warning and warning[0]["type"] == "Warning"
    assert "workerGroupSpecs[0]" in warning[0]["message"]
    await asyncio.sleep(1.0)
    assert await count(kclient, namespace, "invalid") == 0
    rc = await get_cluster(kclient, namespace, "invalid")
    assert rc["spec"]["workerGroupSpecs"][0]["minReplicas"] == 5  # the user's spec is untouched
    # Fixing it clears the condition and creates the cluster.
    groups = rc["spec"]["workerGroupSpecs"]
    groups[0].update({"minReplicas": 0, "maxReplicas": 4, "replicas": 1})
    await patch_spec(kclient, namespace, "invalid", {"workerGroupSpecs": groups})
    await wait_workers(kclient, namespace, "invalid", 1)

    async def cleared() -> bool:  # the status is written after the pods are made
        return condition(await get_cluster(kclient, namespace, "invalid"), "InvalidSpec") is None

    await eventually(cleared, timeout=60, message="InvalidSpec condition cleared")


async def test_burst_of_clusters_converges_without_duplicates(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace):
        names = [f"burst-{i}" for i in range(50)]
        await asyncio.gather(*(kclient.create(raycluster(n, namespace, replicas=2)) for n in names))

        async def converged() -> bool:
            pods, _ = await kclient.list_all("v1", "Pod", namespace)
            return len(pods) == 50 * 3

        await eventually(converged, timeout=240, interval=1.0, message="150 pods")
        await asyncio.sleep(3.0)
        pods, _ = await kclient.list_all("v1", "Pod", namespace)
        assert len(pods) == 150
        per_cluster: dict[str, int] = {}
        for p in pods:
            c = p["metadata"]["labels"]["ray.io/cluster"]
            per_cluster[c] = per_cluster.get(c, 0) + 1
        assert per_cluster == {n: 3 for n in names}
