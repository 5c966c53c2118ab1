"""RayService status rules (KubeRay ``calculateConditions``, ``InconsistentRayServiceStatuses``,
``calculateNumServeEndpointsFromSlices``), plus the words that say why a cluster's head is not
ready (beyond KubeRay, issue #5088).

Condition types, reasons and messages are KubeRay's; every condition carries
``observedGeneration`` = ``status.observedGeneration``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any, Final

from kuberay.api.v1.constants import RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION
from kuberay.controllers.common.objects import as_list, as_map, as_str
from kuberay.controllers.raycluster import conditions as cond
from kuberay.gocompat.gotime import go_duration_of_seconds
from kuberay.gocompat.goutil import go_atoi, go_duration_seconds
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.clock import parse_time

READY: Final = "Ready"
UPGRADE_IN_PROGRESS: Final = "UpgradeInProgress"
ROLLBACK_IN_PROGRESS: Final = "RollbackInProgress"
SUSPENDING: Final = "Suspending"
SUSPENDED: Final = "Suspended"
#: Beyond KubeRay: an upgrade abandoned at ``ray.io/upgrade-timeout`` (see upgrade.py).
UPGRADE_ABANDONED: Final = "UpgradeAbandoned"

INITIALIZING: Final = "Initializing"
INITIALIZING_TIMEOUT: Final = "InitializingTimeout"
ZERO_SERVE_ENDPOINTS: Final = "ZeroServeEndpoints"
NON_ZERO_SERVE_ENDPOINTS: Final = "NonZeroServeEndpoints"
BOTH_CLUSTERS: Final = "BothActivePendingClustersExist"
NO_PENDING_CLUSTER: Final = "NoPendingCluster"
NO_ACTIVE_CLUSTER: Final = "NoActiveCluster"
VALIDATION_FAILED: Final = "ValidationFailed"
SUSPEND_REQUESTED: Final = "SuspendRequested"
SUSPEND_IN_PROGRESS: Final = "SuspendInProgress"
SUSPEND_COMPLETE: Final = "SuspendComplete"
RESUMED: Final = "RayServiceResumed"

INITIALIZING_MESSAGE: Final = "RayService is initializing"
INITIALIZING_TIMEOUT_ANNOTATION: Final = RAY_SERVICE_INITIALIZING_TIMEOUT_ANNOTATION
RUNNING: Final = "Running"


def conditions_of(rs: Mapping[str, Any]) -> list[Obj]:
    """The status conditions list (created when missing; mutate it in place)."""
    status = rs["status"]
    conds = status.get("conditions")
    if not isinstance(conds, list):
        conds = []
        status["conditions"] = conds
    return conds


def set_cond(rs: Obj, ctype: str, status: bool | str, reason: str, message: str, now: str) -> None:
    """apimachinery ``SetStatusCondition`` with ``observedGeneration`` from the status."""
    conds = conditions_of(rs)
    cond.set_condition(conds, ctype, status, reason, message, now)
    found = cond.find(conds, ctype)
    assert found is not None
    found["observedGeneration"] = int(rs["status"].get("observedGeneration") or 0)


def is_true(rs: Mapping[str, Any], ctype: str) -> bool:
    return cond.is_true(list(as_list(as_map(rs.get("status")).get("conditions"))), ctype)


def find(rs: Mapping[str, Any], ctype: str) -> Obj | None:
    return cond.find(list(as_list(as_map(rs.get("status")).get("conditions"))), ctype)


def cluster_name(rs: Mapping[str, Any], which: str) -> str:
    """``activeServiceStatus`` / ``pendingServiceStatus`` ``.rayClusterName``."""
    return as_str(as_map(as_map(rs.get("status")).get(which)).get("rayClusterName"))


def parse_timeout(raw: str | None) -> float | None:
    """A Go duration (``"5m"``, ``"1h30m"``) or integer seconds (``strconv.Atoi``); None when
    absent, invalid or not positive (KubeRay ``getInitializingTimeout``; validation rejects bad
    values). Surrounding space is ignored."""
    if not raw:
        return None
    text = raw.strip()
    try:
        seconds = float(go_atoi(text))
    except ValueError:
        try:
            seconds = go_duration_seconds(text)
        except ValueError:
            return None
    return seconds if seconds > 0 else None


def go_duration(seconds: float) -> str:
    """Go ``time.Duration.String()`` of a time spent (``5s``, ``1m30s``; ``0s`` when not
    positive)."""
    return go_duration_of_seconds(max(seconds, 0.0))


def count_serve_endpoints(slices: Iterable[Mapping[str, Any]]) -> int:
    """Unique ready pods (``targetRef.uid``) across EndpointSlices (dual stack counts once)."""
    uids: set[str] = set()
    for eps in slices:
        for endpoint in as_list(eps.get("endpoints")):
            endpoint = as_map(endpoint)
            if as_map(endpoint.get("conditions")).get("ready") is not True:
                continue
            uid = as_str(as_map(endpoint.get("targetRef")).get("uid"))
            if uid:
                uids.add(uid)
    return len(uids)


def calculate_conditions(rs: Obj, now: str) -> None:
    """KubeRay ``calculateConditions`` without the initializing-timeout step (see
    :func:`initializing_timed_out`, which the reconciler runs in its place)."""
    if not conditions_of(rs):
        set_cond(rs, READY, False, INITIALIZING, INITIALIZING_MESSAGE, now)
        set_cond(rs, UPGRADE_IN_PROGRESS, False, INITIALIZING, INITIALIZING_MESSAGE, now)
    endpoints = int(rs["status"].get("numServeEndpoints") or 0)
    if endpoints > 0:
        set_cond(
            rs,
            READY,
            True,
            NON_ZERO_SERVE_ENDPOINTS,
            "Number of serve endpoints is greater than 0",
            now,
        )
    elif is_true(rs, READY):
        set_cond(
            rs, READY, False, ZERO_SERVE_ENDPOINTS, "Number of serve endpoints dropped to 0", now
        )
    active, pending = (
        cluster_name(rs, "activeServiceStatus"),
        cluster_name(rs, "pendingServiceStatus"),
    )
    if active and pending:
        set_cond(
            rs,
            UPGRADE_IN_PROGRESS,
            True,
            BOTH_CLUSTERS,
            "Both active and pending Ray clusters exist",
            now,
        )
    elif active:
        set_cond(
            rs,
            UPGRADE_IN_PROGRESS,
            False,
            NO_PENDING_CLUSTER,
            "Active Ray cluster exists and no pending Ray cluster",
            now,
        )
    else:
        found = find(rs, UPGRADE_IN_PROGRESS)
        if found is None or found.get("reason") not in (INITIALIZING, INITIALIZING_TIMEOUT):
            set_cond(
                rs,
                UPGRADE_IN_PROGRESS,
                "Unknown",
                NO_ACTIVE_CLUSTER,
                "No active Ray cluster exists, and the RayService is not initializing. Please "
                "open a GitHub issue in the KubeRay repository.",
                now,
            )


def initializing_timed_out(rs: Mapping[str, Any], now: dt.datetime) -> float | None:
    """Seconds spent initializing when ``ray.io/initializing-timeout`` is set and exceeded
    while ``Ready`` is False/Initializing; None otherwise."""
    annotations = as_map(as_map(rs.get("metadata")).get("annotations"))
    timeout = parse_timeout(as_str(annotations.get(INITIALIZING_TIMEOUT_ANNOTATION)))
    if timeout is None:
        return None
    ready = find(rs, READY)
    if ready is None or ready.get("status") != "False" or ready.get("reason") != INITIALIZING:
        return None
    since = parse_time(ready.get("lastTransitionTime"))
    if since is None:
        return None
    spent = (now - since).total_seconds()
    return spent if spent >= timeout else None


def mark_initializing_timeout(rs: Obj, spent: float, now: str) -> str:
    """KubeRay ``markFailedOnInitializingTimeout``: cluster names cleared from both service
    statuses, ``Ready=False/InitializingTimeout``; returns the Warning Event's message."""
    annotations = as_map(as_map(rs.get("metadata")).get("annotations"))
    configured = go_duration(
        parse_timeout(as_str(annotations.get(INITIALIZING_TIMEOUT_ANNOTATION))) or 0
    )
    status = rs["status"]
    for which in ("activeServiceStatus", "pendingServiceStatus"):
        block = dict(as_map(status.get(which)))
        block.pop("rayClusterName", None)
        status[which] = block
    set_cond(
        rs,
        READY,
        False,
        INITIALIZING_TIMEOUT,
        f"RayService failed to become ready within the configured timeout of {configured}. "
        f"Time spent initializing: {go_duration(spent)}",
        now,
    )
    return (
        f"RayService initializing timeout exceeded after {go_duration(spent)} "
        f"(configured timeout: {configured})"
    )


