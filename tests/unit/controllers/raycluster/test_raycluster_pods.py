"""reconcile_pods against an in-memory world: scale-down with pods stuck terminating,
replica indices, multi-host takeover, delete/patch failures, expectation housekeeping."""

from __future__ import annotations

import copy

import pytest

from kuberay.api.v1 import constants as C
from kuberay.controllers.raycluster.pods import PodReconciler
from kuberay.controllers.raycluster.reconciler import RayClusterReconciler
from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.reconcile import Expectations, Request
from tests.unit.controllers.raycluster.pods_world import (
    NS,
    TTL,
    Harness,
    deletes,
    new_cluster,
    three_workers,
)


async def test_stuck_victim_past_the_expectation_ttl_costs_no_healthy_worker() -> None:
    h = await three_workers()
    for p in h.world.workers():
        h.world.hold(p["metadata"]["name"])
    h.group()["replicas"] = 2
    await h.reconcile()
    assert len(deletes(h)) == 1
    victim = deletes(h)[0]
    survivors = {p["metadata"]["name"] for p in h.world.workers()}
    assert len(survivors) == 2
    # Far past the expectation TTL, the victim is still terminating.
    await h.reconcile(5, tick=TTL)
    assert deletes(h) == [victim]
    assert {p["metadata"]["name"] for p in h.world.workers()} == survivors
    # Once it is gone nothing else is deleted or created.
    h.world.release(victim)
    writes = len(h.world.writes)
    await h.reconcile(3, tick=1)
    assert len(h.world.writes) == writes
    assert {p["metadata"]["name"] for p in h.world.workers()} == survivors


async def test_worker_deleted_by_someone_else_stands_in_for_the_victim() -> None:
    h = await three_workers()
    gone = h.world.workers()[1]["metadata"]["name"]
    h.world.terminate(gone)
    h.group()["replicas"] = 2
    await h.reconcile(3, tick=TTL)
    assert deletes(h) == []  # the terminating pod is the victim; no call is needed
    assert len(h.world.workers()) == 2
    h.world.release(gone)
    await h.reconcile(3, tick=1)
    assert deletes(h) == []
    assert len(h.world.workers()) == 2


async def test_terminating_pod_still_counts_so_no_replacement_doubles_up() -> None:
    h = await three_workers()
    h.world.terminate(h.world.workers()[0]["metadata"]["name"])
    writes = len(h.world.writes)
    await h.reconcile(3, tick=TTL)
    assert len(h.world.writes) == writes  # as KubeRay: replaced once it is gone
    assert len(h.world.workers()) == 2


async def test_terminating_pod_named_in_workers_to_delete() -> None:
    h = await three_workers()
    named = h.world.workers()[0]["metadata"]["name"]
    h.world.terminate(named)
    h.group()["replicas"] = 2
    h.group()["scaleStrategy"] = {"workersToDelete": [named]}
    await h.reconcile(4, tick=TTL)
    assert deletes(h) == []
    assert len(h.world.workers()) == 2
    h.world.release(named)
    await h.reconcile(3, tick=1)
    assert deletes(h) == []
    assert len(h.world.workers()) == 2


async def test_new_worker_never_reuses_the_index_of_a_terminating_pod() -> None:
    h = await three_workers()
    by_index = {
        p["metadata"]["labels"][C.RAY_WORKER_REPLICA_INDEX_KEY]: p for p in h.world.workers()
    }
    assert sorted(by_index) == ["0", "1", "2"]
    h.world.terminate(by_index["1"]["metadata"]["name"])
    h.group()["replicas"] = 4
    await h.reconcile()
    indices = sorted(
        p["metadata"]["labels"][C.RAY_WORKER_REPLICA_INDEX_KEY] for p in h.world.workers()
    )
    assert indices == ["0", "2", "3"]


async def test_scale_down_then_unchanged_world_makes_zero_writes() -> None:
    h = await three_workers()
    h.group()["replicas"] = 1
    await h.reconcile(2)
    assert len(h.world.workers()) == 1
    writes = len(h.world.writes)
    await h.reconcile(3, tick=TTL)
    assert len(h.world.writes) == writes


def legacy_multi_host_pods(h: Harness, replicas: int, hosts: int) -> list[str]:
    """Worker pods as a KubeRay before replica names made them: no replica-name label,
    the replica index label holding a name."""
    names = []
    for r in range(replicas):
        for host in range(hosts):
            name = f"rc-tpu-worker-legacy{r}{host}"
            h.world.pods[name] = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": NS,
                    "uid": f"uid-{name}",
                    "labels": {
                        C.RAY_CLUSTER_LABEL_KEY: "rc",
                        C.RAY_NODE_TYPE_LABEL_KEY: C.WORKER_NODE,
                        C.RAY_NODE_GROUP_LABEL_KEY: "small-group",
                        C.RAY_WORKER_REPLICA_INDEX_KEY: f"small-group-legacy{r}",
                    },
                },
                "status": {"phase": "Running"},
            }
            names.append(name)
    return names


async def test_multi_host_takeover_leaves_pods_without_replica_name() -> None:
    h = Harness(new_cluster(replicas=1))
    h.group()["numOfHosts"] = 2
    legacy = legacy_multi_host_pods(h, replicas=1, hosts=2)
    await h.reconcile(4, tick=TTL)
    assert deletes(h) == []
    assert all(n in h.world.pods for n in legacy)


