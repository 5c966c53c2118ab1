"""A RayJob that gives up stops its Ray job (beyond KubeRay, its #2314), as a pure step of
:func:`~kuberay.controllers.rayjob.machine.decide`.

KubeRay fails a RayJob on ``DeadlineExceeded``, ``PreRunningDeadlineExceeded``,
``SubmissionFailed``, ``JobStatusCheckTimeoutExceeded`` and ``AppFailed`` "Submitter completed
but Ray job not found" without touching the Ray job: on a cluster that is kept (no
``shutdownAfterJobFinishes``, a ``clusterSelector``, a deletion TTL or policy) it runs on, and
``jobStatus`` stays at whatever was last seen. Here, when a Ray job may be running (the RayJob
was Running, or Initializing in SidecarMode, whose head may have submitted it already; a job id;
a RayCluster not being deleted; no terminal ``jobStatus`` seen), the pass that gives up
holds its status write and returns a :data:`~.world.STOP_JOB` action instead; the reconciler
sends it through the dashboard poller (one attempt, off the worker, bounded by the dashboard
client's timeout: 2 s direct, 10 s through the apiserver proxy, and the poller's 30 s). When
its outcome is known (:attr:`~.world.World.stop`), the pass writes the failure with
``status.message`` saying what became of the job and that ``jobStatus`` is the last one
observed, and asks for the Normal (stopped, or no such job) or Warning (the stop failed) Event.

Idempotent without a status field: the stop is asked only in the pass that leaves Running (or
Initializing) for Failed, and the Event and the message come with the status write that reaches
Failed. A pass that starts from Failed never stops anything, so the stop is sent once per
give-up; an operator restarted while the stop was in flight sends it again (harmless: Ray
answers a second stop of a stopped job as such).
"""

from __future__ import annotations

from typing import Final

from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.controllers.dashboard import JobNotFound
from kuberay.controllers.dashboard.errors import describe
from kuberay.controllers.rayjob import status as S
from kuberay.controllers.rayjob.world import (
    STOP_ABSENT,
    STOP_DONE,
    STOP_FAILED,
    STOP_JOB,
    Decision,
    StopReport,
    World,
)
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

__all__ = [
    "GIVE_UP_REASONS",
    "gives_up",
    "may_be_running",
    "stop_on_give_up",
]

#: Failure reasons that give up on a Ray job that may still run (AppFailed only with
#: :data:`~.status.JOB_NOT_FOUND_AFTER_SUBMITTER`).
GIVE_UP_REASONS: Final = frozenset(
    {
        S.DEADLINE_EXCEEDED,
        S.PRE_RUNNING_DEADLINE_EXCEEDED,
        S.SUBMISSION_FAILED,
        S.STATUS_CHECK_TIMEOUT_EXCEEDED,
    }
)


def gives_up(state: str, status: Obj) -> bool:
    """The pass from ``state`` (Running or Initializing) sets ``status`` Failed for one of
    the reasons above."""
    if state not in (S.RUNNING, S.INITIALIZING) or status.get("jobDeploymentStatus") != S.FAILED:
        return False
    reason = status.get("reason")
    if reason in GIVE_UP_REASONS:
        return True
    return reason == S.APP_FAILED and status.get("message") == S.JOB_NOT_FOUND_AFTER_SUBMITTER


def may_be_running(job: Obj, state: str, status: Obj, world: World) -> bool:
    """A Ray job of this RayJob may be running where the operator can reach it: see the
    module docstring."""
    if not status.get("jobId") or world.cluster is None:
        return False
    if k8s.meta(world.cluster).get("deletionTimestamp"):
        return False  # its pods, and the job with them, are going
    if state == S.INITIALIZING and world.spec.submission_mode != JobSubmissionMode.SIDECAR_MODE:
        return False  # nothing was submitted yet
    if S.is_job_terminal(status.get("jobStatus") or ""):
        return False
    looked = world.job_info.value if world.job_info is not None else None
    return looked is None or not S.is_job_terminal(looked.status)


def _last_seen(status: Obj) -> str:
    seen = status.get("jobStatus") or ""
    return f"jobStatus {seen} is the last one observed" if seen else "no jobStatus was observed"


def _append(status: Obj, note: str) -> None:
    message = str(status.get("message") or "").rstrip()
    if not message:
        status["message"] = note
        return
    status["message"] = f"{message} {note}" if message.endswith(".") else f"{message}. {note}"


def _report(status: Obj, world: World) -> tuple[str, StopReport]:
    """(the message note, the Event) for a stop whose outcome ``world.stop`` is known."""
    assert world.stop is not None
    job_id = status.get("jobId")
    cluster = k8s.meta(world.cluster or {}).get("name")
    seen = _last_seen(status)
    error = world.stop.error
    if error is None:
        return f"Stopped Ray job {job_id}; {seen}.", StopReport(
            STOP_DONE,
            f"Stopped Ray job {job_id} on RayCluster {cluster}: the RayJob gave up on it",
        )
    if isinstance(error, JobNotFound):
        return f"Ray job {job_id} was not found, nothing to stop; {seen}.", StopReport(
            STOP_ABSENT,
            f"Ray job {job_id} was not found on RayCluster {cluster}: nothing to stop",
        )
    cause = describe(error)
    said = "the same error" if cause in str(status.get("message") or "") else cause
    return f"Failed to stop Ray job {job_id}, it may still be running ({said}); {seen}.", (
        StopReport(
            STOP_FAILED,
            f"Failed to stop Ray job {job_id} on RayCluster {cluster}, it may still be "
            f"running: {cause}",
        )
    )


def stop_on_give_up(job: Obj, state: str, status: Obj, world: World, d: Decision) -> None:
    """After the pass from ``state`` decided ``status``: when it gives up on a Ray job that
    may be running, hold the write and ask for the stop (outcome unknown), or note its
    outcome in ``status.message`` and ``d.stop_report``; when it gives up on one that cannot
    be reached, only say that ``jobStatus`` is the last one observed."""
    if not gives_up(state, status):
        return
    if not may_be_running(job, state, status, world):
        if status.get("jobStatus") and not S.is_job_terminal(status["jobStatus"]):
            _append(status, f"{_last_seen(status)}.")
        return
    if world.stop is None:
        d.act(STOP_JOB, str(status["jobId"]))
        d.persist = False  # the failure is written with the stop's outcome
        return
    note, d.stop_report = _report(status, world)
    _append(status, note)