def _apps_differ(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    if len(old) != len(new):
        return True
    for name, app in new.items():
        prev = old.get(name)
        if not isinstance(prev, Mapping) or not isinstance(app, Mapping):
            return True
        if prev.get("status") != app.get("status") or (prev.get("message") or "") != (
            app.get("message") or ""
        ):
            return True
        old_deps = as_map(prev.get("serveDeploymentStatuses"))
        new_deps = as_map(app.get("serveDeploymentStatuses"))
        if len(old_deps) != len(new_deps):
            return True
        for dep_name, dep in new_deps.items():
            before = as_map(old_deps.get(dep_name)) if dep_name in old_deps else None
            if before is None or before.get("status") != as_map(dep).get("status"):
                return True
            if (before.get("message") or "") != (as_map(dep).get("message") or ""):
                return True
    return False


def _service_status_differs(
    old: Mapping[str, Any], new: Mapping[str, Any], incremental: bool
) -> bool:
    if as_str(old.get("rayClusterName")) != as_str(new.get("rayClusterName")):
        return True
    if _apps_differ(as_map(old.get("applicationStatuses")), as_map(new.get("applicationStatuses"))):
        return True
    if incremental:
        for key in ("trafficRoutedPercent", "targetCapacity", "lastTrafficMigratedTime"):
            if old.get(key) != new.get(key):
                return True
    return False


def _strip_times(conds: Any) -> list[Any]:
    return [{k: v for k, v in as_map(c).items()} for c in as_list(conds)]


def status_changed(old: Mapping[str, Any], new: Mapping[str, Any], *, incremental: bool) -> bool:
    """KubeRay ``InconsistentRayServiceStatuses``: serviceStatus, numServeEndpoints,
    conditions (exactly), and per service status the cluster name and app statuses."""
    if as_str(old.get("serviceStatus")) != as_str(new.get("serviceStatus")):
        return True
    if int(old.get("numServeEndpoints") or 0) != int(new.get("numServeEndpoints") or 0):
        return True
    if _strip_times(old.get("conditions")) != _strip_times(new.get("conditions")):
        return True
    for which in ("activeServiceStatus", "pendingServiceStatus"):
        if _service_status_differs(as_map(old.get(which)), as_map(new.get(which)), incremental):
            return True
    return False


# ----- why a head pod is not ready (beyond KubeRay) -------------------------------------------
def head_pod_problem(pod: Mapping[str, Any] | None) -> str:
    """A short account of why a head pod is not Running and Ready, from its status: the
    scheduler's message, a container's waiting/terminated reason and message, or the
    readiness condition."""
    if pod is None:
        return "the head Pod does not exist yet"
    meta = as_map(pod.get("metadata"))
    name = as_str(meta.get("name"))
    status = as_map(pod.get("status"))
    if meta.get("deletionTimestamp"):
        return f"head Pod {name} is being deleted"
    for c in as_list(status.get("conditions")):
        c = as_map(c)
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            detail = as_str(c.get("message")) or as_str(c.get("reason"))
            return f"head Pod {name} is not scheduled: {as_str(c.get('reason'))}: {detail}"
    statuses = [
        *as_list(status.get("initContainerStatuses")),
        *as_list(status.get("containerStatuses")),
    ]
    for cs in statuses:
        cs = as_map(cs)
        state = as_map(cs.get("state"))
        waiting = as_map(state.get("waiting"))
        if waiting and waiting.get("reason") not in (
            None,
            "",
            "PodInitializing",
            "ContainerCreating",
        ):
            msg = as_str(waiting.get("message"))
            tail = f": {msg}" if msg else ""
            container = as_str(cs.get("name"))
            reason = as_str(waiting.get("reason"))
            return f"head Pod {name} container {container} is waiting: {reason}{tail}"
        terminated = as_map(state.get("terminated"))
        if terminated and not cs.get("ready"):
            return (
                f"head Pod {name} container {as_str(cs.get('name'))} terminated: "
                f"{as_str(terminated.get('reason'))} (exit code {terminated.get('exitCode')})"
            )
    phase = as_str(status.get("phase")) or "Pending"
    if phase != "Running":
        return f"head Pod {name} is {phase}"
    return f"head Pod {name} is Running but not Ready"
