"""The RayJob state machine (KubeRay ``RayJobReconciler.Reconcile``'s switch) as a pure
function: ``decide(rayjob, world, settings) -> Decision``.

``World`` is everything one pass looks at, read beforehand from the informer cache and
the dashboard poller (never the network). ``Decision`` says what KubeRay would do:
the new status, the actions to run in order (creates, deletes, the finalizer), whether
the pass reaches KubeRay's status-update point (``persist``; the write itself is still
gated, see :func:`~kuberay.controllers.rayjob.status.kuberay_write_needed`), the
requeue, and an error that ends the pass after the actions without a status write.

States (``status.jobDeploymentStatus``): New -> Initializing -> Running ->
Complete/Failed, with Waiting (InteractiveMode), Suspending -> Suspended, Retrying ->
New, ValidationFailed (set by the reconciler). Terminal states hand over to
:mod:`~kuberay.controllers.rayjob.deletion`. Beyond KubeRay, a pass that gives up on a Ray job
that may still run first has it stopped (:mod:`~kuberay.controllers.rayjob.giveup`).
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from kuberay.api.v1 import constants as C
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.controllers.builders.names import head_service_name
from kuberay.controllers.dashboard import DuplicateSubmissionId, JobNotFound
from kuberay.controllers.dashboard.errors import describe
from kuberay.controllers.rayjob import status as S
from kuberay.controllers.rayjob.context import RayJobSettings
from kuberay.controllers.rayjob.deletion import after_terminal
from kuberay.controllers.rayjob.giveup import stop_on_give_up
from kuberay.controllers.rayjob.submitter import (
    check_submitter,
    fail,
    observed_after,
    sidecar_submitter_ended,
    submitter_finished,
)
from kuberay.controllers.rayjob.world import (
    ADD_FINALIZER,
    BATCH_CLEANUP,
    BATCH_CLEANUP_TERMINAL,
    BATCH_SUBMIT,
    CREATE_CLUSTER,
    CREATE_SERVICE,
    CREATE_SUBMITTER,
    DELETE_CLUSTER,
    DELETE_SELF,
    DELETE_SUBMITTER,
    STOP_JOB,
    SUBMIT_JOB,
    SUSPEND_WORKERS,
    UPDATE_SERVICE,
    WARN_CLUSTER_NOT_FOUND,
    Action,
    Decision,
    World,
)
from kuberay.controllers.rayjob.world import meta_of as _meta
from kuberay.controllers.rayjob.world import spec_of as _spec
from kuberay.featuregates.kuberay_gates import RAY_JOB_DELETION_POLICY
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.clock import format_time, parse_time


# ----- helpers --------------------------------------------------------------------------------
def _seconds_passed(start: Any, seconds: float, now: dt.datetime) -> bool:
    begin = parse_time(start)
    return begin is not None and now >= begin + dt.timedelta(seconds=seconds)


def dashboard_url(service: Obj | None, domain: str) -> str | None:
    """``<head svc>.<ns>.svc.<domain>:<port named dashboard>`` (None without that port)."""
    if service is None:
        return None
    meta = k8s.meta(service)
    for port in k8s.spec(service).get("ports") or []:
        if port.get("name") == C.DASHBOARD_PORT_NAME:
            return f"{meta.get('name')}.{meta.get('namespace')}.svc.{domain}:{port.get('port')}"
    return None


def cluster_head_service_name(cluster: Obj) -> str:
    """The head Service name KubeRay's ``FetchHeadServiceURL`` looks up."""
    return head_service_name(cluster)


# ----- shared checks --------------------------------------------------------------------------
def _to_suspending(job: Obj, status: Obj) -> bool:
    if not _spec(job).get("suspend"):
        return False
    status["jobDeploymentStatus"] = S.SUSPENDING
    return True


def _active_deadline(job: Obj, status: Obj, now: dt.datetime) -> bool:
    seconds = _spec(job).get("activeDeadlineSeconds")
    if seconds is None or not _seconds_passed(status.get("startTime"), seconds, now):
        return False
    start = parse_time(status.get("startTime"))
    assert start is not None
    fail(
        status,
        S.DEADLINE_EXCEEDED,
        "The RayJob has passed the activeDeadlineSeconds. "
        f"StartTime: {S.format_go_time(start)}. ActiveDeadlineSeconds: {seconds}",
    )
    return True


