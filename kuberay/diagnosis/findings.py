"""What ``kubectl ray why`` works with: a :class:`Snapshot` of what the API showed, the
:class:`Finding` s the rules produce, the :class:`Diagnosis` verdict, and the checks
shared by every kind (deletion held by finalizers, Warning Events, pod states)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from kuberay.diagnosis.conditions import find_condition, pod_ready
from kuberay.gocompat.gotime import parse_rfc3339_or_none
from kuberay.kube import objects as k8s

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

ERROR, WARNING, INFO = "error", "warning", "info"
#: Events older than this are not "recent".
RECENT_EVENT_SECONDS = 3600.0
#: Container waiting reasons that are only a normal step of starting.
_BENIGN_WAITING = {"ContainerCreating", "PodInitializing"}


@attrs.define
class Finding:
    """One observation: ``severity`` error|warning|info, a machine ``reason``, the
    ``object`` it is about (``Kind/name``), a human ``message`` and a ``hint``."""

    severity: str
    reason: str
    object: str
    message: str
    hint: str = ""

    def as_dict(self) -> Obj:
        """JSON form."""
        return attrs.asdict(self)


@attrs.define
class Snapshot:
    """What the API showed about one resource."""

    obj: Obj
    pods: list[Obj] = attrs.field(factory=list)
    events: list[Obj] = attrs.field(factory=list)
    secrets: dict[str, Obj | None] = attrs.field(factory=dict)
    services: dict[str, Obj | None] = attrs.field(factory=dict)
    clusters: list[Snapshot] = attrs.field(factory=list)
    jobs: list[Obj] = attrs.field(factory=list)
    now: dt.datetime = attrs.field(factory=lambda: dt.datetime.now(dt.UTC))


@attrs.define
class Diagnosis:
    """The verdict on one resource."""

    kind: str
    namespace: str
    name: str
    ready: bool
    summary: str
    findings: list[Finding]

    def as_dict(self) -> Obj:
        """JSON form (``-o json``)."""
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "ready": self.ready,
            "summary": self.summary,
            "findings": [f.as_dict() for f in self.findings],
        }


def ref(obj: Obj) -> str:
    return f"{obj.get('kind') or 'Object'}/{(obj.get('metadata') or {}).get('name', '')}"


# ----- shared checks ---------------------------------------------------------------------
def condition_finding(
    obj: Obj,
    ctype: str,
    status: str,
    severity: str,
    default_reason: str,
    describe: Callable[[str], str],
    *,
    where: str | None = None,
    hint: str = "",
) -> list[Finding]:
    """One finding when ``obj``'s condition ``ctype`` has ``status`` ("True"/"False"), else
    none: the condition's reason (``default_reason`` when empty), about ``where`` (default
    ``ref(obj)``), its message as ``describe`` words it (given "" when it has none)."""
    cond = find_condition(obj, ctype)
    if cond is None or cond.get("status") != status:
        return []
    return [
        Finding(
            severity,
            str(cond.get("reason") or default_reason),
            ref(obj) if where is None else where,
            describe(str(cond.get("message") or "")),
            hint,
        )
    ]


def check_deletion(obj: Obj, now: dt.datetime) -> list[Finding]:
    """Deleted but held by finalizers."""
    meta = k8s.meta(obj)
    since = parse_rfc3339_or_none(meta.get("deletionTimestamp"))
    if since is None:
        return []
    finalizers = meta.get("finalizers") or []
    if not finalizers:
        return [Finding(INFO, "Deleting", ref(obj), "is being deleted")]
    waited = int((now - since).total_seconds())
    return [
        Finding(
            ERROR,
            "FinalizerBlocking",
            ref(obj),
            f"deletion requested {waited}s ago is blocked by finalizers {finalizers}",
            "the controller owning each finalizer must remove it (is the operator running?); "
            "as a last resort remove it with kubectl patch --type=json",
        )
    ]


def check_events(events: list[Obj], now: dt.datetime, limit: int = 5) -> list[Finding]:
    """Recent Warning Events (newest first, one per object and reason)."""
    seen: set[tuple[str, str]] = set()
    found: list[Finding] = []

    def when(e: Obj) -> dt.datetime:
        for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
            t = parse_rfc3339_or_none(e.get(key))
            if t is not None:
                return t
        t = parse_rfc3339_or_none(k8s.meta(e).get("creationTimestamp"))
        return t or now

    for e in sorted(events, key=when, reverse=True):
        if e.get("type") != "Warning" or (now - when(e)).total_seconds() > RECENT_EVENT_SECONDS:
            continue
        involved = e.get("involvedObject") or e.get("regarding") or {}
        ref = f"{involved.get('kind', '')}/{involved.get('name', '')}"
        key = (ref, str(e.get("reason")))
        if key in seen:
            continue
        seen.add(key)
        message = str(e.get("message") or e.get("note") or "")
        count = e.get("count") or ((e.get("series") or {}).get("count"))
        if count and int(count) > 1:
            message += f" (x{count})"
        severity = ERROR if _is_invalid_reason(str(e.get("reason"))) else WARNING
        found.append(Finding(severity, f"Event:{e.get('reason')}", ref, message))
        if len(found) >= limit:
            break
    return found


def _is_invalid_reason(reason: str) -> bool:
    return reason == "ValidationFailed" or reason.startswith("Invalid")


def check_pod(pod: Obj) -> list[Finding]:
    """Why one pod is not running and ready."""
    where = ref({"kind": "Pod", **pod})
    status = k8s.status(pod)
    found = condition_finding(
        pod,
        "PodScheduled",
        "False",
        ERROR,
        "Unschedulable",
        lambda m: f"cannot be scheduled: {m or 'no reason given'}",
        where=where,
        hint="lower the pod's resource requests, relax its nodeSelector/affinity/"
        "tolerations, or add nodes that fit",
    )
    statuses = [("init container", s) for s in status.get("initContainerStatuses") or []] + [
        ("container", s) for s in status.get("containerStatuses") or []
    ]
    for what, cs in statuses:
        state = cs.get("state") or {}
        waiting = state.get("waiting")
        last = (cs.get("lastState") or {}).get("terminated") or {}
        if waiting and waiting.get("reason") not in _BENIGN_WAITING:
            reason = str(waiting.get("reason") or "Waiting")
            message = f"{what} {cs.get('name')} is waiting: {reason}"
            if waiting.get("message"):
                message += f": {waiting['message']}"
            if last:
                message += (
                    f" (last exit: {last.get('reason') or 'Error'}, code {last.get('exitCode')})"
                )
            found.append(Finding(ERROR, reason, where, message, _waiting_hint(reason, cs)))
        terminated = state.get("terminated")
        if terminated and terminated.get("exitCode", 0) != 0:
            found.append(
                Finding(
                    ERROR,
                    str(terminated.get("reason") or "Error"),
                    where,
                    f"{what} {cs.get('name')} terminated: {terminated.get('reason') or 'Error'} "
                    f"(exit code {terminated.get('exitCode')})"
                    + (f": {terminated['message']}" if terminated.get("message") else ""),
                    "see `kubectl ray log` or `kubectl logs --previous`",
                )
            )
    if status.get("phase") == "Failed":
        found.append(
            Finding(
                ERROR,
                str(status.get("reason") or "PodFailed"),
                where,
                f"pod failed: {status.get('message') or status.get('reason') or 'unknown'}",
            )
        )
    if not found and not pod_ready(pod) and not k8s.meta(pod).get("deletionTimestamp"):
        phase = status.get("phase") or "Pending"
        if not status.get("conditions"):
            msg = "has no status yet: no scheduler/kubelet has reported on it"
        else:
            msg = f"is {phase} and not ready"
        found.append(Finding(WARNING, "PodNotReady", where, msg))
    found.extend(check_deletion({"kind": "Pod", **pod}, dt.datetime.now(dt.UTC)))
    return found


def _waiting_hint(reason: str, cs: Obj) -> str:
    if reason in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName"):
        return f"check the image name/tag ({cs.get('image')}) and registry credentials"
    if reason == "CrashLoopBackOff":
        return "the container keeps exiting; read its logs (`kubectl ray log`)"
    if reason in ("CreateContainerConfigError", "CreateContainerError"):
        return "a referenced Secret/ConfigMap or key is missing, or the container spec is invalid"
    return ""


__all__ = [
    "ERROR",
    "INFO",
    "WARNING",
    "Diagnosis",
    "Finding",
    "Snapshot",
    "check_deletion",
    "check_events",
    "check_pod",
    "condition_finding",
    "ref",
]
