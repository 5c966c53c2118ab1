"""RayJob status: names, times, and when KubeRay writes it.

KubeRay writes a RayJob's status (a full Status().Update) only when ``jobStatus``,
``jobDeploymentStatus``, the copied RayCluster status (its
``InconsistentRayClusterStatus`` fields) or ``jobStatusCheckFailureStartTime``
changed; every such write with a terminal deployment status stamps ``endTime``.
Other fields (``dashboardURL``, ``message`` ...) ride along with those writes.
:func:`kuberay_write_needed` is that rule; ``go_job_status`` is the status as
KubeRay's Go types serialise it.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from kuberay.api.v1 import constants as C
from kuberay.api.v1.enums import (
    JobDeploymentStatus,
    JobFailedReason,
    JobStatus,
    is_job_deployment_terminal,
    is_job_terminal,
)
from kuberay.controllers.raycluster.status import status_changed
from kuberay.gocompat.gotime import format_go_date_time as format_date_time
from kuberay.gocompat.gotime import go_time_string as format_go_time
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.clock import format_time, parse_time

RAYJOB_FINALIZER: Final = C.RAY_JOB_STOP_JOB_FINALIZER

NEW: Final = JobDeploymentStatus.NEW.value
INITIALIZING: Final = JobDeploymentStatus.INITIALIZING.value
RUNNING: Final = JobDeploymentStatus.RUNNING.value
COMPLETE: Final = JobDeploymentStatus.COMPLETE.value
FAILED: Final = JobDeploymentStatus.FAILED.value
VALIDATION_FAILED: Final = JobDeploymentStatus.VALIDATION_FAILED.value
SUSPENDING: Final = JobDeploymentStatus.SUSPENDING.value
SUSPENDED: Final = JobDeploymentStatus.SUSPENDED.value
RETRYING: Final = JobDeploymentStatus.RETRYING.value
WAITING: Final = JobDeploymentStatus.WAITING.value

JOB_NEW: Final = JobStatus.NEW.value
JOB_SUCCEEDED: Final = JobStatus.SUCCEEDED.value
JOB_FAILED: Final = JobStatus.FAILED.value

SUBMISSION_FAILED: Final = JobFailedReason.SUBMISSION_FAILED.value
DEADLINE_EXCEEDED: Final = JobFailedReason.DEADLINE_EXCEEDED.value
PRE_RUNNING_DEADLINE_EXCEEDED: Final = JobFailedReason.PRE_RUNNING_DEADLINE_EXCEEDED.value
APP_FAILED: Final = JobFailedReason.APP_FAILED.value
GRACE_PERIOD_EXCEEDED: Final = (
    JobFailedReason.JOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_EXCEEDED.value
)
STATUS_CHECK_TIMEOUT_EXCEEDED: Final = JobFailedReason.JOB_STATUS_CHECK_TIMEOUT_EXCEEDED.value
REASON_VALIDATION_FAILED: Final = JobFailedReason.VALIDATION_FAILED.value

#: KubeRay's message of a RayJob whose submitter ended while the dashboard knows no such job.
JOB_NOT_FOUND_AFTER_SUBMITTER: Final = "Submitter completed but Ray job not found in RayCluster."
#: Starts every "why it waits" message (beyond KubeRay, see :mod:`~.why`).
WAIT_PREFIX: Final = "Waiting: "
#: Joins KubeRay's timeout message and the last failure of the status checks (beyond KubeRay).
LAST_ERROR: Final = ": last error: "


__all__ = [
    "format_date_time",
    "format_go_time",
    "go_job_status",
    "is_job_deployment_terminal",
    "is_job_terminal",
    "kuberay_write_needed",
]


def from_millis(ms: int) -> str:
    """A Ray job's ms-epoch timestamp as a ``metav1.Time`` string."""
    return format_time(dt.datetime.fromtimestamp(ms / 1000.0, dt.UTC))


def kuberay_write_needed(old: Obj, new: Obj) -> bool:
    """KubeRay's ``updateRayJobStatus`` gate: jobStatus, jobDeploymentStatus, the copied
    RayCluster status or jobStatusCheckFailureStartTime changed."""
    if (old.get("jobStatus") or "") != (new.get("jobStatus") or ""):
        return True
    if (old.get("jobDeploymentStatus") or "") != (new.get("jobDeploymentStatus") or ""):
        return True
    if status_changed(old.get("rayClusterStatus") or {}, new.get("rayClusterStatus") or {}):
        return True
    before = parse_time(old.get("jobStatusCheckFailureStartTime"))
    after = parse_time(new.get("jobStatusCheckFailureStartTime"))
    return before != after


#: Status fields Go writes only when non-zero (``omitempty``).
_OMIT_EMPTY = frozenset(
    {
        "jobId",
        "rayClusterName",
        "dashboardURL",
        "jobStatus",
        "jobDeploymentStatus",
        "reason",
        "message",
        "startTime",
        "endTime",
        "jobStatusCheckFailureStartTime",
        "rayClusterStatus",
        "rayJobInfo",
        "observedGeneration",
    }
)


def go_job_status(status: Obj) -> Obj:
    """``status`` as KubeRay serialises it: ``omitempty`` fields at their zero value and
    ``None`` values left out (``succeeded``/``failed`` are pointers: kept when set)."""
    out: Obj = {}
    for key, value in status.items():
        if value is None:
            continue
        if key in _OMIT_EMPTY and (value in ("", 0) or value == {}):
            continue
        if key == "rayJobInfo" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if v}
            if not value:
                continue
        out[key] = value
    return out
