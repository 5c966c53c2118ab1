"""Condition ``PodTemplateApplied``: what a pod's template hash covers, which pods count as
outdated, the condition's text, and that no pod is restarted for it."""

from __future__ import annotations

import copy
from typing import Any

from kuberay.api.v1 import constants as C
from kuberay.controllers.raycluster.status import calculate_status, status_changed
from kuberay.controllers.raycluster.templates import (
    HEAD,
    GroupTemplates,
    outdated_groups,
    set_template_condition,
    template_hash,
    template_message,
)
from tests.unit.controllers.raycluster.pods_world import TTL, Harness, new_cluster

Obj = dict[str, Any]
NOW = "2026-01-01T00:00:00Z"
HEAD_SERVICE = {"metadata": {"name": "rc-head-svc"}, "spec": {"clusterIP": "10.0.0.1"}}


def worker_group(rc: Obj) -> Obj:
    group: Obj = rc["spec"]["workerGroupSpecs"][0]
    return group


def worker_container(rc: Obj) -> Obj:
    container: Obj = worker_group(rc)["template"]["spec"]["containers"][0]
    return container


# ----- the hash -----------------------------------------------------------------------------
def test_scaling_and_scheduling_edits_keep_the_hash() -> None:
    rc = new_cluster()
    before = template_hash(rc, worker_group(rc))
    edited = copy.deepcopy(rc)
    group = worker_group(edited)
    group.update(replicas=1, minReplicas=1, maxReplicas=9, suspend=True, idleTimeoutSeconds=60)
    group["scaleStrategy"] = {"workersToDelete": ["x"]}
    group["template"]["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    group["template"]["spec"]["schedulingGates"] = [{"name": "kueue"}]
    edited["spec"].update(
        suspend=True,
        upgradeStrategy={"type": "None"},
        headServiceAnnotations={"a": "b"},
        networkPolicy={"mode": "DenyAll"},
    )
    edited["spec"]["headGroupSpec"]["rayStartParams"] = {"num-cpus": "0"}  # another group
    assert template_hash(edited, worker_group(edited)) == before


def test_template_and_cluster_wide_edits_change_the_hash() -> None:
    rc = new_cluster()
    before = template_hash(rc, worker_group(rc))
    edits = [
        lambda r: worker_container(r).update(image="rayproject/ray:2.53.0"),
        lambda r: worker_container(r).update(env=[{"name": "A", "value": "1"}]),
        lambda r: worker_group(r)["rayStartParams"].update({"num-cpus": "2"}),
        lambda r: worker_group(r)["template"].setdefault("metadata", {}).update(labels={"a": "b"}),
        lambda r: r["spec"].update(rayVersion="2.53.0"),
        lambda r: r["spec"].update(enableInTreeAutoscaling=True),
    ]
    for edit in edits:
        edited = copy.deepcopy(rc)
        edit(edited)
        assert template_hash(edited, worker_group(edited)) != before


def test_head_service_and_ingress_settings_keep_the_head_hash() -> None:
    rc = new_cluster()
    before = template_hash(rc, rc["spec"]["headGroupSpec"])
    edited = copy.deepcopy(rc)
    edited["spec"]["headGroupSpec"].update(
        serviceType="NodePort",
        enableIngress=True,
        headService={"metadata": {"name": "rc-head-svc"}, "spec": {"type": "NodePort"}},
    )
    assert template_hash(edited, edited["spec"]["headGroupSpec"]) == before


def test_the_heads_address_reaches_every_groups_hash() -> None:
    rc = new_cluster()
    before = template_hash(rc, worker_group(rc))
    renamed = copy.deepcopy(rc)
    renamed["spec"]["headGroupSpec"]["headService"] = {"metadata": {"name": "elsewhere"}}
    moved = copy.deepcopy(rc)
    moved["spec"]["headGroupSpec"]["rayStartParams"] = {"port": "6380"}
    for edited in (renamed, moved):
        assert template_hash(edited, worker_group(edited)) != before


def test_appending_a_group_keeps_the_other_groups_hashes() -> None:
    # A RayService's in-place update appends groups: the pods already there stay current.
    rc = new_cluster()
    before = template_hash(rc, worker_group(rc))
    rc["spec"]["workerGroupSpecs"].append({**copy.deepcopy(worker_group(rc)), "groupName": "g2"})
    assert template_hash(rc, worker_group(rc)) == before


def test_the_hash_ignores_key_order() -> None:
    rc = new_cluster()
    shuffled = copy.deepcopy(rc)
    shuffled["spec"] = dict(reversed(list(shuffled["spec"].items())))
    group = worker_group(shuffled)
    shuffled["spec"]["workerGroupSpecs"][0] = dict(reversed(list(group.items())))
    assert template_hash(shuffled, worker_group(shuffled)) == template_hash(rc, worker_group(rc))


# ----- outdated pods ------------------------------------------------------------------------
def pod(name: str, group: str, stamp: str | None, *, terminating: bool = False) -> Obj:
    node_type = C.HEAD_NODE if group == HEAD else C.WORKER_NODE
    labels = {
        C.RAY_CLUSTER_LABEL_KEY: "rc",
        C.RAY_NODE_TYPE_LABEL_KEY: node_type,
        C.RAY_NODE_GROUP_LABEL_KEY: group or "headgroup",
    }
    meta: Obj = {"name": name, "labels": labels}
    if stamp is not None:
        meta["annotations"] = {C.POD_TEMPLATE_HASH_KEY: stamp}
    if terminating:
        meta["deletionTimestamp"] = NOW
    return {"metadata": meta}


def test_outdated_counts_per_group() -> None:
    rc = new_cluster()
    head_now = template_hash(rc, rc["spec"]["headGroupSpec"])
    worker_now = template_hash(rc, worker_group(rc))
    pods = [
        pod("h", HEAD, "old-head"),
        pod("w1", "small-group", "old"),
        pod("w2", "small-group", worker_now),
        pod("w3", "small-group", None),  # made by KubeRay: counted, never outdated
        pod("w4", "small-group", "old", terminating=True),  # going: not judged
        pod("r1", "removed-group", "old"),  # not in the spec: not judged
    ]
    assert outdated_groups(rc, pods) == [
        GroupTemplates(HEAD, 1, 1),
        GroupTemplates("small-group", 1, 3),
    ]
    pods[0] = pod("h", HEAD, head_now)
    assert outdated_groups(rc, pods) == [GroupTemplates("small-group", 1, 3)]


def test_the_message_names_each_group_with_outdated_and_total() -> None:
    groups = [GroupTemplates(HEAD, 1, 1), GroupTemplates("gpu", 2, 3)]
    assert template_message(groups) == (
        "Pods run an older template of their group (outdated/total): head group 1/1, "
        "worker group gpu 2/3"
    )


def test_condition_false_while_outdated_absent_otherwise_and_under_recreate() -> None:
    rc = new_cluster()
    stale = [pod("w1", "small-group", "old")]
    conditions: list[Obj] = []
    set_template_condition(conditions, rc, stale, NOW)
    assert conditions == [
        {
            "type": "PodTemplateApplied",
            "status": "False",
            "reason": "PodsRunOlderTemplate",
            "message": "Pods run an older template of their group (outdated/total): "
            "worker group small-group 1/1",
            "lastTransitionTime": NOW,
        }
    ]
    current = [pod("w1", "small-group", template_hash(rc, worker_group(rc)))]
    set_template_condition(conditions, rc, current, NOW)
    assert conditions == []
    rc["spec"]["upgradeStrategy"] = {"type": "Recreate"}
    set_template_condition(conditions, rc, stale, NOW)
    assert conditions == []


# ----- through reconcile_pods and the status ------------------------------------------------
def status_of(h: Harness) -> Obj:
    pods = list(h.world.pods.values())
    status = calculate_status(
        h.cluster, pods, HEAD_SERVICE, reconcile_error=None, status_conditions_enabled=True, now=NOW
    )
    h.cluster["status"] = status
    return status


def template_condition(status: Obj) -> Obj | None:
    for c in status.get("conditions") or []:
        if c["type"] == "PodTemplateApplied":
            return c
    return None


async def test_a_template_edit_is_reported_and_restarts_nothing() -> None:
    h = Harness(new_cluster(replicas=3))
    await h.converge()
    assert all(
        C.POD_TEMPLATE_HASH_KEY in p["metadata"]["annotations"] for p in h.world.pods.values()
    )
    assert template_condition(status_of(h)) is None

    worker_container(h.cluster)["image"] = "rayproject/ray:2.53.0"
    writes = len(h.world.writes)
    await h.reconcile(3, tick=TTL)
    assert len(h.world.writes) == writes  # as KubeRay: no pod is restarted
    status = status_of(h)
    found = template_condition(status)
    assert found is not None and found["status"] == "False"
    assert found["message"].endswith("worker group small-group 3/3")
    # Stable: an unchanged world computes the same status (no write).
    assert not status_changed(status, status_of(h))

    # The user deletes one pod: its replacement runs the new template.
    victim = h.world.workers()[0]["metadata"]["name"]
    h.world.release(victim)
    await h.reconcile(2, tick=TTL)
    found = template_condition(status_of(h))
    assert found is not None and found["message"].endswith("worker group small-group 2/3")
    for p in h.world.workers():
        h.world.release(p["metadata"]["name"])
    await h.reconcile(2, tick=TTL)
    assert len(h.world.workers()) == 3
    assert template_condition(status_of(h)) is None


async def test_scaling_keeps_the_condition_absent() -> None:
    h = Harness(new_cluster(replicas=1))
    await h.converge()
    worker_group(h.cluster).update(replicas=3, maxReplicas=5)
    await h.reconcile(2, tick=TTL)
    assert len(h.world.workers()) == 3
    assert template_condition(status_of(h)) is None
