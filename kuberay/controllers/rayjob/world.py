"""What one RayJob pass sees (:class:`World`) and decides (:class:`Decision`,
:class:`Action`): the data the pure state machine works on."""

from __future__ import annotations

import datetime as dt
from typing import Final

import attrs

from kuberay.api.v1.rules import EffectiveRayJobSpec
from kuberay.controllers.dashboard import JobInfo
from kuberay.controllers.dashboard.poller import Observed
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

# ----- actions --------------------------------------------------------------------------------
ADD_FINALIZER: Final = "AddFinalizer"
CREATE_CLUSTER: Final = "CreateCluster"
CREATE_SUBMITTER: Final = "CreateSubmitter"
CREATE_SERVICE: Final = "CreateService"
UPDATE_SERVICE: Final = "UpdateService"
DELETE_CLUSTER: Final = "DeleteCluster"
DELETE_SUBMITTER: Final = "DeleteSubmitter"
SUSPEND_WORKERS: Final = "SuspendWorkers"
DELETE_SELF: Final = "DeleteSelf"
WARN_CLUSTER_NOT_FOUND: Final = "WarnClusterNotFound"
#: Beyond KubeRay (its #2314): ask the dashboard to stop the Ray job ``name`` (the job id) of a
#: RayJob that gives up, in the background (:mod:`~kuberay.controllers.rayjob.giveup`).
STOP_JOB: Final = "StopJob"
#: KubeRay's HTTPMode (re)submission: ``POST /api/jobs/`` of the Ray job ``name`` (the job id)
#: that the dashboard does not know, sent through the dashboard poller in the background (a
#: success is not repeated unless the job was lost since; see ``DashboardPoller.submit_job``).
SUBMIT_JOB: Final = "SubmitJob"
#: The batch scheduler's hooks (only with ``--batch-scheduler``): prepare the RayJob's gang
#: (Initializing); release it (``name``: the RayCluster it ran on) on Suspending/Retrying,
#: where a failure ends the pass, and on Complete/Failed, where it is only logged.
BATCH_SUBMIT: Final = "BatchSubmit"
BATCH_CLEANUP: Final = "BatchCleanup"
BATCH_CLEANUP_TERMINAL: Final = "BatchCleanupTerminal"


@attrs.frozen
class Action:
    """One side effect: ``kind`` (a constant above) on the object named ``name``."""

    kind: str
    name: str = ""


@attrs.frozen
class World:
    """What a pass sees, read before :func:`~.machine.decide` and never changed after.
    ``spec`` is the RayJob's effective spec (computed once per pass); ``cluster`` the
    RayCluster named ``status.rayClusterName``; ``cluster_head_service`` its head Service;
    ``submitter`` the batch Job named like the RayJob; ``head_pod`` the cluster's head pod;
    ``rayjob_service`` ``<rayjob>-head-svc``; ``job_info`` the latest finished job lookup
    (None: none yet); ``job_info_age`` how many seconds before ``now`` that lookup ended;
    ``submit`` the latest outcome of the HTTPMode submission of ``status.jobId``, read when
    the lookup found no such job (None: none finished, or not read); ``stop`` the outcome of
    the stop of ``status.jobId`` on ``cluster`` (None: none sent, or in flight);
    ``new_job_id`` / ``new_cluster_name`` fresh random names for New."""

    now: dt.datetime
    spec: EffectiveRayJobSpec
    cluster: Obj | None = None
    cluster_head_service: Obj | None = None
    submitter: Obj | None = None
    head_pod: Obj | None = None
    rayjob_service: Obj | None = None
    job_info: Observed[JobInfo] | None = None
    job_info_age: float = 0.0
    submit: Observed[str] | None = None
    stop: Observed[None] | None = None
    new_job_id: str = ""
    new_cluster_name: str = ""


#: What became of a stop: the job stopped, the dashboard knew no such job, the stop failed.
STOP_DONE: Final = "stopped"
STOP_ABSENT: Final = "absent"
STOP_FAILED: Final = "failed"


@attrs.frozen
class StopReport:
    """What became of the stop of a RayJob that gave up (``outcome``: a ``STOP_*`` constant)
    and the Event message saying so, recorded once the status saying it is written."""

    outcome: str
    message: str


@attrs.define
class Decision:
    """The outcome of one pass; see the module docstring. ``stop_report``: the Event to
    record after this pass's status write (a RayJob that gave up and stopped its job)."""

    status: Obj
    actions: list[Action] = attrs.field(factory=list)
    persist: bool = False
    requeue_after: float | None = None
    error: str | None = None
    stop_report: StopReport | None = None

    def act(self, kind: str, name: str = "") -> None:
        self.actions.append(Action(kind, name))


def spec_of(job: Obj) -> Obj:
    """``job.spec`` (``{}`` when absent)."""
    return k8s.spec(job)


def meta_of(job: Obj) -> Obj:
    """``job.metadata`` (``{}`` when absent)."""
    return k8s.meta(job)