async def test_multi_host_victims_prefer_terminating_replicas() -> None:
    h = Harness(new_cluster(replicas=3))
    h.group()["numOfHosts"] = 2
    await h.converge()
    assert len(h.world.workers()) == 6
    by_replica: dict[str, list[str]] = {}
    for p in h.world.workers():
        rn = p["metadata"]["labels"][C.RAY_WORKER_REPLICA_NAME_KEY]
        by_replica.setdefault(rn, []).append(p["metadata"]["name"])
    going = next(iter(by_replica))
    for name in by_replica[going]:
        h.world.terminate(name)
    h.group()["replicas"] = 2
    await h.reconcile(3, tick=TTL)
    assert deletes(h) == []
    assert len(h.world.workers()) == 4


async def test_suspended_group_delete_failure_event_reason() -> None:
    h = await three_workers()
    h.world.fail_delete = {h.world.workers()[0]["metadata"]["name"]}
    h.group()["suspend"] = True
    with pytest.raises(ReconcileError):
        await PodReconciler(h.ctx, copy.deepcopy(h.cluster)).run()
    assert ("Warning", "FailedToDeleteWorkerPodCollection") in {
        (e[0], e[1]) for e in h.world.events
    }


async def test_pods_suspended_before_any_pass_observed_them_do_not_hold_the_resume() -> None:
    """Suspension deletes pods without reaching the groups' reconcile: their creations
    must still count as observed, or the resumed cluster waits out the expectation TTL."""
    h = Harness(new_cluster(replicas=2))
    await h.reconcile()  # head + 2 workers created; no later pass has observed them
    assert len(h.world.pods) == 3
    h.cluster["spec"]["suspend"] = True
    h.cluster["status"] = {"conditions": [{"type": "RayClusterSuspending", "status": "True"}]}
    await h.reconcile()
    assert h.world.pods == {}
    h.cluster["spec"]["suspend"] = False
    h.cluster["status"] = {}
    await h.reconcile(tick=1)  # well within the TTL
    assert len(h.world.workers()) == 2
    assert len(h.world.pods) == 3


async def test_failed_recreate_restamp_does_not_abort_the_pass() -> None:
    h = Harness(new_cluster(replicas=1, upgradeStrategy={"type": "Recreate"}))
    await h.converge()
    head = next(
        p
        for p in h.world.pods.values()
        if p["metadata"]["labels"][C.RAY_NODE_TYPE_LABEL_KEY] == C.HEAD_NODE
    )
    head["metadata"]["annotations"][C.KUBERAY_VERSION_ANNOTATION_KEY] = "v0.0.1-older"
    h.group()["replicas"] = 2
    h.world.fail_patch = True
    await PodReconciler(h.ctx, copy.deepcopy(h.cluster)).run()  # no exception
    assert len(h.world.workers()) == 2  # the pass went on to the workers
    assert head["metadata"]["name"] in h.world.pods
    assert deletes(h) == []


async def test_expectations_of_removed_groups_are_dropped() -> None:
    h = await three_workers()
    stale = "removed-group"
    h.ctx.expectations.expect_deletions(f"{NS}/rc/{stale}", ["x"])
    h.ctx.expectations.expect_deletions(f"{NS}/other/{stale}", ["x"])
    await h.reconcile()
    assert h.ctx.expectations.pending(f"{NS}/rc/{stale}") == (frozenset(), frozenset())
    assert h.ctx.expectations.pending(f"{NS}/other/{stale}") == (frozenset(), frozenset({"x"}))


async def test_deleted_cluster_drops_every_group_expectation() -> None:
    h = Harness(new_cluster())
    for key in (f"{NS}/rc/", f"{NS}/rc/small-group", f"{NS}/rc-2/small-group"):
        h.ctx.expectations.expect_deletions(key, ["x"])
    await RayClusterReconciler(h.ctx).reconcile(Request(NS, "rc"))  # not in the cache
    assert h.ctx.expectations.owners(f"{NS}/") == [f"{NS}/rc-2/small-group"]


def test_deletions_never_expire_creations_do() -> None:
    now = [0.0]
    e = Expectations(ttl=30, now=lambda: now[0])
    e.expect_deletions("k", ["old"])
    e.expect_creations("k", ["new"])
    now[0] = 1000.0
    assert not e.satisfied("k")
    assert e.pending("k") == (frozenset(), frozenset({"old"}))
    e.observe("k", lambda n: n == "old")  # still in the cache
    assert not e.satisfied("k")
    e.observe("k", lambda n: False)  # gone
    assert e.satisfied("k")


def test_creations_expire_one_by_one() -> None:
    now = [0.0]
    e = Expectations(ttl=30, now=lambda: now[0])
    e.expect_creations("k", ["a"])
    now[0] = 20.0
    e.expect_creations("k", ["b"])  # does not refresh "a"
    now[0] = 31.0
    assert not e.satisfied("k")
    assert e.pending("k") == (frozenset({"b"}), frozenset())
    now[0] = 51.0
    assert e.satisfied("k")


def test_delete_prefix() -> None:
    e = Expectations()
    for key in ("ns/a/", "ns/a/g1", "ns/ab/g1", "other/a/g1"):
        e.expect_deletions(key, ["x"])
    e.delete_prefix("ns/a/")
    assert sorted(e.owners()) == ["ns/ab/g1", "other/a/g1"]
