"""Spec changes under running pods, where this operator goes beyond KubeRay: a worker group
removed from the spec leaves nothing behind (KubeRay #1739), and a template edit is no
longer silent (KubeRay #3905, #787)."""

from __future__ import annotations

import copy
from typing import Any

from kuberay.kube import Client
from kuberay.reconcile import Request
from tests.helpers import eventually, wait_quiet
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import (
    condition,
    events_for,
    get_cluster,
    pods_of,
    raycluster,
    wait_observed,
    wait_status,
)

WORKER = {"ray.io/node-type": "worker"}


def with_group(body: dict[str, Any], name: str, replicas: int) -> dict[str, Any]:
    groups = body["spec"]["workerGroupSpecs"]
    groups.append({**copy.deepcopy(groups[0]), "groupName": name, "replicas": replicas})
    return body


async def pod_names(client: Client, ns: str, cluster: str, **labels: str) -> set[str]:
    return {p["metadata"]["name"] for p in await pods_of(client, ns, cluster, **labels)}


async def test_removed_worker_group_leaves_nothing_behind(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    ns = namespace
    await kclient.create(with_group(raycluster("shrink", ns, replicas=1), "extra", 2))
    # Another cluster with a group of the same name: never this cluster's business.
    await kclient.create(with_group(raycluster("bystander", ns, replicas=0), "extra", 1))

    async def counted() -> bool:
        mine = await pod_names(kclient, ns, "shrink")
        theirs = await pod_names(kclient, ns, "bystander")
        return len(mine) == 4 and len(theirs) == 2

    await eventually(counted, timeout=60, message="both clusters' pods")
    await wait_observed(operator, ns, "shrink")
    extra = await pod_names(kclient, ns, "shrink", **{"ray.io/group": "extra"})
    kept = await pod_names(kclient, ns, "shrink") - extra
    bystanders = await pod_names(kclient, ns, "bystander")

    rc = await get_cluster(kclient, ns, "shrink")
    groups = [g for g in rc["spec"]["workerGroupSpecs"] if g["groupName"] != "extra"]
    await kclient.patch(
        "ray.io/v1", "RayCluster", "shrink", {"spec": {"workerGroupSpecs": groups}}, ns
    )

    async def removed() -> bool:
        return await pod_names(kclient, ns, "shrink") == kept

    await eventually(removed, timeout=60, message="the removed group's pods deleted")
    assert await pod_names(kclient, ns, "bystander") == bystanders

    async def event() -> dict[str, Any] | None:
        found = [
            e
            for e in await events_for(kclient, ns, "shrink")
            if e["reason"] == "WorkerGroupRemoved"
        ]
        return found[0] if found else None

    said = await eventually(event, timeout=60, message="WorkerGroupRemoved Event")
    assert said["type"] == "Normal"
    assert said["message"].startswith(
        f"Deleted 2 Pods of worker group extra of RayCluster {ns}/shrink"
    )

    # Nothing left to do: passes write nothing.
    await wait_quiet(lambda: kclient.stats.writes, quiet=3.0, timeout=60, message="writes")
    await operator.reconciler.ctx.recorder.flush()
    before = kclient.stats.writes
    for _ in range(3):
        await operator.reconciler.reconcile(Request(ns, "shrink"))
    await operator.reconciler.ctx.recorder.flush()
    assert kclient.stats.writes == before
    assert await pod_names(kclient, ns, "shrink") == kept


def template_condition(rc: dict[str, Any]) -> dict[str, Any] | None:
    return condition(rc, "PodTemplateApplied")


async def test_template_edit_is_reported_until_the_pods_are_rolled(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    ns = namespace
    await kclient.create(raycluster("edited", ns, replicas=2))

    async def two() -> set[str] | None:
        found = await pod_names(kclient, ns, "edited", **WORKER)
        return found if len(found) == 2 else None

    workers = await eventually(two, timeout=60, message="2 workers")
    await wait_observed(operator, ns, "edited")
    rc = await wait_status(
        kclient, ns, "edited", lambda rc: bool(rc.get("status")), message="a status"
    )
    assert template_condition(rc) is None

    groups = rc["spec"]["workerGroupSpecs"]
    groups[0]["template"]["spec"]["containers"][0]["env"] = [{"name": "EDITED", "value": "1"}]
    await kclient.patch(
        "ray.io/v1", "RayCluster", "edited", {"spec": {"workerGroupSpecs": groups}}, ns
    )

    def says(counts: str) -> Any:
        def check(rc: dict[str, Any]) -> bool:
            found = template_condition(rc)
            assert found is not None, "no PodTemplateApplied condition"
            assert found["status"] == "False" and found["reason"] == "PodsRunOlderTemplate"
            assert found["message"].endswith(f"worker group small-group {counts}"), found
            return True

        return check

    await wait_status(kclient, ns, "edited", says("2/2"), message="2/2 outdated")
    # As KubeRay: nothing is restarted for it, and the condition holds still: passes over
    # an unchanged world write nothing.
    await wait_quiet(lambda: kclient.stats.writes, quiet=3.0, timeout=60, message="writes")
    before = kclient.stats.writes
    for _ in range(3):
        await operator.reconciler.reconcile(Request(ns, "edited"))
    await operator.reconciler.ctx.recorder.flush()
    assert kclient.stats.writes == before
    assert await pod_names(kclient, ns, "edited", **WORKER) == workers

    # Deleting a pod rolls it: its replacement runs the new template.
    first, second = sorted(workers)
    await kclient.delete("v1", "Pod", first, ns)
    await wait_status(kclient, ns, "edited", says("1/2"), message="1/2 outdated")
    await kclient.delete("v1", "Pod", second, ns)
    await wait_status(
        kclient,
        ns,
        "edited",
        lambda rc: template_condition(rc) is None,
        message="PodTemplateApplied gone once every pod is current",
    )
    assert not (await pod_names(kclient, ns, "edited", **WORKER)) & workers
