"""Why a RayJob is not progressing, in words a user can act on (beyond KubeRay).

KubeRay leaves ``status.message`` empty while a RayJob waits for its cluster or its
dashboard. Here, while a RayJob is Initializing, Waiting, Running, Suspending or
Retrying and something the operator already sees in its cache explains the wait,
``status.message`` says it: the head pod cannot be scheduled (with the scheduler's
message), cannot pull its image, keeps crashing or was OOMKilled; the Ray dashboard is
unreachable or refuses the status checks (the failure's cause in one line, naming the
address: refused by the allowed networks, DNS, connection refused, timeout, TLS, 401/403,
see :func:`~kuberay.controllers.dashboard.errors.describe`); the submitter Job's pods
fail; an HTTPMode submission failed; the cluster set in ``clusterSelector`` does not exist; a
finalizer blocks the deletion of the cluster or the submitter Job.

Every such message starts with :data:`WAIT_PREFIX`, so it is recognised and cleared
once the wait is over. It is written only when it changes, and never in a terminal
state (KubeRay's own terminal messages stay as they are, but the status-check timeouts
append the last failure, see :func:`~kuberay.controllers.rayjob.machine.last_check_error`).

:func:`warning_event` says which Warning Event a status write calls for: a wait on a
failing dashboard (reason ``Dashboard<Cause>``, e.g. ``DashboardAddressNotAllowed``) or a
failure whose message names the last error. Both only when the message changes, so an
unchanged world costs neither a status nor an Event write.
"""

from __future__ import annotations

from typing import Any, Final

from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.controllers.dashboard import DashboardError, DashboardUnreachable, JobNotFound
from kuberay.controllers.dashboard.errors import describe
from kuberay.controllers.rayjob import status as S
from kuberay.controllers.rayjob.machine import World
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

WAIT_PREFIX: Final = S.WAIT_PREFIX

#: Container waiting reasons that mean "this will not start by itself".
STUCK_REASONS: Final = frozenset(
    {
        "ImagePullBackOff",
        "ErrImagePull",
        "InvalidImageName",
        "ErrImageNeverPull",
        "CrashLoopBackOff",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
    }
)

#: States in which a wait message may be shown.
WAITING_STATES: Final = frozenset({S.INITIALIZING, S.WAITING, S.RUNNING, S.SUSPENDING, S.RETRYING})


def is_wait_message(message: Any) -> bool:
    """``message`` is one of ours (not KubeRay's, not Ray's)."""
    return isinstance(message, str) and message.startswith(WAIT_PREFIX)


