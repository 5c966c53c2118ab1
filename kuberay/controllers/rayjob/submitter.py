"""The submitter of K8sJobMode (a batch Job) and SidecarMode (a head-pod container):
KubeRay's ``checkSubmitterAndUpdateStatusIfNeeded`` and when its end is known."""

from __future__ import annotations

import datetime as dt

from kuberay.api.v1 import constants as C
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.controllers.rayjob import status as S
from kuberay.controllers.rayjob.context import RayJobSettings
from kuberay.controllers.rayjob.world import Decision, World
from kuberay.controllers.rayjob.world import meta_of as _meta
from kuberay.featuregates.kuberay_gates import SIDECAR_SUBMITTER_RESTART
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.clock import parse_time


def _condition(obj: Obj | None, ctype: str) -> Obj | None:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype and c.get("status") == "True":
            return dict(c)
    return None


def _submitter_container_status(pod: Obj) -> Obj | None:
    for cs in k8s.status(pod).get("containerStatuses") or []:
        if cs.get("name") == C.SUBMITTER_CONTAINER_NAME:
            return dict(cs)
    return None


def sidecar_submitter_ended(pod: Obj | None) -> bool:
    """The head pod's ``ray-job-submitter`` container has terminated (SidecarMode).

    The head pod's restartPolicy being Never, it then stays not Ready for good, so its
    RayCluster may never reach ``ready``: waiting for that would wait forever."""
    cs = _submitter_container_status(pod) if pod is not None else None
    return bool(cs and (cs.get("state") or {}).get("terminated"))


def fail(status: Obj, reason: str, message: str | None = None) -> None:
    """Set ``status`` Failed with ``reason`` (and ``message``, unless None: kept)."""
    status["jobDeploymentStatus"] = S.FAILED
    status["reason"] = reason
    if message is not None:
        status["message"] = message


def check_submitter(
    job: Obj, status: Obj, world: World, settings: RayJobSettings, d: Decision
) -> tuple[bool, dt.datetime | None]:
    """KubeRay ``checkSubmitterAndUpdateStatusIfNeeded``: (failed now, finished at)."""
    if world.spec.submission_mode == JobSubmissionMode.SIDECAR_MODE:
        pod = world.head_pod
        if pod is None:
            fail(status, S.APP_FAILED, "Ray head pod not found.")
            return True, None
        cs = _submitter_container_status(pod) or {}
        terminated = (cs.get("state") or {}).get("terminated")
        failed = False
        if not settings.gate(SIDECAR_SUBMITTER_RESTART, False):
            if terminated and terminated.get("exitCode", 0) != 0:
                failed = True
                fail_submission(
                    status,
                    f"Ray head pod container {cs.get('name')} terminated with exit code "
                    f"{terminated.get('exitCode')}: {terminated.get('reason', '')}",
                )
        else:
            limit = world.spec.submitter_backoff_limit
            last = (cs.get("lastState") or {}).get("terminated")
            exited_ok = terminated is not None and terminated.get("exitCode", 0) == 0
            if last and not exited_ok and int(cs.get("restartCount") or 0) >= limit:
                failed = True
                fail_submission(
                    status,
                    f"Ray head pod submitter container {cs.get('name')} terminated after "
                    "exceeding the maximum restart count",
                )
        finished = parse_time((terminated or {}).get("finishedAt")) if terminated else None
        return failed, finished
    job_obj = world.submitter
    if job_obj is None:
        d.error = (
            f"the submitter Job {_meta(job).get('namespace')}/{_meta(job).get('name')} is not found"
        )
        return False, None
    failed_cond = _condition(job_obj, "Failed")
    if failed_cond is not None:
        fail_submission(
            status,
            f"Job submission has failed. Reason: {failed_cond.get('reason', '')}. "
            f"Message: {failed_cond.get('message', '')}",
        )
    finished = None
    for c in k8s.status(job_obj).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            finished = parse_time(c.get("lastTransitionTime"))
            break
    return failed_cond is not None, finished


def fail_submission(status: Obj, message: str) -> None:
    """A failed submitter: AppFailed if the Ray job already FAILED (message kept), else
    SubmissionFailed with ``message``."""
    if status.get("jobStatus") == S.JOB_FAILED:
        fail(status, S.APP_FAILED)
    else:
        fail(status, S.SUBMISSION_FAILED, message)


def observed_after(world: World, when: dt.datetime) -> bool:
    """The job lookup ended after ``when`` (a second-precision apiserver time, so one more
    second). KubeRay looks the job up in the same pass; a lookup that ended before the
    submitter finished proves nothing about a job the submitter may have just run."""
    looked = world.now - dt.timedelta(seconds=world.job_info_age)
    return looked >= when + dt.timedelta(seconds=1)


def submitter_finished(world: World) -> bool:
    """The submitter (K8sJobMode Job, SidecarMode container) has ended, from the cache."""
    mode = world.spec.submission_mode
    if mode == JobSubmissionMode.K8S_JOB_MODE:
        return any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in ((world.submitter or {}).get("status") or {}).get("conditions") or []
        )
    if mode == JobSubmissionMode.SIDECAR_MODE and world.head_pod is not None:
        cs = _submitter_container_status(world.head_pod) or {}
        return bool((cs.get("state") or {}).get("terminated"))
    return False