def _pre_running_deadline(job: Obj, status: Obj, now: dt.datetime) -> bool:
    seconds = _spec(job).get("preRunningDeadlineSeconds")
    if seconds is None or not _seconds_passed(status.get("startTime"), seconds, now):
        return False
    start = parse_time(status.get("startTime"))
    assert start is not None
    fail(
        status,
        S.PRE_RUNNING_DEADLINE_EXCEEDED,
        "The RayJob has passed the preRunningDeadlineSeconds. "
        f"StartTime: {S.format_go_time(start)}. PreRunningDeadlineSeconds: {seconds}",
    )
    return True


def _cluster(job: Obj, status: Obj, world: World, d: Decision) -> Obj | None:
    """KubeRay ``getOrCreateRayClusterInstance``: the cached cluster, else a create
    action (the new cluster's status is empty), else (clusterSelector) an error."""
    if world.cluster is not None:
        return world.cluster
    name = str(status.get("rayClusterName") or "")
    if world.spec.uses_cluster_selector:
        d.act(WARN_CLUSTER_NOT_FOUND, name)
        d.error = (
            f"clusterSelector mode is enabled, but RayCluster "
            f"{_meta(job).get('namespace')}/{name} is not found"
        )
        return None
    d.act(CREATE_CLUSTER, name)
    return {"metadata": {"name": name, "namespace": _meta(job).get("namespace")}, "status": {}}


# ----- states ---------------------------------------------------------------------------------
def _new(job: Obj, status: Obj, world: World, d: Decision) -> None:
    if S.RAYJOB_FINALIZER not in (_meta(job).get("finalizers") or []):
        d.act(ADD_FINALIZER)
    spec = _spec(job)
    if status.get("jobId") and status.get("rayClusterName") and status.get("jobStatus"):
        return
    if world.spec.submission_mode != JobSubmissionMode.INTERACTIVE_MODE and not status.get("jobId"):
        status["jobId"] = spec.get("jobId") or world.new_job_id
    if not status.get("rayClusterName"):
        selected = (spec.get("clusterSelector") or {}).get(C.RAY_CLUSTER_LABEL_KEY)
        status["rayClusterName"] = selected or world.new_cluster_name
    status["jobStatus"] = status.get("jobStatus") or S.JOB_NEW
    status["jobDeploymentStatus"] = S.INITIALIZING
    status["startTime"] = format_time(world.now)
    d.persist = True


def _initializing(
    job: Obj, status: Obj, world: World, settings: RayJobSettings, d: Decision
) -> None:
    d.persist = True
    if (
        _to_suspending(job, status)
        or _active_deadline(job, status, world.now)
        or _pre_running_deadline(job, status, world.now)
    ):
        return
    if settings.batch_scheduler:
        d.act(BATCH_SUBMIT)
    cluster = _cluster(job, status, world, d)
    if cluster is None:
        d.persist = False
        return
    if not status.get("dashboardURL"):
        ended_early = world.spec.submission_mode == JobSubmissionMode.SIDECAR_MODE and (
            sidecar_submitter_ended(world.head_pod)
        )
        # Beyond KubeRay (its #4945): a sidecar submitter that ended before the cluster was
        # ever ready leaves the head not Ready for good; go on and judge the job instead.
        if k8s.status(cluster).get("state") != "ready" and not ended_early:
            status["rayClusterStatus"] = copy.deepcopy(k8s.status(cluster))
            return
        url = dashboard_url(world.cluster_head_service, settings.options.cluster_domain)
        if not url:
            d.persist = False
            d.error = f"the dashboard URL of RayCluster {_meta(cluster).get('name')} is unknown"
            return
        status["dashboardURL"] = url
    mode = world.spec.submission_mode
    if mode == JobSubmissionMode.INTERACTIVE_MODE:
        status["jobDeploymentStatus"] = S.WAITING
        return
    if mode == JobSubmissionMode.K8S_JOB_MODE and world.submitter is None:
        d.act(CREATE_SUBMITTER, str(_meta(job).get("name")))
    status["jobDeploymentStatus"] = S.RUNNING


