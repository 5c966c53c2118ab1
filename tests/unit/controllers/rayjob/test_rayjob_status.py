"""When a RayJob status is written (KubeRay's gate), how it is serialised, and how the
"why it waits" message is laid over it."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.controllers.rayjob.context import RayJobSettings
from kuberay.controllers.rayjob.status import go_job_status, kuberay_write_needed
from kuberay.controllers.rayjob.why import WAIT_PREFIX, head_pod_problem, overlay
from tests.unit.controllers.rayjob.rayjob_fixtures import (
    ago,
    cluster,
    head_pod,
    not_found,
    rayjob,
    running,
    submitter,
    unreachable,
    world,
)

BASE = running(rayClusterStatus={"state": "ready", "desiredWorkerReplicas": 1})


@pytest.mark.parametrize(
    ("change", "write"),
    [
        ({}, False),
        ({"message": "other"}, False),
        ({"dashboardURL": "x"}, False),
        ({"rayJobInfo": {"startTime": ago(1)}}, False),
        (
            {"rayClusterStatus": {"state": "ready", "desiredWorkerReplicas": 1, "desiredCPU": "9"}},
            False,
        ),
        ({"jobStatus": "SUCCEEDED"}, True),
        ({"jobDeploymentStatus": "Complete"}, True),
        ({"rayClusterStatus": {"state": "ready", "desiredWorkerReplicas": 2}}, True),
        ({"jobStatusCheckFailureStartTime": ago(0)}, True),
    ],
)
def test_kuberay_write_gate(change: dict[str, Any], write: bool) -> None:
    assert kuberay_write_needed(BASE, {**BASE, **change}) is write


def test_check_failure_time_compared_as_time() -> None:
    old = {**BASE, "jobStatusCheckFailureStartTime": "2026-01-01T00:00:00Z"}
    assert not kuberay_write_needed(
        old, {**BASE, "jobStatusCheckFailureStartTime": "2026-01-01T00:00:00+00:00"}
    )


def test_go_serialisation_drops_zero_values_keeps_counters() -> None:
    out = go_job_status(
        {"jobId": "", "message": None, "failed": 0, "rayJobInfo": {}, "jobStatus": "RUNNING"}
    )
    assert out == {"failed": 0, "jobStatus": "RUNNING"}


def test_env_settings_as_kuberay_reads_them() -> None:
    s = RayJobSettings.from_env(
        {
            "RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS": "5",
            "RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS": "0",
            "DELETE_RAYJOB_CR_AFTER_JOB_FINISHES": "TRUE",
        }
    )
    assert (
        s.grace_period_seconds,
        s.status_check_timeout_seconds,
        s.delete_rayjob_after_finish,
    ) == (5, 300, True)
    assert (
        RayJobSettings.from_env(
            {"RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS": "x"}
        ).grace_period_seconds
        == 300
    )


def waiting(reason: str, message: str = "", last: str = "") -> dict[str, Any]:
    cs: dict[str, Any] = {
        "name": "ray-head",
        "state": {"waiting": {"reason": reason, "message": message}},
    }
    if last:
        cs["lastState"] = {"terminated": {"reason": last, "exitCode": 137}}
    return cs


@pytest.mark.parametrize(
    ("pod", "words"),
    [
        (
            head_pod(waiting("ImagePullBackOff", 'Back-off pulling image "nope"')),
            ["ImagePullBackOff", '"nope"'],
        ),
        (
            head_pod(waiting("CrashLoopBackOff", "back-off 10s", last="OOMKilled")),
            ["CrashLoopBackOff", "OOMKilled"],
        ),
        (
            head_pod(
                conditions=[
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/1 nodes are available: Insufficient cpu.",
                    }
                ]
            ),
            ["cannot be scheduled", "Insufficient cpu"],
        ),
        (
            head_pod({"name": "ray-head", "state": {"terminated": {"reason": "OOMKilled"}}}),
            ["OOMKilled", "memory"],
        ),
    ],
)
def test_head_pod_problems(pod: dict[str, Any], words: list[str]) -> None:
    text = head_pod_problem(pod)
    assert text is not None
    for word in words:
        assert word in text


def test_healthy_head_pod_explains_nothing() -> None:
    assert head_pod_problem(head_pod({"name": "ray-head", "state": {"running": {}}})) is None


def test_overlay_sets_changes_and_clears_the_wait_message() -> None:
    job = rayjob(running())
    old = running(message="")
    new = dict(old)
    assert overlay(job, old, new, world(cluster=cluster(), job_info=unreachable("refused")), None)
    assert new["message"].startswith(WAIT_PREFIX) and "refused" in new["message"]
    # unchanged world: same message, nothing to write
    again = dict(new)
    assert not overlay(
        job, new, again, world(cluster=cluster(), job_info=unreachable("refused")), None
    )
    # the wait is over: the message is cleared (a write is due)
    done = dict(new)
    assert overlay(job, new, done, world(cluster=cluster()), None)
    assert done["message"] == ""


def test_overlay_never_touches_terminal_or_ray_messages() -> None:
    job = rayjob(running())
    old = running(message="")
    failed = {**old, "jobDeploymentStatus": "Failed", "message": "Job submission has failed."}
    assert not overlay(job, old, failed, world(job_info=unreachable()), None)
    assert failed["message"] == "Job submission has failed."
    ray = {**old, "message": "Job is running"}
    assert not overlay(job, ray, dict(ray), world(cluster=cluster()), None)


def test_overlay_names_a_failing_submitter() -> None:
    sub = submitter()
    sub["status"]["failed"] = 2
    new = running()
    overlay(
        rayjob(running()),
        running(),
        new,
        world(cluster=cluster(), submitter=sub, job_info=not_found()),
        None,
    )
    assert "2 failed pod(s)" in new["message"]


def test_overlay_names_blocking_finalizers() -> None:
    new = running(jobDeploymentStatus="Suspending")
    overlay(
        rayjob(new),
        new,
        new,
        world(cluster=cluster(deletionTimestamp=ago(1), finalizers=["test/block"])),
        None,
    )
    assert "test/block" in new["message"]