def _name(obj: Obj) -> str:
    meta = k8s.meta(obj)
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _clip(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def head_pod_problem(pod: Obj | None) -> str | None:
    """What keeps the head pod from running, from its status (None: nothing known)."""
    if pod is None:
        return None
    status = k8s.status(pod)
    pod_name = k8s.meta(pod).get("name")
    for cond in status.get("conditions") or []:
        if (
            cond.get("type") == "PodScheduled"
            and cond.get("status") == "False"
            and cond.get("reason") == "Unschedulable"
        ):
            return f"the head pod {pod_name} cannot be scheduled: {_clip(cond.get('message', ''))}"
    statuses = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    for cs in statuses:
        state = cs.get("state") or {}
        last = (cs.get("lastState") or {}).get("terminated") or {}
        waiting = state.get("waiting") or {}
        reason = waiting.get("reason")
        if reason in STUCK_REASONS:
            text = f"the head pod {pod_name} container {cs.get('name')} is in {reason}"
            if waiting.get("message"):
                text += f": {_clip(waiting['message'])}"
            if last.get("reason"):
                text += f" (last run ended with {last['reason']}, exit code {last.get('exitCode')})"
            return text
        terminated = state.get("terminated") or {}
        if terminated.get("reason") == "OOMKilled" or last.get("reason") == "OOMKilled":
            return (
                f"the head pod {pod_name} container {cs.get('name')} was OOMKilled; "
                "raise its memory limit"
            )
    return None


def _blocking_finalizers(obj: Obj | None, what: str) -> str | None:
    if obj is None:
        return None
    meta = k8s.meta(obj)
    if not meta.get("deletionTimestamp") or not meta.get("finalizers"):
        return None
    return (
        f"{what} {_name(obj)} is being deleted but finalizers block it: "
        f"{', '.join(meta['finalizers'])}"
    )


def _submitter_problem(job_obj: Obj | None) -> str | None:
    if job_obj is None:
        return None
    status = k8s.status(job_obj)
    failed = int(status.get("failed") or 0)
    if failed <= 0:
        return None
    return (
        f"the submitter Job {_name(job_obj)} has {failed} failed pod(s); "
        f"see kubectl logs job/{(job_obj.get('metadata') or {}).get('name')}"
    )


def dashboard_failure(status: Obj, world: World) -> DashboardError | None:
    """The failing dashboard call a Running RayJob waits on (None: none): the job lookup's
    failure (other than "no such job"), else an HTTPMode submission's."""
    if (status.get("jobDeploymentStatus") or "") != S.RUNNING:
        return None
    looked, submitted = world.job_info, world.submit
    if looked is not None and looked.error is not None:
        if not isinstance(looked.error, JobNotFound):
            return looked.error
        if submitted is not None and submitted.error is not None:
            return submitted.error
    return None


def _dashboard_wait(status: Obj, error: DashboardError) -> str:
    cluster = status.get("rayClusterName")
    if isinstance(error, DashboardUnreachable):
        return f"the Ray dashboard of RayCluster {cluster} is unreachable: {describe(error)}"
    return (
        f"the Ray dashboard of RayCluster {cluster} fails the job status checks: {describe(error)}"
    )


def wait_message(job: Obj, status: Obj, world: World, error: str | None) -> str | None:
    """The wait message for a RayJob whose next status is ``status`` (None: none)."""
    state = status.get("jobDeploymentStatus") or ""
    if state not in WAITING_STATES:
        return None
    if state in (S.SUSPENDING, S.RETRYING):
        why = _blocking_finalizers(world.cluster, "RayCluster") or _blocking_finalizers(
            world.submitter, "the submitter Job"
        )
        return WAIT_PREFIX + why if why else None
    if world.cluster is None and world.spec.uses_cluster_selector and error is not None:
        return (
            f"{WAIT_PREFIX}RayCluster {(job.get('metadata') or {}).get('namespace')}/"
            f"{status.get('rayClusterName')} set in spec.clusterSelector does not exist; "
            "create it or change the selector"
        )
    if state == S.RUNNING:
        observed = world.job_info
        if observed is None or observed.error is None:
            return None
        if not isinstance(observed.error, JobNotFound):
            head = head_pod_problem(world.head_pod)
            return WAIT_PREFIX + (head or _dashboard_wait(status, observed.error))
        mode = world.spec.submission_mode
        if (
            mode == JobSubmissionMode.HTTP_MODE
            and world.submit is not None
            and world.submit.error is not None
        ):
            failure = _clip(describe(world.submit.error))
            return f"{WAIT_PREFIX}submitting the job to the Ray dashboard failed: {failure}"
        if mode == JobSubmissionMode.K8S_JOB_MODE:
            why = _submitter_problem(world.submitter)
            if why:
                return WAIT_PREFIX + why
        head = head_pod_problem(world.head_pod)
        return WAIT_PREFIX + head if head else None
    head = head_pod_problem(world.head_pod)
    return WAIT_PREFIX + head if head else None


def overlay(job: Obj, old: Obj, new: Obj, world: World, error: str | None) -> bool:
    """Put the wait message (or clear a stale one) into ``new``; True when the message
    now differs from ``old``'s and one of the two is a wait message (a write is due)."""
    why = wait_message(job, new, world, error)
    if why is not None:
        new["message"] = why
    elif is_wait_message(new.get("message")):
        new["message"] = ""
    before, after = old.get("message") or "", new.get("message") or ""
    return before != after and (is_wait_message(before) or is_wait_message(after))


def warning_event(old: Obj, new: Obj, world: World) -> tuple[str, str] | None:
    """The Warning Event ``(reason, message)`` a status write from ``old`` to ``new`` calls
    for (None: none). Only when the message changed:

    * the RayJob gave up on a timeout and its message names the last error
      (:data:`~.status.LAST_ERROR`): reason ``new.reason``, the whole message;
    * the RayJob now waits on a failing dashboard call and its wait message names it:
      reason ``Dashboard<Cause>`` (e.g. ``DashboardAddressNotAllowed``), the wait message
      without its prefix.
    """
    before, after = old.get("message") or "", new.get("message") or ""
    if before == after or not after:
        return None
    if S.LAST_ERROR in after and not is_wait_message(after):
        return str(new.get("reason") or S.FAILED), after
    failure = dashboard_failure(new, world)
    if failure is None or not is_wait_message(after) or describe(failure) not in after:
        return None
    return failure.cause.event_reason, after.removeprefix(WAIT_PREFIX)


__all__ = [
    "STUCK_REASONS",
    "WAIT_PREFIX",
    "dashboard_failure",
    "head_pod_problem",
    "is_wait_message",
    "overlay",
    "wait_message",
    "warning_event",
]
