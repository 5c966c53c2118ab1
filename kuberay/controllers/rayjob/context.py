"""What every RayJob reconcile shares: the client, the cache, events, the dashboard
poller, operator settings and the clock."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import attrs

from kuberay.controllers.batchscheduler import BatchScheduler
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.dashboard import JobInfo
from kuberay.controllers.dashboard.poller import Observed
from kuberay.controllers.dashboard.target import DashboardTarget
from kuberay.gocompat.goutil import go_atoi
from kuberay.kube import Client
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Cache, EventRecorder
from kuberay.reconcile.clock import utc_now

ObjectKey = tuple[str, str]


GRACE_PERIOD_ENV = "RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS"
STATUS_CHECK_TIMEOUT_ENV = "RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS"
DELETE_RAYJOB_ENV = "DELETE_RAYJOB_CR_AFTER_JOB_FINISHES"
DEFAULT_GRACE_PERIOD_SECONDS = 300
DEFAULT_STATUS_CHECK_TIMEOUT_SECONDS = 300


def _atoi(raw: str | None) -> int | None:
    """Go ``strconv.Atoi``: a decimal integer or None."""
    if raw is None:
        return None
    try:
        return go_atoi(raw)
    except ValueError:
        return None


class JobDashboard(Protocol):
    """The part of ``DashboardPoller`` the RayJob controller uses. No method awaits
    the network: results are the latest finished call's (None before the first)."""

    on_result: Callable[[ObjectKey], None] | None

    def job_info(
        self, owner: ObjectKey, target: DashboardTarget, job_id: str, *, max_age: float = 3.0
    ) -> Observed[JobInfo] | None: ...

    def submit_job(
        self,
        owner: ObjectKey,
        target: DashboardTarget,
        body: Mapping[str, Any],
        submission_id: str,
        *,
        not_found_at: float | None = None,
    ) -> Observed[str] | None: ...

    def submit_outcome(
        self, owner: ObjectKey, target: DashboardTarget, submission_id: str
    ) -> Observed[str] | None: ...

    def stop_job(
        self, owner: ObjectKey, target: DashboardTarget, job_id: str
    ) -> Observed[None] | None: ...

    def stop_outcome(
        self, owner: ObjectKey, target: DashboardTarget, job_id: str
    ) -> Observed[None] | None: ...

    def forget(self, owner: ObjectKey, keep: Callable[[str], bool] | None = None) -> None: ...


@attrs.define
class RayJobSettings:
    """Operator-level inputs of the RayJob controller.

    ``grace_period_seconds``: ``RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS``
    (default 300; any integer is used as is). ``status_check_timeout_seconds``:
    ``RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS`` (default 300; only a positive integer counts).
    ``delete_rayjob_after_finish``: ``DELETE_RAYJOB_CR_AFTER_JOB_FINISHES`` ("true", any
    case). ``requeue_seconds``: KubeRay's 3 s. ``submitter_finished_timeout``: 30 s.
    """

    options: BuildOptions = attrs.field(factory=BuildOptions)
    features: Mapping[str, bool] = attrs.field(factory=dict)
    enable_metrics: bool = False
    grace_period_seconds: float = DEFAULT_GRACE_PERIOD_SECONDS
    status_check_timeout_seconds: float = DEFAULT_STATUS_CHECK_TIMEOUT_SECONDS
    delete_rayjob_after_finish: bool = False
    requeue_seconds: float = 3.0
    submitter_finished_timeout: float = 30.0
    batch_scheduler: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str], **kwargs: Any) -> RayJobSettings:
        """Settings with the three RayJob env switches read as KubeRay reads them."""
        grace = _atoi(env.get(GRACE_PERIOD_ENV))
        timeout = _atoi(env.get(STATUS_CHECK_TIMEOUT_ENV))
        values: dict[str, Any] = {
            "grace_period_seconds": DEFAULT_GRACE_PERIOD_SECONDS if grace is None else grace,
            "status_check_timeout_seconds": (
                timeout
                if timeout is not None and timeout > 0
                else DEFAULT_STATUS_CHECK_TIMEOUT_SECONDS
            ),
            "delete_rayjob_after_finish": (env.get(DELETE_RAYJOB_ENV) or "").lower() == "true",
        }
        values.update(kwargs)
        return cls(**values)

    def gate(self, name: str, default: bool) -> bool:
        """A feature gate's value (``default`` when not given)."""
        return bool(self.features.get(name, default))


@attrs.define
class Ctx:
    """Per-controller dependencies (not per reconcile)."""

    client: Client
    cache: Cache
    recorder: EventRecorder
    settings: RayJobSettings
    dashboard: JobDashboard
    metrics: Any = None
    now: Callable[[], dt.datetime] = utc_now
    #: The dashboard poller's clock (``Observed.finished_at`` is read against it).
    monotonic: Callable[[], float] = time.monotonic
    #: The ``--batch-scheduler`` plugin (None: KubeRay's no-op default).
    scheduler: BatchScheduler | None = None

    def event(self, rayjob: Obj, etype: str, reason: str, message: str, action: str) -> None:
        """An Event regarding ``rayjob``."""
        self.recorder.event(rayjob, etype, reason, message, action)

    def cached(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        """One cached object, or None."""
        return self.cache.get(api_version, kind, namespace, name)