def _waiting(job: Obj, status: Obj, world: World, d: Decision) -> None:
    d.persist = True
    if _pre_running_deadline(job, status, world.now):
        return
    job_id = _spec(job).get("jobId")
    if not job_id:
        d.persist = False
        return
    status["jobId"] = job_id
    status["jobDeploymentStatus"] = S.RUNNING


def _grace_period(status: Obj, world: World, settings: RayJobSettings) -> bool:
    if not S.is_job_terminal(status.get("jobStatus") or ""):
        return False
    end = (status.get("rayJobInfo") or {}).get("endTime")
    if not end or not _seconds_passed(end, settings.grace_period_seconds, world.now):
        return False
    status["jobDeploymentStatus"] = (
        S.FAILED if status.get("jobStatus") == S.JOB_FAILED else S.COMPLETE
    )
    status["reason"] = S.GRACE_PERIOD_EXCEEDED
    status["message"] = (
        "JobDeploymentStatus does not transition to Complete or Failed within the grace "
        "period after JobStatus reaches a terminal state."
    )
    return True


def last_check_error(status: Obj, world: World) -> str | None:
    """The latest failure of the job status checks in one line, for a timeout message (None:
    none known). In order: the job lookup's failure (other than "no such job"), an HTTPMode
    submission's, the wait message the RayJob shows (it survives an operator restart, when
    no lookup has finished yet), the job lookup's "no such job"."""
    looked = world.job_info.error if world.job_info is not None else None
    submitted = world.submit.error if world.submit is not None else None
    if looked is not None and not isinstance(looked, JobNotFound):
        return describe(looked)
    if submitted is not None and not isinstance(submitted, DuplicateSubmissionId):
        return describe(submitted)
    message = status.get("message")
    if isinstance(message, str) and message.startswith(S.WAIT_PREFIX):
        return message.removeprefix(S.WAIT_PREFIX)
    return None if looked is None else describe(looked)


def _with_last_error(message: str, status: Obj, world: World) -> str:
    """KubeRay's ``message``, then (beyond KubeRay) the last status-check failure, if known."""
    last = last_check_error(status, world)
    return message if last is None else f"{message}{S.LAST_ERROR}{last}"


def _status_check_timeout(status: Obj, world: World, settings: RayJobSettings) -> bool:
    start = parse_time(status.get("jobStatusCheckFailureStartTime"))
    timeout = settings.status_check_timeout_seconds
    if start is None or world.now < start + dt.timedelta(seconds=timeout):
        return False
    message = (
        f"Job status checks have been failing since {S.format_date_time(start)}; "
        f"exceeded timeout of {int(timeout)}s"
    )
    fail(status, S.STATUS_CHECK_TIMEOUT_EXCEEDED, _with_last_error(message, status, world))
    return True


def _service(job: Obj, status: Obj, world: World, d: Decision) -> None:
    if world.spec.uses_cluster_selector:
        return
    name = f"{_meta(job).get('name')}-head-svc"
    existing = world.rayjob_service
    if existing is None:
        d.act(CREATE_SERVICE, name)
        return
    selected = (k8s.spec(existing).get("selector") or {}).get(C.RAY_CLUSTER_LABEL_KEY)
    if selected != status.get("rayClusterName"):
        d.act(UPDATE_SERVICE, name)


def _record_check_failure(status: Obj, world: World, d: Decision) -> None:
    if status.get("jobStatusCheckFailureStartTime"):
        d.persist = False
        return
    status["jobStatusCheckFailureStartTime"] = format_time(world.now)


def _resubmit(status: Obj, world: World, d: Decision) -> None:
    """KubeRay submits an HTTPMode job on every "no such job" (a submission the job has been
    lost since, e.g. with its head, is sent again under the same id): first, whatever the
    rest of the pass decides."""
    job_id = status.get("jobId")
    if (
        world.spec.submission_mode == JobSubmissionMode.HTTP_MODE
        and world.cluster is not None
        and job_id
        and world.job_info is not None
        and isinstance(world.job_info.error, JobNotFound)
    ):
        d.act(SUBMIT_JOB, str(job_id))


