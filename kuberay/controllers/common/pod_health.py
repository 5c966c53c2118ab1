"""Pure checks on live pods that drive KubeRay's pod reconciliation and status.

* :func:`should_delete_pod`: phase ``Failed``/``Succeeded`` -> delete; phase ``Running`` with
  the Ray container (matched by name in ``containerStatuses``) terminated -> delete only when
  ``restartPolicy: Never``; otherwise keep. Returns KubeRay's reason text.
* :func:`is_running_and_ready`: ``Running`` with ``Ready=True``.
* :func:`all_pods_running`: non-empty, every pod ``Running`` and none with ``Ready`` != True.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kuberay.gocompat.gotime import go_time_string

from .constants import RAY_CONTAINER_INDEX
from .objects import as_list, as_map, as_str, metadata, spec

__all__ = [
    "all_pods_running",
    "go_terminated_text",
    "is_running_and_ready",
    "pod_state",
    "ray_container_terminated_state",
    "should_delete_pod",
]


def ray_container_terminated_state(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``state.terminated`` of the Ray container's status, if any."""
    containers = as_list(spec(pod).get("containers"))
    if not containers:
        return None
    ray_name = as_map(containers[RAY_CONTAINER_INDEX]).get("name")
    for status in as_list(as_map(pod.get("status")).get("containerStatuses")):
        status_map = as_map(status)
        if status_map.get("name") == ray_name:
            terminated = as_map(status_map.get("state")).get("terminated")
            return terminated if isinstance(terminated, Mapping) else None
    return None


def go_terminated_text(terminated: Mapping[str, Any] | None) -> str:
    """``%v`` of a ``*corev1.ContainerStateTerminated`` in Go (its generated String()):
    ``nil`` or ``&ContainerStateTerminated{ExitCode:1,Signal:0,Reason:Error,...,}``."""
    if terminated is None:
        return "nil"
    t = terminated
    return (
        f"&ContainerStateTerminated{{ExitCode:{int(t.get('exitCode') or 0)},"
        f"Signal:{int(t.get('signal') or 0)},Reason:{as_str(t.get('reason'))},"
        f"Message:{as_str(t.get('message'))},StartedAt:{go_time_string(t.get('startedAt'))},"
        f"FinishedAt:{go_time_string(t.get('finishedAt'))},"
        f"ContainerID:{as_str(t.get('containerID'))},}}"
    )


def pod_state(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    """What KubeRay's pod-deletion Events print: (phase, restart policy, Go ``%v`` of the
    Ray container's terminated state)."""
    phase = as_str(as_map(pod.get("status")).get("phase"))
    policy = as_str(spec(pod).get("restartPolicy"))
    return phase, policy, go_terminated_text(ray_container_terminated_state(pod))


def should_delete_pod(pod: Mapping[str, Any], node_type: str) -> tuple[bool, str]:
    """KubeRay ``shouldDeletePod``: (delete?, reason)."""
    name = as_str(metadata(pod).get("name"))
    phase = as_str(as_map(pod.get("status")).get("phase"))
    restart_policy = as_str(spec(pod).get("restartPolicy"))
    if phase in ("Failed", "Succeeded"):
        return True, (
            f"The {node_type} Pod {name} status is {phase} which is a terminal state. "
            "KubeRay will delete the Pod and create new Pods in the next reconciliation "
            "if necessary."
        )
    terminated = ray_container_terminated_state(pod)
    if phase == "Running" and terminated is not None:
        if restart_policy == "Never":
            return True, (
                f"The Pod status of the {node_type} Pod {name} is {phase}, and the Ray container "
                f"terminated status is {dict(terminated)}. The container is unable to restart due "
                f"to its restart policy {restart_policy}, so KubeRay will delete it."
            )
        return False, (
            f"The Pod status of the {node_type} Pod {name} is {phase}, and the Ray container "
            f"terminated status is {dict(terminated)}. However, KubeRay will not delete the Pod "
            f"because its restartPolicy is set to {restart_policy} and it should be able to "
            "restart automatically."
        )
    return False, (
        f"KubeRay does not need to delete the {node_type} Pod {name}. The Pod status is {phase}, "
        f"and the Ray container terminated status is {terminated}."
    )


def _ready_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for condition in as_list(as_map(pod.get("status")).get("conditions")):
        cond = as_map(condition)
        if cond.get("type") == "Ready":
            return cond
    return None


def is_running_and_ready(pod: Mapping[str, Any]) -> bool:
    """KubeRay ``IsRunningAndReady``."""
    if as_map(pod.get("status")).get("phase") != "Running":
        return False
    return any(
        as_map(cond).get("type") == "Ready" and as_map(cond).get("status") == "True"
        for cond in as_list(as_map(pod.get("status")).get("conditions"))
    )


def all_pods_running(pods: Sequence[Mapping[str, Any]]) -> bool:
    """KubeRay ``CheckAllPodsRunning``."""
    if not pods:
        return False
    for pod in pods:
        status = as_map(pod.get("status"))
        if status.get("phase") != "Running":
            return False
        for condition in as_list(status.get("conditions")):
            cond = as_map(condition)
            if cond.get("type") == "Ready" and cond.get("status") != "True":
                return False
    return True
