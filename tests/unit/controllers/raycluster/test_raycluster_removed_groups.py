"""A worker group removed from the spec: which pods are its (pure), and reconcile_pods
deleting them once, with one Event, never touching the head, the groups still in the spec
or another cluster's pods."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuberay.api.v1 import constants as C
from kuberay.controllers.raycluster.pods import PodReconciler
from kuberay.controllers.raycluster.removed_groups import removed_groups
from kuberay.controllers.raycluster.status import ReconcileError
from tests.unit.controllers.raycluster.pods_world import NS, TTL, Harness, deletes, new_cluster

Obj = dict[str, Any]


def pod(
    name: str,
    group: str,
    *,
    cluster: str = "rc",
    node_type: str = C.WORKER_NODE,
    owner_uid: str | None = "rc-uid",
    terminating: bool = False,
) -> Obj:
    meta: Obj = {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{name}",
        "labels": {
            C.RAY_CLUSTER_LABEL_KEY: cluster,
            C.RAY_NODE_TYPE_LABEL_KEY: node_type,
            **({C.RAY_NODE_GROUP_LABEL_KEY: group} if group else {}),
        },
    }
    if owner_uid is not None:
        meta["ownerReferences"] = [
            {"kind": "RayCluster", "name": cluster, "uid": owner_uid, "controller": True}
        ]
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        meta["finalizers"] = ["test/hold"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def two_groups(**extra: Any) -> Obj:
    rc = new_cluster(replicas=2)
    groups = rc["spec"]["workerGroupSpecs"]
    groups.append({**copy.deepcopy(groups[0]), "groupName": "extra", **extra})
    return rc


def names(pods: Any) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


# ----- which pods (pure) -------------------------------------------------------------------
def test_only_this_clusters_worker_pods_of_groups_gone_from_the_spec() -> None:
    rc = two_groups()
    del rc["spec"]["workerGroupSpecs"][1]  # "extra" removed
    pods = [
        pod("kept-1", "small-group"),
        pod("gone-b", "extra"),
        pod("gone-a", "extra"),
        pod("going", "extra", terminating=True),
        pod("head", "extra", node_type=C.HEAD_NODE),  # a head pod is never a worker
        pod("other-cluster", "extra", cluster="rc-2", owner_uid="rc-2-uid"),
        pod("foreign-owner", "extra", owner_uid="someone-else"),
        pod("no-group", ""),
        pod("unowned", "old"),  # no controller reference: labels decide
    ]
    found = removed_groups(rc, pods)
    assert [g.name for g in found] == ["extra", "old"]
    extra, old = found
    assert names(extra.live) == ["gone-a", "gone-b"]
    assert extra.terminating == ("going",)
    assert extra.total == 3
    assert names(old.live) == ["unowned"]


def test_no_removed_group_when_every_group_is_in_the_spec() -> None:
    rc = two_groups()
    assert removed_groups(rc, [pod("a", "small-group"), pod("b", "extra")]) == []


def test_a_cluster_without_worker_groups_removes_them_all() -> None:
    rc = two_groups()
    rc["spec"].pop("workerGroupSpecs")
    assert [g.name for g in removed_groups(rc, [pod("a", "small-group"), pod("b", "extra")])] == [
        "extra",
        "small-group",
    ]


# ----- reconcile_pods ----------------------------------------------------------------------
async def converged_two_groups() -> Harness:
    h = Harness(two_groups())
    await h.converge()
    assert len(h.world.workers()) == 4
    return h


def of_group(h: Harness, group: str) -> set[str]:
    return {
        p["metadata"]["name"]
        for p in h.world.workers()
        if p["metadata"]["labels"][C.RAY_NODE_GROUP_LABEL_KEY] == group
    }


def remove_extra(h: Harness) -> None:
    h.cluster["spec"]["workerGroupSpecs"] = h.cluster["spec"]["workerGroupSpecs"][:1]


async def test_removed_group_pods_are_deleted_once_with_one_event() -> None:
    h = await converged_two_groups()
    kept, extra = of_group(h, "small-group"), of_group(h, "extra")
    heads_before = {n for n, p in h.world.pods.items() if n not in kept | extra}
    # Another cluster's pods of a group named "extra" are not this cluster's.
    h.world.pods["rc-2-extra"] = pod("rc-2-extra", "extra", cluster="rc-2", owner_uid="x")
    remove_extra(h)
    h.world.events.clear()
    await h.reconcile()
    assert sorted(deletes(h)) == sorted(extra)
    assert of_group(h, "small-group") == kept
    assert heads_before <= set(h.world.pods)
    assert "rc-2-extra" in h.world.pods
    assert h.world.events == [
        (
            "Normal",
            "WorkerGroupRemoved",
            f"Deleted 2 Pods of worker group extra of RayCluster {NS}/rc: the group is no "
            "longer in spec.workerGroupSpecs",
        )
    ]
    # A second pass with nothing left makes no write and says nothing.
    writes = len(h.world.writes)
    await h.reconcile(3, tick=TTL)
    assert len(h.world.writes) == writes
    assert len(h.world.events) == 1
    assert h.ctx.expectations.owners(f"{NS}/rc/extra") == []


class StaleCache:
    """A cache stuck at one moment: the pods as they were before the deletes."""

    def __init__(self, pods: list[Obj]) -> None:
        self.pods = pods

    def list(self, *_: Any, **__: Any) -> list[Obj]:
        return copy.deepcopy(self.pods)

    def get(self, *_: Any) -> None:
        return None


async def test_a_stale_cache_never_deletes_twice() -> None:
    h = await converged_two_groups()
    before = copy.deepcopy(list(h.world.pods.values()))
    remove_extra(h)
    await h.reconcile()
    assert len(deletes(h)) == 2
    h.ctx.cache = StaleCache(before)  # type: ignore[assignment]
    await h.reconcile(3, tick=TTL)
    assert len(deletes(h)) == 2


async def test_pods_already_terminating_are_awaited_not_deleted_again() -> None:
    h = await converged_two_groups()
    extra = sorted(of_group(h, "extra"))
    for name in extra:
        h.world.terminate(name)  # someone else deleted them; a finalizer holds them
    remove_extra(h)
    h.world.events.clear()
    await h.reconcile(3, tick=TTL)
    assert deletes(h) == []
    assert h.world.events == []
    for name in extra:
        h.world.release(name)
    await h.reconcile()
    assert deletes(h) == []
    assert of_group(h, "extra") == set()


async def test_a_pod_held_terminating_holds_the_groups_expectations_until_gone() -> None:
    h = await converged_two_groups()
    first, second = sorted(of_group(h, "extra"))
    h.world.hold(first)
    remove_extra(h)
    await h.reconcile()
    assert sorted(deletes(h)) == [first, second]
    await h.reconcile(2, tick=TTL)
    assert h.ctx.expectations.pending(f"{NS}/rc/extra")[1] == frozenset({first})
    h.world.release(first)
    await h.reconcile()
    assert h.ctx.expectations.owners(f"{NS}/rc/extra") == []
    assert sorted(deletes(h)) == [first, second]


async def test_a_failed_delete_is_a_warning_and_retried() -> None:
    h = await converged_two_groups()
    first, second = sorted(of_group(h, "extra"))
    remove_extra(h)
    h.world.fail_delete = {second}
    h.world.events.clear()
    with pytest.raises(ReconcileError):
        await PodReconciler(h.ctx, copy.deepcopy(h.cluster)).run()
    assert deletes(h) == [first]
    assert [(t, r) for t, r, _ in h.world.events] == [
        ("Warning", "FailedToDeleteWorkerPod"),
        ("Normal", "WorkerGroupRemoved"),
    ]
    assert f"{NS}/{second} of worker group extra" in h.world.events[0][2]
    assert "Deleted 1 Pod of worker group extra" in h.world.events[1][2]
    h.world.fail_delete = set()
    await h.reconcile()
    assert deletes(h) == [first, second]


async def test_removing_the_group_that_suspension_emptied_changes_nothing() -> None:
    h = await converged_two_groups()
    h.cluster["spec"]["workerGroupSpecs"][1]["suspend"] = True
    await h.reconcile(2, tick=TTL)
    assert of_group(h, "extra") == set()
    writes = len(h.world.writes)
    remove_extra(h)
    await h.reconcile(2, tick=TTL)
    assert len(h.world.writes) == writes