def _running(job: Obj, status: Obj, world: World, settings: RayJobSettings, d: Decision) -> None:
    _resubmit(status, world, d)
    d.persist = True
    if (
        _to_suspending(job, status)
        or _active_deadline(job, status, world.now)
        or _grace_period(status, world, settings)
        or _status_check_timeout(status, world, settings)
    ):
        return
    cluster = _cluster(job, status, world, d)
    if cluster is None:
        d.persist = False
        return
    _service(job, status, world, d)
    finished_at: dt.datetime | None = None
    if world.spec.has_submitter:
        failed, finished_at = check_submitter(job, status, world, settings, d)
        if d.error is not None:
            d.persist = False
            return
        if finished_at is not None and world.now >= finished_at + dt.timedelta(
            seconds=settings.submitter_finished_timeout
        ):
            message = (
                f"The RayJob submitter finished at {S.format_date_time(finished_at)} but the "
                f"ray job did not reach terminal state within "
                f"{int(settings.submitter_finished_timeout)}s"
            )
            status["jobStatus"] = S.JOB_FAILED
            fail(status, S.GRACE_PERIOD_EXCEEDED, _with_last_error(message, status, world))
            return
        if failed:
            return
    observed = world.job_info
    if observed is None:  # the first lookup has not finished: it enqueues us when it does
        d.persist = False
        return
    if observed.error is not None:
        if isinstance(observed.error, JobNotFound):
            _job_not_found(job, status, world, finished_at, d)
        else:
            _record_check_failure(status, world, d)
        return
    info = observed.value
    assert info is not None
    status.pop("jobStatusCheckFailureStartTime", None)
    terminal = S.is_job_terminal(info.status)
    if world.spec.has_submitter:
        terminal = terminal and finished_at is not None
    deployment, reason = S.RUNNING, ""
    if terminal:
        deployment = S.COMPLETE
        if info.status == S.JOB_FAILED:
            deployment, reason = S.FAILED, S.APP_FAILED
    status["rayClusterStatus"] = copy.deepcopy(k8s.status(cluster))
    status["jobStatus"] = info.status
    status["jobDeploymentStatus"] = deployment
    status["reason"] = reason
    status["message"] = info.message
    times = dict(status.get("rayJobInfo") or {})
    if info.start_time:
        times["startTime"] = S.from_millis(info.start_time)
    if info.end_time:
        times["endTime"] = S.from_millis(info.end_time)
    if times:
        status["rayJobInfo"] = times


def _job_not_found(
    job: Obj, status: Obj, world: World, finished_at: dt.datetime | None, d: Decision
) -> None:
    if world.spec.submission_mode == JobSubmissionMode.HTTP_MODE:
        submitted = world.submit
        if submitted is None:  # in flight
            d.persist = False
        elif submitted.error is not None and not isinstance(submitted.error, DuplicateSubmissionId):
            _record_check_failure(status, world, d)
        elif status.get("jobStatusCheckFailureStartTime"):
            status.pop("jobStatusCheckFailureStartTime", None)
        else:
            d.persist = False
        return
    if finished_at is not None and observed_after(world, finished_at):
        fail(status, S.APP_FAILED, S.JOB_NOT_FOUND_AFTER_SUBMITTER)
        return
    d.persist = False


def _release(job: Obj, status: Obj, world: World, settings: RayJobSettings, d: Decision) -> None:
    """Suspending / Retrying: delete the cluster and the submitter, then reset."""
    cluster_gone = True
    if not world.spec.uses_cluster_selector and world.cluster is not None:
        cluster_gone = False
        if not _meta(world.cluster).get("deletionTimestamp"):
            d.act(DELETE_CLUSTER, str(_meta(world.cluster).get("name")))
    job_gone = True
    if world.spec.submission_mode == JobSubmissionMode.K8S_JOB_MODE and world.submitter is not None:
        job_gone = False
        if not _meta(world.submitter).get("deletionTimestamp"):
            d.act(DELETE_SUBMITTER, str(_meta(world.submitter).get("name")))
    if not (cluster_gone and job_gone):
        return
    if settings.batch_scheduler:
        d.act(BATCH_CLEANUP, str(status.get("rayClusterName") or ""))
    d.persist = True
    for key in ("rayClusterName", "dashboardURL", "jobId", "message", "reason"):
        status[key] = ""
    status["rayClusterStatus"] = {}
    status["rayJobInfo"] = {}
    status.pop("jobStatusCheckFailureStartTime", None)
    status["jobStatus"] = S.JOB_NEW
    status["jobDeploymentStatus"] = (
        S.SUSPENDED if status.get("jobDeploymentStatus") == S.SUSPENDING else S.NEW
    )


