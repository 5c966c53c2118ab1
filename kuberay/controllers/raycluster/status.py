"""RayCluster status: what KubeRay's ``calculateStatus`` computes, as a pure function.

``calculate_status(cluster, pods, head_service, ...)`` returns the new status
dict; ``status_changed(old, new)`` says whether it must be written (KubeRay's
``InconsistentRayClusterStatus``: state, reason, replica counts, endpoints,
head info and conditions; resources, observedGeneration and timestamps alone
never cause a write). Beyond KubeRay, condition ``PodTemplateApplied`` names the pods that
run an older template of their group (:mod:`.templates`). ``go_status(status)`` is the
status as KubeRay's Go types serialise it (``omitempty`` fields at their zero value left
out); every status write goes through it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import attrs

from kuberay.api.v1 import constants as C
from kuberay.api.v1.rules import (
    calculate_desired_replicas,
    calculate_max_replicas,
    calculate_min_replicas,
)
from kuberay.controllers.builders.resources import desired_resource_status
from kuberay.controllers.raycluster import conditions as cond
from kuberay.controllers.raycluster.templates import set_template_condition
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import RequeueError

READY = "ready"
SUSPENDED = "suspended"


@attrs.frozen
class ReconcileError(RequeueError):
    """A reconcile failure; ``reason`` (e.g. ``FailedCreateHeadPod``) marks the ones
    reported in the ``ReplicaFailure`` condition. Expected and retried with backoff,
    never counted as a panic."""

    message: str
    reason: str = ""

    def __str__(self) -> str:
        return self.message


def _pod_ready(pod: Obj) -> bool:
    for c in k8s.status(pod).get("conditions") or []:
        if c.get("type") == "Ready":
            return bool(c.get("status") == "True")
    return False


def all_pods_running(pods: list[Obj]) -> bool:
    """KubeRay's ``CheckAllPodsRunning``: at least one pod, every pod in phase Running,
    and no pod whose Ready condition is anything but True (a pod without a Ready
    condition counts as ready). The number of pods is not compared with the desired
    replicas: pods a ResourceQuota keeps from being created do not block it."""
    if not pods:
        return False
    for pod in pods:
        if _phase(pod) != "Running":
            return False
        for c in k8s.status(pod).get("conditions") or []:
            if c.get("type") == "Ready" and c.get("status") != "True":
                return False
    return True


def all_pods_provisioned(
    head_pods: list[Obj], worker_pods: list[Obj], desired_workers: int, creations_pending: bool
) -> bool:
    """Whether ``RayClusterProvisioned`` may turn True: every pod the cluster wants is
    in the cache and running. That is: no pod this operator created is still missing
    from the cache (``creations_pending``), the cache holds exactly one head and
    ``desired_workers`` workers, and all of them pass :func:`all_pods_running`.

    KubeRay checks only the last part, on whatever pods the cache holds: a pass that
    sees the Running head but not yet the worker it has just created (or a worker a
    ResourceQuota refused) turns the condition True, and it never goes back."""
    if creations_pending or len(head_pods) != 1 or len(worker_pods) != desired_workers:
        return False
    return all_pods_running(head_pods + worker_pods)


def _phase(pod: Obj) -> str:
    return str(k8s.status(pod).get("phase") or "")


def _node_type(pod: Obj) -> str:
    return str((k8s.meta(pod).get("labels") or {}).get(C.RAY_NODE_TYPE_LABEL_KEY, ""))


def head_pod_ready_condition(head: Obj | None) -> tuple[str, str, str]:
    """(status, reason, message) of the HeadPodReady condition for ``head``."""
    if head is None:
        return "False", cond.HEAD_POD_NOT_FOUND, "Head Pod not found"
    status, reason, message = "False", cond.UNKNOWN_REASON, ""
    for c in k8s.status(head).get("conditions") or []:
        if c.get("type") != "Ready":
            continue
        status = str(c.get("status") or "False")
        message = str(c.get("message") or "")
        r = str(c.get("reason") or "")
        if status == "True" and not r:
            r = cond.HEAD_POD_RUNNING_AND_READY
        if r == "ContainersNotReady":
            for cs in k8s.status(head).get("containerStatuses") or []:
                state = cs.get("state") or {}
                detail = state.get("waiting") or state.get("terminated")
                if detail and detail.get("reason"):
                    r = str(detail["reason"])
                    if detail.get("message"):
                        message = f"{message}; {cs.get('name')}: {detail['message']}"
                    break
        if r:
            reason = r
        break
    return status, reason, message


# ----- endpoints -------------------------------------------------------------------------------
def service_endpoints(service: Obj) -> dict[str, str]:
    """Port name -> nodePort, else targetPort (int or name), as KubeRay reports them."""
    out: dict[str, str] = {}
    for port in k8s.spec(service).get("ports") or []:
        name = port.get("name")
        if not name:
            continue
        if port.get("nodePort"):
            out[name] = str(port["nodePort"])
        elif port.get("targetPort") is not None:
            out[name] = str(port["targetPort"])
        else:
            out[name] = str(port.get("port"))
    return out


# ----- the whole status ------------------------------------------------------------------------
def calculate_status(
    cluster: Obj,
    pods: Iterable[Obj],
    head_service: Obj | None,
    *,
    reconcile_error: ReconcileError | None,
    status_conditions_enabled: bool,
    now: str,
    creations_pending: bool = False,
) -> Obj:
    """The status KubeRay would write after a reconcile that ended with ``reconcile_error``.

    ``pods`` are the cluster's pods (``ray.io/cluster=<name>``) in the cache;
    ``creations_pending``: some pod created for the cluster is not in it yet (see
    :func:`all_pods_provisioned`). Raises ``LookupError`` when the head Service is
    missing (KubeRay then writes nothing).
    """
    spec = k8s.spec(cluster)
    meta = k8s.meta(cluster)
    old: Obj = k8s.status(cluster)
    new: Obj = copy.deepcopy(old)
    conditions: list[Obj] = new.setdefault("conditions", []) if status_conditions_enabled else []
    pods = list(pods)
    head_pods = [p for p in pods if _node_type(p) == C.HEAD_NODE]
    worker_pods = [p for p in pods if _node_type(p) == C.WORKER_NODE]
    head = head_pods[0] if len(head_pods) == 1 else None

    if status_conditions_enabled:
        if reconcile_error is not None and reconcile_error.reason:
            cond.set_condition(
                conditions,
                cond.RAY_CLUSTER_REPLICA_FAILURE,
                True,
                reconcile_error.reason,
                reconcile_error.message,
                now,
            )
        elif reconcile_error is None:
            cond.remove_condition(conditions, cond.RAY_CLUSTER_REPLICA_FAILURE)

    new["observedGeneration"] = meta.get("generation")
    new["readyWorkerReplicas"] = sum(
        1 for p in worker_pods if _phase(p) == "Running" and _pod_ready(p)
    )
    new["availableWorkerReplicas"] = sum(1 for p in worker_pods if _phase(p) == "Running")
    new["desiredWorkerReplicas"] = calculate_desired_replicas(cluster)
    new["minWorkerReplicas"] = calculate_min_replicas(cluster)
    new["maxWorkerReplicas"] = calculate_max_replicas(cluster)
    new.update(desired_resource_status(cluster))

    if reconcile_error is None:
        if len(pods) == new["desiredWorkerReplicas"] + 1 and all_pods_running(pods):
            if new.get("state") != READY:
                new["state"] = READY
            new["reason"] = ""
        if spec.get("suspend") and not pods:
            new["state"] = SUSPENDED
            new["reason"] = ""

    if status_conditions_enabled:
        status, reason, message = head_pod_ready_condition(head)
        cond.set_condition(conditions, cond.HEAD_POD_READY, status, reason, message, now)
        suspended = cond.is_true(conditions, cond.RAY_CLUSTER_SUSPENDED)
        if not cond.is_true(conditions, cond.RAY_CLUSTER_PROVISIONED) and not suspended:
            if all_pods_provisioned(
                head_pods, worker_pods, new["desiredWorkerReplicas"], creations_pending
            ):
                cond.set_condition(
                    conditions,
                    cond.RAY_CLUSTER_PROVISIONED,
                    True,
                    cond.ALL_POD_RUNNING_AND_READY_FIRST_TIME,
                    "All Ray Pods are ready for the first time",
                    now,
                )
            else:
                cond.set_condition(
                    conditions,
                    cond.RAY_CLUSTER_PROVISIONED,
                    False,
                    cond.RAY_CLUSTER_PODS_PROVISIONING,
                    "RayCluster Pods are being provisioned for first time",
                    now,
                )
        _suspend_conditions(conditions, spec, pods, now)
        set_template_condition(conditions, cluster, pods, now)
    if head_service is None:
        raise LookupError("head service not found")
    new["endpoints"] = service_endpoints(head_service)
    head_info: Obj = {}
    if head is not None:
        status_block = k8s.status(head)
        if status_block.get("podIP"):
            head_info["podIP"] = status_block["podIP"]
        head_info["podName"] = head["metadata"]["name"]
    svc_spec = k8s.spec(head_service)
    cluster_ip = svc_spec.get("clusterIP")
    if cluster_ip == "None":
        if head_info.get("podIP"):
            head_info["serviceIP"] = head_info["podIP"]
    elif cluster_ip:
        head_info["serviceIP"] = cluster_ip
    head_info["serviceName"] = head_service["metadata"]["name"]
    new["head"] = head_info
    if new.get("state") != old.get("state") and new.get("state"):
        times = dict(new.get("stateTransitionTimes") or {})
        times[new["state"]] = now
        new["stateTransitionTimes"] = times
    new["lastUpdateTime"] = now
    # With RayClusterStatusConditions off, conditions written earlier (e.g. while the
    # gate was on) are left exactly as they are: KubeRay neither updates nor clears them.
    return go_status(new)


#: ``RayClusterStatus`` fields tagged ``omitempty`` whose Go type can be empty
#: (string, int32/int64, map, slice, pointer): left out at their zero value.
_OMIT_EMPTY = frozenset(
    {
        "state",
        "reason",
        "lastUpdateTime",
        "stateTransitionTimes",
        "endpoints",
        "conditions",
        "readyWorkerReplicas",
        "availableWorkerReplicas",
        "desiredWorkerReplicas",
        "minWorkerReplicas",
        "maxWorkerReplicas",
        "observedGeneration",
    }
)
#: ``HeadInfo``: every field is an omitempty string.
_HEAD_OMIT_EMPTY = frozenset({"podIP", "serviceIP", "podName", "serviceName"})


def go_status(status: Obj) -> Obj:
    """``status`` as KubeRay writes it: Go's ``encoding/json`` leaves out an
    ``omitempty`` field holding its zero value (``""``, ``0``, an empty map or list, a
    nil pointer) and never writes ``null``. ``head`` is a struct, so it is always
    written (``{}`` at worst), as are the ``desired*`` quantities (``"0"``)."""
    out: Obj = {}
    for key, value in status.items():
        if value is None or (key in _OMIT_EMPTY and _is_zero(value)):
            continue
        if key == "head" and isinstance(value, dict):
            value = {
                k: v
                for k, v in value.items()
                if v is not None and not (k in _HEAD_OMIT_EMPTY and _is_zero(v))
            }
        out[key] = value
    return out


def _is_zero(value: Any) -> bool:
    return value in ("", 0) or (isinstance(value, dict | list) and not value)


def _suspend_conditions(conditions: list[Obj], spec: Obj, pods: list[Obj], now: str) -> None:
    suspending = cond.is_true(conditions, cond.RAY_CLUSTER_SUSPENDING)
    suspended = cond.is_true(conditions, cond.RAY_CLUSTER_SUSPENDED)
    if suspending and not pods:
        cond.set_condition(
            conditions,
            cond.RAY_CLUSTER_PROVISIONED,
            False,
            cond.RAY_CLUSTER_PODS_PROVISIONING,
            "RayCluster has been suspended",
            now,
        )
        cond.set_condition(
            conditions, cond.RAY_CLUSTER_SUSPENDING, False, cond.RAY_CLUSTER_SUSPENDING, "", now
        )
        cond.set_condition(
            conditions, cond.RAY_CLUSTER_SUSPENDED, True, cond.RAY_CLUSTER_SUSPENDED, "", now
        )
    elif suspended:
        if not spec.get("suspend"):
            cond.set_condition(
                conditions, cond.RAY_CLUSTER_SUSPENDED, False, cond.RAY_CLUSTER_SUSPENDED, "", now
            )
    elif not suspending:
        cond.set_condition(
            conditions, cond.RAY_CLUSTER_SUSPENDED, False, cond.RAY_CLUSTER_SUSPENDED, "", now
        )
        cond.set_condition(
            conditions,
            cond.RAY_CLUSTER_SUSPENDING,
            bool(spec.get("suspend")),
            cond.RAY_CLUSTER_SUSPENDING,
            "",
            now,
        )


_COMPARED = (
    "state",
    "reason",
    "readyWorkerReplicas",
    "availableWorkerReplicas",
    "desiredWorkerReplicas",
    "minWorkerReplicas",
    "maxWorkerReplicas",
    "endpoints",
    "head",
)


def status_changed(old: Obj, new: Obj) -> bool:
    """True when KubeRay would write ``new`` over ``old``."""
    for key in _COMPARED:
        if (old.get(key) or None) != (new.get(key) or None):
            return True
    return not cond.same_conditions(old.get("conditions") or [], new.get("conditions") or [])
