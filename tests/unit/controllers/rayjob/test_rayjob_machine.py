"""The RayJob state machine as a table: (status, spec, observed world) -> (next status,
actions, whether KubeRay's status-update point is reached, requeue)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kuberay.controllers.rayjob import machine as M
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
    stopped,
    submitter,
    unreachable,
    world,
)

#: What ``status.message`` ends with once a RayJob that gave up had its Ray job stopped.
STOPPED_NOTE = "Stopped Ray job job-xyz; jobStatus RUNNING is the last one observed."


@attrs.frozen
class Row:
    id: str
    job: dict[str, Any]
    world: M.World
    expect: dict[str, Any]  # status fields that must hold afterwards (None: absent/empty)
    actions: tuple[str, ...] = ()
    persist: bool = True
    requeue: float | None = 3.0
    error: bool = False
    gates: dict[str, bool] = attrs.field(factory=dict)


RUNNING_WORLD = {
    "cluster": cluster(),
    "cluster_head_service": head_service(),
    "rayjob_service": rayjob_service(),
    "submitter": submitter(),
}

ROWS = [
    Row(
        "new-initialises",
        rayjob({}),
        world(),
        {
            "jobDeploymentStatus": "Initializing",
            "jobId": "job-jjjjj",
            "rayClusterName": "job-ccccc",
            "startTime": ago(0),
            "failed": 0,
            "succeeded": 0,
        },
    ),
    Row(
        "new-uses-spec-job-id-and-selector",
        rayjob({}, jobId="mine", clusterSelector={"ray.io/cluster": "shared"}),
        world(),
        {"jobId": "mine", "rayClusterName": "shared", "jobDeploymentStatus": "Initializing"},
    ),
    Row(
        "new-interactive-has-no-job-id",
        rayjob({}, submissionMode="InteractiveMode"),
        world(),
        {"jobId": None, "jobDeploymentStatus": "Initializing"},
    ),
    Row(
        "init-creates-cluster",
        rayjob({"jobDeploymentStatus": "Initializing", "rayClusterName": CLUSTER, "jobId": "j"}),
        world(),
        {"jobDeploymentStatus": "Initializing", "rayClusterStatus": {}},
        actions=(M.CREATE_CLUSTER,),
    ),
    Row(
        "init-mirrors-unready-cluster",
        rayjob({"jobDeploymentStatus": "Initializing", "rayClusterName": CLUSTER, "jobId": "j"}),
        world(cluster=cluster(state="")),
        {"jobDeploymentStatus": "Initializing", "dashboardURL": None, "rayClusterStatus": {}},
    ),
    Row(
        "init-ready-k8sjob-creates-submitter",
        rayjob({"jobDeploymentStatus": "Initializing", "rayClusterName": CLUSTER, "jobId": "j"}),
        world(cluster=cluster(), cluster_head_service=head_service()),
        {
            "jobDeploymentStatus": "Running",
            "dashboardURL": f"{CLUSTER}-head-svc.ns.svc.cluster.local:8265",
        },
        actions=(M.CREATE_SUBMITTER,),
    ),
    Row(
        "init-ready-http-no-submitter",
        rayjob(
            {"jobDeploymentStatus": "Initializing", "rayClusterName": CLUSTER, "jobId": "j"},
            submissionMode="HTTPMode",
        ),
        world(cluster=cluster(), cluster_head_service=head_service()),
        {"jobDeploymentStatus": "Running"},
    ),
    Row(
        "init-ready-interactive-waits",
        rayjob(
            {"jobDeploymentStatus": "Initializing", "rayClusterName": CLUSTER},
            submissionMode="InteractiveMode",
        ),
        world(cluster=cluster(), cluster_head_service=head_service()),
        {"jobDeploymentStatus": "Waiting"},
    ),
    Row(
        "init-ready-without-dashboard-port-errors",
        rayjob({"jobDeploymentStatus": "Initializing", "rayClusterName": CLUSTER, "jobId": "j"}),
        world(cluster=cluster()),
        {"jobDeploymentStatus": "Initializing"},
        persist=False,
        error=True,
    ),
    Row(
        "init-suspend",
        rayjob({"jobDeploymentStatus": "Initializing", "rayClusterName": CLUSTER}, suspend=True),
        world(),
        {"jobDeploymentStatus": "Suspending"},
    ),
    Row(
        "init-active-deadline-not-retried",
        rayjob(
            {"jobDeploymentStatus": "Initializing", "startTime": ago(10)},
            activeDeadlineSeconds=5,
            backoffLimit=2,
        ),
        world(),
        {"jobDeploymentStatus": "Failed", "reason": "DeadlineExceeded", "failed": 1},
    ),
    Row(
        "init-prerunning-deadline-retried",
        rayjob(
            {"jobDeploymentStatus": "Initializing", "startTime": ago(10)},
            preRunningDeadlineSeconds=5,
            backoffLimit=1,
        ),
        world(),
        {"jobDeploymentStatus": "Retrying", "reason": "PreRunningDeadlineExceeded", "failed": 1},
    ),
    Row(
        "init-selector-cluster-missing",
        rayjob(
            {"jobDeploymentStatus": "Initializing", "rayClusterName": "shared"},
            clusterSelector={"ray.io/cluster": "shared"},
        ),
        world(),
        {"jobDeploymentStatus": "Initializing"},
        actions=(M.WARN_CLUSTER_NOT_FOUND,),
        persist=False,
        error=True,
    ),
    Row(
        "waiting-without-job-id",
        rayjob(
            {"jobDeploymentStatus": "Waiting", "startTime": ago(1)},
            submissionMode="InteractiveMode",
        ),
        world(),
        {"jobDeploymentStatus": "Waiting"},
        persist=False,
    ),
    Row(
        "waiting-gets-job-id",
        rayjob(
            {"jobDeploymentStatus": "Waiting", "startTime": ago(1)},
            submissionMode="InteractiveMode",
            jobId="fake-id",
        ),
        world(),
        {"jobDeploymentStatus": "Running", "jobId": "fake-id"},
    ),
    Row(
        "waiting-prerunning-deadline",
        rayjob(
            {"jobDeploymentStatus": "Waiting", "startTime": ago(5)},
            submissionMode="InteractiveMode",
            preRunningDeadlineSeconds=2,
        ),
        world(),
        {"jobDeploymentStatus": "Failed", "reason": "PreRunningDeadlineExceeded"},
    ),
    Row(
        "running-no-lookup-yet",
        rayjob(running()),
        world(**RUNNING_WORLD),
        {"jobDeploymentStatus": "Running"},
        persist=False,
    ),
    Row(
        "running-succeeded-waits-for-submitter",
        rayjob(running()),
        world(**RUNNING_WORLD, job_info=info("SUCCEEDED", "done", end=1_700_000_001_000)),
        {"jobDeploymentStatus": "Running", "jobStatus": "SUCCEEDED", "message": "done"},
    ),
    Row(
        "running-succeeded-submitter-complete",
        rayjob(running()),
        world(
            **{**RUNNING_WORLD, "submitter": submitter(("Complete", 1))},
            job_info=info("SUCCEEDED", end=1_700_000_001_000),
        ),
        {
            "jobDeploymentStatus": "Complete",
            "jobStatus": "SUCCEEDED",
            "succeeded": 1,
            "failed": 0,
            "rayJobInfo": {"startTime": "2023-11-14T22:13:20Z", "endTime": "2023-11-14T22:13:21Z"},
            "rayClusterStatus": {"state": "ready", "desiredWorkerReplicas": 1},
        },
    ),
    Row(
        "running-app-failed",
        rayjob(running()),
        world(
            **{**RUNNING_WORLD, "submitter": submitter(("Complete", 1))}, job_info=info("FAILED")
        ),
        {"jobDeploymentStatus": "Failed", "reason": "AppFailed", "failed": 1},
    ),
    Row(
        "running-app-failed-retried",
        rayjob(running(), backoffLimit=1),
        world(
            **{**RUNNING_WORLD, "submitter": submitter(("Complete", 1))}, job_info=info("FAILED")
        ),
        {"jobDeploymentStatus": "Retrying", "reason": "AppFailed", "failed": 1},
    ),
    Row(
        "running-submitter-failed-stops-the-job-first",
        rayjob(running()),
        world(
            **{
                **RUNNING_WORLD,
                "submitter": submitter(("Failed", 1), failed_reason="BackoffLimitExceeded"),
            },
            job_info=info("RUNNING"),
        ),
        {"reason": "SubmissionFailed"},
        actions=(M.STOP_JOB,),
        persist=False,
    ),
    Row(
        "running-submitter-failed",
        rayjob(running()),
        world(
            **{
                **RUNNING_WORLD,
                "submitter": submitter(("Failed", 1), failed_reason="BackoffLimitExceeded"),
            },
            job_info=info("RUNNING"),
            stop=stopped(),
        ),
        {
            "jobDeploymentStatus": "Failed",
            "reason": "SubmissionFailed",
            "message": "Job submission has failed. Reason: BackoffLimitExceeded. Message: boom. "
            + STOPPED_NOTE,
        },
    ),
    Row(
        "running-submitter-failed-after-app-failure",
        rayjob(running(jobStatus="FAILED", message="Ray says no")),
        world(**{**RUNNING_WORLD, "submitter": submitter(("Failed", 1))}),
        {"jobDeploymentStatus": "Failed", "reason": "AppFailed", "message": "Ray says no"},
    ),
    Row(
        "running-submitter-finished-long-ago",
        rayjob(running()),
        world(
            **{**RUNNING_WORLD, "submitter": submitter(("Complete", 31))}, job_info=info("RUNNING")
        ),
        {
            "jobDeploymentStatus": "Failed",
            "jobStatus": "FAILED",
            "reason": "JobDeploymentStatusTransitionGracePeriodExceeded",
        },
    ),
    Row(
        "running-not-found-after-submitter",
        rayjob(running()),
        world(
            **{**RUNNING_WORLD, "submitter": submitter(("Complete", 1))},
            job_info=not_found(),
            stop=stopped(),
        ),
        {
            "jobDeploymentStatus": "Failed",
            "reason": "AppFailed",
            "message": "Submitter completed but Ray job not found in RayCluster. " + STOPPED_NOTE,
        },
    ),
    Row(
        "running-stale-not-found-after-submitter-proves-nothing",
        rayjob(running()),
        world(
            **{**RUNNING_WORLD, "submitter": submitter(("Complete", 1))},
            job_info=not_found(),
            job_info_age=5.0,
        ),
        {"jobDeploymentStatus": "Running"},
        persist=False,
    ),
    Row(
        "running-not-found-before-submitter-finishes",
        rayjob(running()),
        world(**RUNNING_WORLD, job_info=not_found()),
        {"jobDeploymentStatus": "Running"},
        persist=False,
    ),
    Row(
        "running-unreachable-starts-timer",
        rayjob(running()),
        world(**RUNNING_WORLD, job_info=unreachable()),
        {"jobStatusCheckFailureStartTime": ago(0), "jobDeploymentStatus": "Running"},
    ),
    Row(
        "running-unreachable-timer-already-running",
        rayjob(running(jobStatusCheckFailureStartTime=ago(10))),
        world(**RUNNING_WORLD, job_info=unreachable()),
        {"jobStatusCheckFailureStartTime": ago(10)},
        persist=False,
    ),
    Row(
        "running-status-check-timeout-not-retried",
        rayjob(running(jobStatusCheckFailureStartTime=ago(301)), backoffLimit=3),
        world(**RUNNING_WORLD, job_info=unreachable(), stop=stopped()),
        {"jobDeploymentStatus": "Failed", "reason": "JobStatusCheckTimeoutExceeded", "failed": 1},
    ),
    Row(
        "running-lookup-clears-timer",
        rayjob(running(jobStatusCheckFailureStartTime=ago(10))),
        world(**RUNNING_WORLD, job_info=info("RUNNING")),
        {"jobStatusCheckFailureStartTime": None, "jobDeploymentStatus": "Running"},
    ),
    Row(
        "running-grace-period-exceeded",
        rayjob(running(jobStatus="SUCCEEDED", rayJobInfo={"endTime": ago(301)})),
        world(**RUNNING_WORLD),
        {
            "jobDeploymentStatus": "Complete",
            "reason": "JobDeploymentStatusTransitionGracePeriodExceeded",
        },
    ),
    Row(
        "running-http-submits-on-not-found",
        rayjob(running(), submissionMode="HTTPMode"),
        world(**{**RUNNING_WORLD, "submitter": None}, job_info=not_found()),
        {"jobDeploymentStatus": "Running"},
        actions=(M.SUBMIT_JOB,),
        persist=False,
    ),
    Row(
        "running-http-job-found-no-submit",
        rayjob(running(), submissionMode="HTTPMode"),
        world(**{**RUNNING_WORLD, "submitter": None}, job_info=info("RUNNING")),
        {"jobDeploymentStatus": "Running"},
    ),
    Row(
        "running-k8sjob-not-found-no-submit",
        rayjob(running()),
        world(**RUNNING_WORLD, job_info=not_found()),
        {"jobDeploymentStatus": "Running"},
        persist=False,
    ),
    Row(
        "running-http-submit-failed-starts-timer",
        rayjob(running(), submissionMode="HTTPMode"),
        world(
            **{**RUNNING_WORLD, "submitter": None},
            job_info=not_found(),
            submit=unreachable("refused"),  # type: ignore[arg-type]
        ),
        {"jobStatusCheckFailureStartTime": ago(0)},
        actions=(M.SUBMIT_JOB,),
    ),
    Row(
        "running-creates-rayjob-service",
        rayjob(running()),
        world(**{**RUNNING_WORLD, "rayjob_service": None}, job_info=info("RUNNING")),
        {"jobDeploymentStatus": "Running"},
        actions=(M.CREATE_SERVICE,),
    ),
    Row(
        "running-repoints-rayjob-service",
        rayjob(running()),
        world(
            **{**RUNNING_WORLD, "rayjob_service": rayjob_service("old")}, job_info=info("RUNNING")
        ),
        {"jobDeploymentStatus": "Running"},
        actions=(M.UPDATE_SERVICE,),
    ),
    Row(
        "running-k8sjob-submitter-missing-errors",
        rayjob(running()),
        world(**{**RUNNING_WORLD, "submitter": None}, job_info=info("RUNNING")),
        {"jobDeploymentStatus": "Running"},
        persist=False,
        error=True,
    ),
    Row(
        "sidecar-head-pod-lost",
        rayjob(running(), submissionMode="SidecarMode"),
        world(**{**RUNNING_WORLD, "submitter": None}),
        {
            "jobDeploymentStatus": "Failed",
            "reason": "AppFailed",
            "message": "Ray head pod not found.",
        },
    ),
    Row(
        "sidecar-submitter-exit-code",
        rayjob(running(), submissionMode="SidecarMode"),
        world(
            **{**RUNNING_WORLD, "submitter": None},
            head_pod=head_pod(
                {
                    "name": "ray-job-submitter",
                    "state": {
                        "terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ago(1)}
                    },
                }
            ),
            stop=stopped(),
        ),
        {
            "jobDeploymentStatus": "Failed",
            "reason": "SubmissionFailed",
            "message": (
                "Ray head pod container ray-job-submitter terminated with exit code 1: Error. "
                + STOPPED_NOTE
            ),
        },
    ),
    Row(
        "sidecar-restart-gate-tolerates-until-limit",
        rayjob(running(), submissionMode="SidecarMode"),
        world(
            **{**RUNNING_WORLD, "submitter": None},
            head_pod=head_pod(
                {
                    "name": "ray-job-submitter",
                    "restartCount": 1,
                    "lastState": {"terminated": {"exitCode": 1}},
                    "state": {"running": {}},
                }
            ),
            job_info=info("RUNNING"),
        ),
        {"jobDeploymentStatus": "Running"},
        gates={"SidecarSubmitterRestart": True},
    ),
    Row(
        "sidecar-restart-gate-fails-at-limit",
        rayjob(running(), submissionMode="SidecarMode"),
        world(
            **{**RUNNING_WORLD, "submitter": None},
            head_pod=head_pod(
                {
                    "name": "ray-job-submitter",
                    "restartCount": 2,
                    "lastState": {"terminated": {"exitCode": 1}},
                    "state": {"running": {}},
                }
            ),
            stop=stopped(),
        ),
        {"jobDeploymentStatus": "Failed", "reason": "SubmissionFailed"},
        gates={"SidecarSubmitterRestart": True},
    ),
    Row(
        "suspending-deletes-children",
        rayjob(running(jobDeploymentStatus="Suspending")),
        world(cluster=cluster(), submitter=submitter()),
        {"jobDeploymentStatus": "Suspending"},
        actions=(M.DELETE_CLUSTER, M.DELETE_SUBMITTER),
        persist=False,
    ),
    Row(
        "suspending-waits-for-deletion",
        rayjob(running(jobDeploymentStatus="Suspending")),
        world(cluster=cluster(deletionTimestamp=ago(1), finalizers=["x"])),
        {"jobDeploymentStatus": "Suspending", "rayClusterName": CLUSTER},
        persist=False,
    ),
    Row(
        "suspending-done-resets",
        rayjob(running(jobDeploymentStatus="Suspending", message="m", reason="r")),
        world(),
        {
            "jobDeploymentStatus": "Suspended",
            "jobStatus": None,
            "rayClusterName": None,
            "jobId": None,
            "dashboardURL": None,
            "message": None,
            "reason": None,
        },
    ),
    Row(
        "retrying-done-restarts",
        rayjob(running(jobDeploymentStatus="Retrying", failed=1)),
        world(),
        {"jobDeploymentStatus": None, "rayClusterName": None, "failed": 1},
    ),
    Row(
        "suspended-stays",
        rayjob({"jobDeploymentStatus": "Suspended"}, suspend=True),
        world(),
        {"jobDeploymentStatus": "Suspended"},
        persist=False,
        requeue=None,
    ),
    Row(
        "suspended-resumes",
        rayjob({"jobDeploymentStatus": "Suspended"}),
        world(),
        {"jobDeploymentStatus": None},
    ),
    Row(
        "validation-failed-now-valid-stays",
        rayjob({"jobDeploymentStatus": "ValidationFailed"}),
        world(),
        {"jobDeploymentStatus": "ValidationFailed"},
        persist=False,
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_state_machine(row: Row) -> None:
    d = decide(row.job, row.world, settings(features=row.gates))
    for key, want in row.expect.items():
        got = d.status.get(key)
        if want is None:
            assert not got, f"{key}: {got!r}"
        else:
            assert got == want, f"{key}: {got!r} != {want!r}"
    assert tuple(a.kind for a in d.actions) == row.actions
    assert d.persist == row.persist
    assert (d.error is not None) == row.error
    if not row.error:
        assert d.requeue_after == row.requeue


def test_new_adds_the_finalizer_first() -> None:
    job = rayjob({})
    job["metadata"]["finalizers"] = []
    d = decide(job, world(), settings())
    assert [a.kind for a in d.actions] == [M.ADD_FINALIZER]


def test_deadline_message_names_start_and_limit() -> None:
    d = decide(
        rayjob({"jobDeploymentStatus": "Running", "startTime": ago(5)}, activeDeadlineSeconds=3),
        world(),
        settings(),
    )
    assert d.status["message"] == (
        "The RayJob has passed the activeDeadlineSeconds. StartTime: "
        "2026-01-01 11:59:55 +0000 UTC. ActiveDeadlineSeconds: 3"
    )


def test_status_check_timeout_uses_the_setting() -> None:
    job = rayjob(running(jobStatusCheckFailureStartTime=ago(2)))
    assert decide(job, world(**RUNNING_WORLD), settings()).status["jobDeploymentStatus"] == (
        "Running"
    )
    d = decide(job, world(**RUNNING_WORLD), settings(status_check_timeout_seconds=1))
    assert d.status["reason"] == "JobStatusCheckTimeoutExceeded"
    assert d.status["message"].endswith("exceeded timeout of 1s")


def test_retry_stops_at_backoff_limit_plus_one() -> None:
    job = rayjob(running(failed=1), backoffLimit=1)
    d = decide(
        job,
        world(
            **{**RUNNING_WORLD, "submitter": submitter(("Complete", 1))}, job_info=info("FAILED")
        ),
        settings(),
    )
    assert d.status["jobDeploymentStatus"] == "Failed"
    assert d.status["failed"] == 2
