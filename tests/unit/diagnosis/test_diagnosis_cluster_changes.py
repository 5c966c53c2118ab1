"""``why`` on a RayCluster whose spec changed under its pods: a removed worker group being
deleted, and pods that run an older template (with how to roll them)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from kuberay.api.v1 import constants as C
from kuberay.controllers.builders.hashing import ray_cluster_recreate_hash
from kuberay.controllers.raycluster.templates import template_hash
from kuberay.diagnosis.rules import Snapshot, diagnose
from kuberay.kubectl_ray.why import format_diagnosis
from tests.integration.raycluster.helpers import raycluster

NOW = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)
Obj = dict[str, Any]


def cluster() -> Obj:
    rc = raycluster("c", "ns", replicas=2)
    rc["metadata"]["uid"] = "c-uid"
    rc["status"] = {"state": "ready"}
    return rc


def pod(rc: Obj, name: str, group: str, *, stamp: str | None = None, **meta: Any) -> Obj:
    head = group == "headgroup"
    labels = {
        C.RAY_CLUSTER_LABEL_KEY: "c",
        C.RAY_NODE_GROUP_LABEL_KEY: group,
        C.RAY_NODE_TYPE_LABEL_KEY: C.HEAD_NODE if head else C.WORKER_NODE,
    }
    if stamp is None:
        spec = rc["spec"]["headGroupSpec"] if head else rc["spec"]["workerGroupSpecs"][0]
        stamp = template_hash(rc, spec)
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "labels": labels,
            "annotations": {C.POD_TEMPLATE_HASH_KEY: stamp},
            **meta,
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def reasons(snap: Snapshot) -> list[str]:
    return [f.reason for f in diagnose(snap).findings]


def test_a_current_cluster_says_nothing_about_templates_or_groups() -> None:
    rc = cluster()
    pods = [pod(rc, "h", "headgroup"), pod(rc, "w1", "small-group"), pod(rc, "w2", "small-group")]
    snap = Snapshot(obj=rc, pods=pods, now=NOW)
    assert not {"WorkerGroupRemoved", "PodsRunOlderTemplate"} & set(reasons(snap))
    assert diagnose(snap).ready


def test_a_removed_group_is_explained_while_its_pods_go() -> None:
    rc = cluster()
    pods = [
        pod(rc, "h", "headgroup"),
        pod(rc, "w1", "small-group"),
        pod(rc, "old-1", "gpu"),
        pod(rc, "old-2", "gpu", deletionTimestamp="2026-01-01T11:59:00Z"),
    ]
    d = diagnose(Snapshot(obj=rc, pods=pods, now=NOW))
    [found] = [f for f in d.findings if f.reason == "WorkerGroupRemoved"]
    assert found.severity == "info"
    assert found.message.startswith(
        "worker group gpu is no longer in spec.workerGroupSpecs: the operator deletes its "
        "2 Pods, 1 already terminating"
    )
    assert "spec.workerGroupSpecs" in found.hint
    assert d.ready  # the groups still in the spec are fine
    # Once the pods are gone, nothing is said.
    assert "WorkerGroupRemoved" not in reasons(Snapshot(obj=rc, pods=pods[:2], now=NOW))


def test_outdated_pods_say_how_to_roll_them() -> None:
    rc = cluster()
    pods = [pod(rc, "h", "headgroup"), pod(rc, "w1", "small-group"), pod(rc, "w2", "small-group")]
    edited = copy.deepcopy(rc)
    edited["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"] = "new"
    d = diagnose(Snapshot(obj=edited, pods=pods, now=NOW))
    [found] = [f for f in d.findings if f.reason == "PodsRunOlderTemplate"]
    assert found.severity == "warning"
    assert found.message.startswith(
        "2 of 2 Pods of worker group small-group run an older template of the group"
    )
    assert "spec.upgradeStrategy.type: Recreate" in found.hint
    assert "kubectl delete pod -l ray.io/cluster=c,ray.io/group=small-group" in found.hint
    assert d.ready  # running an older template is not being broken
    assert "PodsRunOlderTemplate" in format_diagnosis(d, verbose=True)


def test_an_outdated_head_names_the_head_selector() -> None:
    rc = cluster()
    pods = [pod(rc, "h", "headgroup", stamp="older")]
    [found] = [
        f
        for f in diagnose(Snapshot(obj=rc, pods=pods, now=NOW)).findings
        if f.reason == "PodsRunOlderTemplate"
    ]
    assert found.message.startswith("1 of 1 Pod of the head group")
    assert "ray.io/cluster=c,ray.io/node-type=head" in found.hint


def test_recreate_rolls_them_itself_so_why_is_silent() -> None:
    rc = cluster()
    pods = [pod(rc, "h", "headgroup", stamp="older")]
    rc["spec"]["upgradeStrategy"] = {"type": "Recreate"}
    assert "PodsRunOlderTemplate" not in reasons(Snapshot(obj=rc, pods=pods, now=NOW))


def test_a_template_edit_is_reported_once() -> None:
    # The operator's per-group finding replaces the cluster-wide SpecChangeIgnored on pods it
    # stamped; pods made by KubeRay (no template hash) still get SpecChangeIgnored.
    rc = cluster()
    recreate = {"ray.io/upgrade-strategy-recreate-hash": ray_cluster_recreate_hash(rc)}
    ours = [pod(rc, "h", "headgroup"), pod(rc, "w1", "small-group")]
    ours[0]["metadata"]["annotations"].update(recreate)
    kuberays = copy.deepcopy(ours)
    for p in kuberays:
        p["metadata"]["annotations"].pop(C.POD_TEMPLATE_HASH_KEY)
    edited = copy.deepcopy(rc)
    edited["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] = "new"
    said = reasons(Snapshot(obj=edited, pods=ours, now=NOW))
    assert "PodsRunOlderTemplate" in said and "SpecChangeIgnored" not in said
    said = reasons(Snapshot(obj=edited, pods=kuberays, now=NOW))
    assert "SpecChangeIgnored" in said and "PodsRunOlderTemplate" not in said
