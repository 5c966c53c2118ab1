"""Status lookups the diagnosis rules (and ``kubectl ray``'s columns) read: a condition by
type, whether it is True, whether a pod is ready."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.kube import objects as k8s

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj


def find_condition(obj: Obj, ctype: str) -> Obj | None:
    """The status condition of ``ctype``."""
    for c in k8s.status(obj).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return None


def condition_true(obj: Obj, ctype: str) -> bool:
    """Condition ``ctype`` is status True."""
    c = find_condition(obj, ctype)
    return c is not None and c.get("status") == "True"


def pod_ready(pod: Obj) -> bool:
    """Phase Running and condition Ready True."""
    if k8s.status(pod).get("phase") != "Running":
        return False
    return condition_true(pod, "Ready")


__all__ = ["condition_true", "find_condition", "pod_ready"]