def _suspended(job: Obj, status: Obj, d: Decision) -> None:
    if _spec(job).get("suspend"):
        d.requeue_after = None
        return
    d.persist = True
    status["jobStatus"] = S.JOB_NEW
    status["jobDeploymentStatus"] = S.NEW


def check_backoff_limit(limit: int, status: Obj) -> None:
    """KubeRay ``checkBackoffLimitAndUpdateStatusIfNeeded``: count this pass's outcome
    into ``failed``/``succeeded`` and switch a retryable failure to Retrying (``limit``: the
    effective ``spec.backoffLimit``)."""
    failed = int(status.get("failed") or 0)
    succeeded = int(status.get("succeeded") or 0)
    deployment = status.get("jobDeploymentStatus")
    if deployment == S.FAILED:
        failed += 1
    if status.get("jobStatus") == S.JOB_SUCCEEDED and deployment == S.COMPLETE:
        succeeded += 1
    status["failed"] = failed
    status["succeeded"] = succeeded
    if deployment == S.FAILED and failed < limit + 1:
        if status.get("reason") in (S.DEADLINE_EXCEEDED, S.STATUS_CHECK_TIMEOUT_EXCEEDED):
            return
        status["jobDeploymentStatus"] = S.RETRYING


def decide(job: Obj, world: World, settings: RayJobSettings) -> Decision:
    """One pass of KubeRay's switch over ``status.jobDeploymentStatus`` (the RayJob is
    valid, not being deleted, managed by KubeRay)."""
    status = copy.deepcopy(k8s.status(job))
    d = Decision(status=status, requeue_after=settings.requeue_seconds)
    state = status.get("jobDeploymentStatus") or S.NEW
    if state == S.NEW:
        _new(job, status, world, d)
    elif state == S.INITIALIZING:
        _initializing(job, status, world, settings, d)
    elif state == S.WAITING:
        _waiting(job, status, world, d)
    elif state == S.RUNNING:
        _running(job, status, world, settings, d)
    elif state in (S.SUSPENDING, S.RETRYING):
        _release(job, status, world, settings, d)
    elif state == S.SUSPENDED:
        _suspended(job, status, d)
    elif state in (S.COMPLETE, S.FAILED):
        gate = settings.gate(RAY_JOB_DELETION_POLICY, True)
        action, requeue = after_terminal(job, world, gate, settings.delete_rayjob_after_finish)
        if action is not None:
            d.actions.append(action)
        if settings.batch_scheduler:
            d.act(BATCH_CLEANUP_TERMINAL, str(status.get("rayClusterName") or ""))
        d.requeue_after = requeue
    # ValidationFailed (now valid) and unknown states: requeue, nothing else.
    if d.persist and d.error is None:
        stop_on_give_up(job, state, status, world, d)  # beyond KubeRay (#2314)
    if d.persist and d.error is None:
        check_backoff_limit(world.spec.backoff_limit, status)
    return d


__all__ = [
    "ADD_FINALIZER",
    "CREATE_CLUSTER",
    "CREATE_SERVICE",
    "CREATE_SUBMITTER",
    "DELETE_CLUSTER",
    "DELETE_SELF",
    "DELETE_SUBMITTER",
    "STOP_JOB",
    "SUBMIT_JOB",
    "SUSPEND_WORKERS",
    "UPDATE_SERVICE",
    "WARN_CLUSTER_NOT_FOUND",
    "Action",
    "Decision",
    "World",
    "check_backoff_limit",
    "decide",
    "last_check_error",
    "observed_after",
    "submitter_finished",
]
