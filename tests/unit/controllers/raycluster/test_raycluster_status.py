"""RayCluster status calculation (KubeRay's calculateStatus) without a cluster."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuberay.api.v1.rules import worker_group_desired_replicas
from kuberay.controllers.builders.resources import desired_resource_status
from kuberay.controllers.raycluster import conditions as cond
from kuberay.controllers.raycluster.status import (
    ReconcileError,
    all_pods_provisioned,
    calculate_status,
    go_status,
    head_pod_ready_condition,
    status_changed,
)

NOW = "2026-12-02T00:00:00Z"


def cluster(**spec_overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {
                "spec": {
                    "containers": [
                        {"name": "ray-head", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
                    ]
                }
            },
        },
        "workerGroupSpecs": [
            {
                "groupName": "small-group",
                "replicas": 3,
                "minReplicas": 0,
                "maxReplicas": 4,
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-worker",
                                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                            }
                        ]
                    }
                },
            }
        ],
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "default", "generation": 2},
        "spec": spec,
    }


def pod(
    name: str,
    node_type: str,
    phase: str = "Pending",
    ready: bool | None = None,
    ip: str | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    if ip:
        status["podIP"] = ip
    return {
        "metadata": {
            "name": name,
            "labels": {"ray.io/node-type": node_type, "ray.io/cluster": "rc"},
        },
        "status": status,
    }


HEADLESS = {
    "metadata": {"name": "rc-head-svc"},
    "spec": {
        "clusterIP": "None",
        "ports": [
            {"name": "client", "port": 10001, "targetPort": 10001},
            {"name": "dashboard", "port": 8265, "targetPort": 8265},
        ],
    },
}


def status_of(c: dict[str, Any], pods: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return calculate_status(
        c,
        pods,
        kw.pop("svc", HEADLESS),
        reconcile_error=kw.pop("err", None),
        status_conditions_enabled=kw.pop("gates", True),
        now=NOW,
        creations_pending=kw.pop("pending", False),
    )


def conds(status: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in status["conditions"]}


def test_pending_pods_initial_status() -> None:
    pods = [pod("h", "head")] + [pod(f"w{i}", "worker") for i in range(3)]
    s = status_of(cluster(), pods)
    assert s.get("state") is None
    assert (s["desiredWorkerReplicas"], s["maxWorkerReplicas"]) == (3, 4)
    # Zero counts are omitted, as Go's omitempty does in KubeRay's status.
    assert {"minWorkerReplicas", "readyWorkerReplicas", "availableWorkerReplicas"}.isdisjoint(s)
    assert s["observedGeneration"] == 2
    assert s["head"] == {"podName": "h", "serviceName": "rc-head-svc"}
    c = conds(s)
    assert c["HeadPodReady"] == ("False", "Unknown", "")
    assert c["RayClusterProvisioned"] == (
        "False",
        "RayClusterPodsProvisioning",
        "RayCluster Pods are being provisioned for first time",
    )
    assert c["RayClusterSuspended"] == ("False", "RayClusterSuspended", "")
    assert c["RayClusterSuspending"] == ("False", "RayClusterSuspending", "")
    assert "ReplicaFailure" not in c


def test_all_running_is_ready_and_headless_service_ip_is_pod_ip() -> None:
    pods = [pod("h", "head", "Running", ip="1.1.1.1")] + [
        pod(f"w{i}", "worker", "Running") for i in range(3)
    ]
    s = status_of(cluster(), pods)
    assert s["state"] == "ready"
    assert s["stateTransitionTimes"]["ready"] == NOW
    assert (s["availableWorkerReplicas"], s.get("readyWorkerReplicas")) == (3, None)
    assert s["head"]["podIP"] == "1.1.1.1" and s["head"]["serviceIP"] == "1.1.1.1"
    assert s["endpoints"] == {"client": "10001", "dashboard": "8265"}


def test_ready_needs_all_pods_and_none_not_ready() -> None:
    running = [pod("h", "head", "Running")] + [pod(f"w{i}", "worker", "Running") for i in range(2)]
    assert status_of(cluster(), running).get("state") is None  # 2 of 3 workers
    not_ready = [*running, pod("w2", "worker", "Running", ready=False)]
    assert status_of(cluster(), not_ready).get("state") is None


def test_provisioned_is_latched_and_ready_is_sticky() -> None:
    pods = [pod("h", "head", "Running", ready=True)] + [
        pod(f"w{i}", "worker", "Running", ready=True) for i in range(3)
    ]
    c = cluster()
    c["status"] = status_of(c, pods)
    assert conds(c["status"])["RayClusterProvisioned"][1] == "AllPodRunningAndReadyFirstTime"
    pods[1] = pod("w0", "worker", "Running", ready=False)
    s = status_of(c, pods, err=ReconcileError("boom"))
    assert conds(s)["RayClusterProvisioned"][0] == "True"
    assert s["state"] == "ready"  # an error never resets the state


def test_replica_failure_condition_set_and_cleared() -> None:
    c = cluster()
    err = ReconcileError('pods "x" is invalid', reason="FailedCreateHeadPod")
    c["status"] = status_of(c, [], err=err)
    assert conds(c["status"])["ReplicaFailure"] == (
        "True",
        "FailedCreateHeadPod",
        'pods "x" is invalid',
    )
    s = status_of(c, [])
    assert "ReplicaFailure" not in conds(s)


def test_head_pod_condition_reasons() -> None:
    assert head_pod_ready_condition(None) == ("False", "HeadPodNotFound", "Head Pod not found")
    ready = pod("h", "head", "Running", ready=True)
    assert head_pod_ready_condition(ready) == ("True", "HeadPodRunningAndReady", "")
    waiting = pod("h", "head", "Running")
    waiting["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "not ready"}
    ]
    waiting["status"]["containerStatuses"] = [
        {
            "name": "ray-head",
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
        }
    ]
    assert head_pod_ready_condition(waiting) == (
        "False",
        "CrashLoopBackOff",
        "not ready; ray-head: back-off",
    )


def test_suspend_state_machine() -> None:
    c = cluster(suspend=True)
    pods = [pod("h", "head", "Running")]
    c["status"] = status_of(c, pods)
    assert conds(c["status"])["RayClusterSuspending"][0] == "True"
    c["status"] = status_of(c, [])  # pods gone
    s = c["status"]
    assert s["state"] == "suspended"
    assert conds(s)["RayClusterSuspended"][0] == "True"
    assert conds(s)["RayClusterSuspending"][0] == "False"
    assert conds(s)["RayClusterProvisioned"] == (
        "False",
        "RayClusterPodsProvisioning",
        "RayCluster has been suspended",
    )
    c["spec"]["suspend"] = False
    s = status_of(c, [])
    assert conds(s)["RayClusterSuspended"][0] == "False"


def test_conditions_gate_off_has_no_conditions() -> None:
    s = status_of(cluster(suspend=True), [], gates=False)
    assert "conditions" not in s
    assert s["state"] == "suspended"


def test_desired_resources_limits_fallback_gpu_tpu() -> None:
    assert desired_resource_status(cluster()) == {
        "desiredCPU": "4",
        "desiredMemory": "4Gi",
        "desiredGPU": "0",
        "desiredTPU": "0",
    }
    c = cluster()
    res = c["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]
    res["requests"] = {"cpu": "500m"}
    res["limits"].update({"nvidia.com/gpu": "2", "google.com/tpu": "4"})
    out = desired_resource_status(c)
    assert out["desiredCPU"] == "2500m"  # requests win over limits
    assert out["desiredGPU"] == "6"
    assert out["desiredTPU"] == "12"


def test_missing_head_service_raises() -> None:
    with pytest.raises(LookupError):
        status_of(cluster(), [], svc=None)


def test_status_changed_ignores_timestamps_and_resources() -> None:
    s = status_of(cluster(), [])
    later = copy.deepcopy(s)
    later["lastUpdateTime"] = "2030-01-01T00:00:00Z"
    later["desiredCPU"] = "99"
    later["observedGeneration"] = 7
    assert not status_changed(s, later)
    later["readyWorkerReplicas"] = 1
    assert status_changed(s, later)
    cond_changed = copy.deepcopy(s)
    cond.set_condition(cond_changed["conditions"], "HeadPodReady", True, "X", "", NOW)
    assert status_changed(s, cond_changed)


@pytest.mark.parametrize(
    ("group", "want"),
    [
        ({"replicas": 5, "minReplicas": 0, "maxReplicas": 4}, 4),
        ({"minReplicas": 2, "maxReplicas": 4}, 2),
        ({"replicas": 1, "minReplicas": 2, "maxReplicas": 4}, 2),
        ({"replicas": 3, "minReplicas": 0, "maxReplicas": 4, "numOfHosts": 4}, 12),
        ({"replicas": 3, "minReplicas": 0, "maxReplicas": 4, "numOfHosts": 0}, 3),
        ({"replicas": 3, "minReplicas": 1, "maxReplicas": 4, "suspend": True}, 0),
    ],
)
def test_group_desired_replicas(group: dict[str, Any], want: int) -> None:
    assert worker_group_desired_replicas(group) == want


def test_gate_off_leaves_existing_conditions_and_writes_nothing_on_a_quiet_cluster() -> None:
    # A cluster created under the default gate carries conditions; the operator then
    # restarts with RayClusterStatusConditions=false. KubeRay leaves those conditions
    # as they are, so an unchanged cluster must not be rewritten on every pass.
    pods = [pod("h", "head", "Running", ready=True)] + [
        pod(f"w{i}", "worker", "Running", ready=True) for i in range(3)
    ]
    c = cluster()
    c["status"] = status_of(c, pods)
    before = copy.deepcopy(c["status"]["conditions"])
    s = status_of(c, pods, gates=False)
    assert s["conditions"] == before
    assert not status_changed(c["status"], s)
    # ... and a real change is still written, conditions untouched.
    pods[1] = pod("w0", "worker", "Running", ready=False)
    s2 = status_of(c, pods, gates=False)
    assert status_changed(c["status"], s2)
    assert s2["conditions"] == before


def one_worker() -> dict[str, Any]:
    c = cluster()
    c["spec"]["workerGroupSpecs"][0]["replicas"] = 1
    return c


def test_provisioned_is_false_while_the_worker_just_created_is_not_in_the_cache() -> None:
    # The pass that created head and worker sees the head Running and Ready, but the
    # cache has not delivered the worker yet (KubeRay's check: True, for good).
    head = pod("h", "head", "Running", ready=True)
    assert not all_pods_provisioned([head], [], 1, creations_pending=True)
    assert not all_pods_provisioned([head], [], 1, creations_pending=False)
    s = status_of(one_worker(), [head], pending=True)
    assert conds(s)["RayClusterProvisioned"] == (
        "False",
        "RayClusterPodsProvisioning",
        "RayCluster Pods are being provisioned for first time",
    )
    assert conds(status_of(one_worker(), [head]))["RayClusterProvisioned"][0] == "False"


def test_provisioned_waits_for_pending_creations_even_when_the_count_matches() -> None:
    pods = [pod("h", "head", "Running", ready=True), pod("w0", "worker", "Running", ready=True)]
    assert all_pods_provisioned(pods[:1], pods[1:], 1, creations_pending=False)
    assert not all_pods_provisioned(pods[:1], pods[1:], 1, creations_pending=True)
    assert conds(status_of(one_worker(), pods, pending=True))["RayClusterProvisioned"][0] == (
        "False"
    )
    s = status_of(one_worker(), pods)
    assert conds(s)["RayClusterProvisioned"][:2] == ("True", "AllPodRunningAndReadyFirstTime")
    assert s["state"] == "ready"


def test_provisioned_needs_every_desired_pod_running() -> None:
    # A ResourceQuota lets only the head and one of three workers exist: not provisioned
    # (KubeRay, judging the pods that exist, says True), and not "ready" either.
    pods = [pod("h", "head", "Running", ready=True), pod("w0", "worker", "Running", ready=True)]
    s = status_of(cluster(), pods)
    assert conds(s)["RayClusterProvisioned"][:2] == ("False", "RayClusterPodsProvisioning")
    assert s.get("state") is None
    # A worker no node can take (Pending, PodScheduled=False): not provisioned.
    pending = [pod("h", "head", "Running", ready=True), pod("w0", "worker", "Pending")]
    assert conds(status_of(one_worker(), pending))["RayClusterProvisioned"][0] == "False"
    # A pod without a Ready condition counts as ready; Ready=Unknown does not.
    no_cond = [pod("h", "head", "Running"), pod("w0", "worker", "Running")]
    assert conds(status_of(one_worker(), no_cond))["RayClusterProvisioned"][0] == "True"
    unknown = copy.deepcopy(no_cond)
    unknown[1]["status"]["conditions"] = [{"type": "Ready", "status": "Unknown"}]
    assert conds(status_of(one_worker(), unknown))["RayClusterProvisioned"][0] == "False"
    # Two heads (one being replaced) or an extra worker: not yet.
    extra = [*no_cond, pod("w1", "worker", "Running")]
    assert conds(status_of(one_worker(), extra))["RayClusterProvisioned"][0] == "False"


def test_status_is_serialised_like_kuberays_go_types() -> None:
    """omitempty: zero ints, empty strings, empty maps/lists and nulls are left out;
    ``head`` (a struct) and the desired quantities are always there."""
    old = {
        "state": "",
        "reason": "",
        "readyWorkerReplicas": 0,
        "observedGeneration": 0,
        "endpoints": {},
        "stateTransitionTimes": {},
        "conditions": [],
        "lastUpdateTime": None,
    }
    c = cluster(workerGroupSpecs=[], suspend=False)
    c["status"] = old
    svc = {"metadata": {"name": "rc-head-svc"}, "spec": {"clusterIP": "10.0.0.9"}}
    s = status_of(c, [], svc=svc, gates=False)
    assert s == {
        "observedGeneration": 2,
        "desiredCPU": "1",
        "desiredMemory": "1Gi",
        "desiredGPU": "0",
        "desiredTPU": "0",
        "head": {"serviceIP": "10.0.0.9", "serviceName": "rc-head-svc"},
        "lastUpdateTime": NOW,
    }
    assert go_status({"head": {"podIP": "", "podName": None}}) == {"head": {}}
    # What is left out compares equal to the zero value that was there before.
    assert not status_changed(old, go_status(old))
