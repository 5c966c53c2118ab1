"""metav1.Condition helpers with apimachinery's ``SetStatusCondition`` semantics:
``lastTransitionTime`` moves only when the status flips; reason and message are
always refreshed."""

from __future__ import annotations

from typing import Any

Condition = dict[str, Any]

HEAD_POD_READY = "HeadPodReady"
RAY_CLUSTER_PROVISIONED = "RayClusterProvisioned"
RAY_CLUSTER_REPLICA_FAILURE = "ReplicaFailure"
RAY_CLUSTER_SUSPENDING = "RayClusterSuspending"
RAY_CLUSTER_SUSPENDED = "RayClusterSuspended"

UNKNOWN_REASON = "Unknown"
HEAD_POD_NOT_FOUND = "HeadPodNotFound"
HEAD_POD_RUNNING_AND_READY = "HeadPodRunningAndReady"
ALL_POD_RUNNING_AND_READY_FIRST_TIME = "AllPodRunningAndReadyFirstTime"
RAY_CLUSTER_PODS_PROVISIONING = "RayClusterPodsProvisioning"


def find(conditions: list[Condition], ctype: str) -> Condition | None:
    """The condition of type ``ctype``, or None."""
    for cond in conditions:
        if cond.get("type") == ctype:
            return cond
    return None


def is_true(conditions: list[Condition], ctype: str) -> bool:
    """True when a condition of ``ctype`` exists with status True."""
    cond = find(conditions, ctype)
    return cond is not None and cond.get("status") == "True"


def set_condition(
    conditions: list[Condition],
    ctype: str,
    status: bool | str,
    reason: str,
    message: str,
    now: str,
) -> None:
    """Add or update the condition of ``ctype`` in place."""
    status_str = status if isinstance(status, str) else ("True" if status else "False")
    existing = find(conditions, ctype)
    if existing is None:
        conditions.append(
            {
                "type": ctype,
                "status": status_str,
                "reason": reason or UNKNOWN_REASON,
                "message": message,
                "lastTransitionTime": now,
            }
        )
        return
    if existing.get("status") != status_str:
        existing["status"] = status_str
        existing["lastTransitionTime"] = now
    existing["reason"] = reason or UNKNOWN_REASON
    existing["message"] = message


def remove_condition(conditions: list[Condition], ctype: str) -> None:
    """Drop the condition of ``ctype`` if present."""
    conditions[:] = [c for c in conditions if c.get("type") != ctype]


def same_conditions(a: list[Condition], b: list[Condition]) -> bool:
    """Equal ignoring order and ``lastTransitionTime``/``observedGeneration``."""

    def key(conds: list[Condition]) -> list[tuple[str, str, str, str]]:
        return sorted(
            (
                str(c.get("type")),
                str(c.get("status")),
                str(c.get("reason")),
                str(c.get("message") or ""),
            )
            for c in conds
        )

    return key(a) == key(b)
