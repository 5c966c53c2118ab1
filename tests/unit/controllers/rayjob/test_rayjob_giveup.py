"""A RayJob that gives up stops its Ray job (issue 44, item 2; KubeRay #2314): on each
give-up path ``decide`` first returns a StopJob action and holds the status write, then,
with the stop's outcome known, writes Failed with a message saying what became of the job
and that ``jobStatus`` is the last one observed, and asks for the Event."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kuberay.controllers.dashboard.poller import Observed
from kuberay.controllers.rayjob import machine as M
from kuberay.controllers.rayjob.world import STOP_ABSENT, STOP_DONE, STOP_FAILED
from tests.unit.controllers.rayjob.rayjob_fixtures import (
    CLUSTER,
    ago,
    cluster,
    decide,
    head_pod,
    head_service,
    info,
    not_found,
    rayjob,
    rayjob_service,
    running,
    settings,
    stop_failed,
    stop_not_found,
    stopped,
    submitter,
    unreachable,
    world,
)

RUNNING_WORLD: dict[str, Any] = {
    "cluster": cluster(),
    "cluster_head_service": head_service(),
    "rayjob_service": rayjob_service(),
    "submitter": submitter(),
}
SIDECAR_EXITED = head_pod(
    {
        "name": "ray-job-submitter",
        "state": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ago(1)}},
    }
)


@attrs.frozen
class Path:
    id: str
    job: dict[str, Any]
    world: dict[str, Any]
    reason: str


PATHS = [
    Path(
        "deadline",
        rayjob(running(startTime=ago(10)), activeDeadlineSeconds=5),
        {**RUNNING_WORLD, "job_info": info("RUNNING")},
        "DeadlineExceeded",
    ),
    Path(
        "submission-failed",
        rayjob(running()),
        {
            **RUNNING_WORLD,
            "submitter": submitter(("Failed", 1), failed_reason="BackoffLimitExceeded"),
            "job_info": info("RUNNING"),
        },
        "SubmissionFailed",
    ),
    Path(
        "sidecar-submission-failed",
        rayjob(running(), submissionMode="SidecarMode"),
        {**RUNNING_WORLD, "submitter": None, "head_pod": SIDECAR_EXITED},
        "SubmissionFailed",
    ),
    Path(
        "app-failed-job-not-found",
        rayjob(running()),
        {**RUNNING_WORLD, "submitter": submitter(("Complete", 1)), "job_info": not_found()},
        "AppFailed",
    ),
    Path(
        "status-check-timeout",
        rayjob(running(jobStatusCheckFailureStartTime=ago(301))),
        {**RUNNING_WORLD, "job_info": unreachable()},
        "JobStatusCheckTimeoutExceeded",
    ),
    Path(
        "sidecar-deadline-while-initializing",
        rayjob(
            {
                "jobDeploymentStatus": "Initializing",
                "jobId": "job-xyz",
                "rayClusterName": CLUSTER,
                "jobStatus": "",
                "startTime": ago(10),
            },
            submissionMode="SidecarMode",
            activeDeadlineSeconds=5,
        ),
        {"cluster": cluster(state="")},
        "DeadlineExceeded",
    ),
]


def _decide(path: Path, stop: Observed[None] | None = None) -> M.Decision:
    return decide(path.job, world(**path.world, stop=stop), settings())


@pytest.mark.parametrize("path", PATHS, ids=[p.id for p in PATHS])
def test_giving_up_stops_the_ray_job_before_the_failure_is_written(path: Path) -> None:
    d = _decide(path)
    assert [(a.kind, a.name) for a in d.actions] == [(M.STOP_JOB, "job-xyz")]
    assert not d.persist  # the failure waits for the stop's outcome
    assert d.stop_report is None


@pytest.mark.parametrize("path", PATHS, ids=[p.id for p in PATHS])
def test_the_failure_says_the_job_was_stopped(path: Path) -> None:
    d = _decide(path, stopped())
    assert d.persist and not d.actions
    assert (d.status["jobDeploymentStatus"], d.status["reason"]) == ("Failed", path.reason)
    seen = path.job["status"].get("jobStatus")
    last = f"jobStatus {seen} is the last one observed" if seen else "no jobStatus was observed"
    assert d.status["message"].endswith(f". Stopped Ray job job-xyz; {last}.")
    assert d.stop_report is not None and d.stop_report.outcome == STOP_DONE
    assert d.stop_report.message == (
        f"Stopped Ray job job-xyz on RayCluster {CLUSTER}: the RayJob gave up on it"
    )


@pytest.mark.parametrize("path", PATHS, ids=[p.id for p in PATHS])
def test_a_failed_stop_is_said_and_warned(path: Path) -> None:
    d = _decide(path, stop_failed("connection refused"))
    assert d.persist and d.status["jobDeploymentStatus"] == "Failed"
    assert "Failed to stop Ray job job-xyz, it may still be running (" in d.status["message"]
    assert d.stop_report is not None and d.stop_report.outcome == STOP_FAILED
    assert "connection refused" in d.stop_report.message


def test_a_job_the_dashboard_does_not_know_needed_no_stop() -> None:
    d = _decide(PATHS[3], stop_not_found())
    assert d.status["message"] == (
        "Submitter completed but Ray job not found in RayCluster. Ray job job-xyz was not "
        "found, nothing to stop; jobStatus RUNNING is the last one observed."
    )
    assert d.stop_report is not None and d.stop_report.outcome == STOP_ABSENT


def test_a_stop_failing_as_the_status_checks_does_not_repeat_the_cause() -> None:
    d = _decide(PATHS[4], stop_failed("connection refused"))
    assert d.status["message"].count("connection refused") == 1
    assert d.status["message"].endswith(
        "Failed to stop Ray job job-xyz, it may still be running (the same error); "
        "jobStatus RUNNING is the last one observed."
    )
    assert d.stop_report is not None and "connection refused" in d.stop_report.message


def test_the_status_check_timeout_keeps_its_last_error_and_adds_the_stop() -> None:
    d = _decide(PATHS[4], stopped())
    assert ": last error: " in d.status["message"]
    assert d.status["message"].endswith(
        "Stopped Ray job job-xyz; jobStatus RUNNING is the last one observed."
    )


def test_a_retried_failure_is_retried_after_the_stop() -> None:
    path = PATHS[1]
    job = rayjob(running(), backoffLimit=1)
    d = decide(job, world(**path.world, stop=stopped()), settings())
    assert (d.status["jobDeploymentStatus"], d.status["failed"]) == ("Retrying", 1)


@pytest.mark.parametrize(
    ("why", "job", "world_kw"),
    [
        (
            "cluster gone",
            rayjob(running(startTime=ago(10)), activeDeadlineSeconds=5),
            {},
        ),
        (
            "cluster being deleted",
            rayjob(running(startTime=ago(10)), activeDeadlineSeconds=5),
            {"cluster": cluster(deletionTimestamp=ago(1))},
        ),
        (
            "ray job already ended",
            rayjob(running(startTime=ago(10)), activeDeadlineSeconds=5),
            {**RUNNING_WORLD, "job_info": info("SUCCEEDED")},
        ),
        (
            "initializing in k8s job mode: nothing submitted",
            rayjob(
                {
                    "jobDeploymentStatus": "Initializing",
                    "jobId": "job-xyz",
                    "rayClusterName": CLUSTER,
                    "startTime": ago(10),
                },
                activeDeadlineSeconds=5,
            ),
            {"cluster": cluster(state="")},
        ),
    ],
)
def test_no_stop_without_a_job_to_reach(why: str, job: dict[str, Any], world_kw: Any) -> None:
    d = decide(job, world(**world_kw), settings())
    assert d.persist and d.status["jobDeploymentStatus"] == "Failed", why
    assert not [a for a in d.actions if a.kind == M.STOP_JOB], why
    assert d.stop_report is None
    if job["status"].get("jobStatus") == "RUNNING":
        assert d.status["message"].endswith(
            "ActiveDeadlineSeconds: 5. jobStatus RUNNING is the last one observed."
        )


def test_a_terminal_job_status_is_not_called_last_observed() -> None:
    d = decide(
        rayjob(running(jobStatus="FAILED", message="Ray says no")),
        world(**{**RUNNING_WORLD, "submitter": submitter(("Failed", 1))}),
        settings(),
    )
    assert (d.status["reason"], d.status["message"]) == ("AppFailed", "Ray says no")
    assert not d.actions


def test_a_failed_rayjob_never_stops_again() -> None:
    """The stop is asked only by the pass that leaves Running: a pass from Failed (e.g. the
    next one, or after an operator restart) sends nothing, whatever the job's last status."""
    failed = running(
        jobDeploymentStatus="Failed",
        reason="DeadlineExceeded",
        endTime=ago(1),
        startTime=ago(20),
    )
    d = decide(rayjob(failed, activeDeadlineSeconds=5), world(**RUNNING_WORLD), settings())
    assert not [a for a in d.actions if a.kind == M.STOP_JOB]
    assert d.stop_report is None
