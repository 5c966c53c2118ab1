"""Failures, retries and deadlines of RayJobs (RJ-13..RJ-21)."""

from __future__ import annotations

import random

from kuberay.kube import Client
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import Operator, start_operator
from tests.integration.rayjob.helpers import (
    finish_submitter,
    make_ready,
    rayjob,
    wait_events,
    wait_gone,
    wait_job,
    wait_state,
)


async def _running(
    client: Client, namespace: str, name: str, dashboard: FakeDashboard
) -> tuple[str, str]:
    job = await wait_state(client, namespace, name, "Initializing")
    cluster, job_id = job["status"]["rayClusterName"], job["status"]["jobId"]
    await make_ready(client, namespace, cluster, dashboard)
    await wait_state(client, namespace, name, "Running")
    return cluster, job_id


async def test_app_failure_is_retried_on_a_new_cluster(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("retry", namespace, backoffLimit=1))
    first_cluster, first_id = await _running(kclient, namespace, "retry", dashboard)
    dashboard.add_job(first_id, status="FAILED")
    await finish_submitter(kclient, namespace, "retry")

    await wait_events(kclient, namespace, "retry", {"DeletedRayCluster", "DeletedRayJobSubmitter"})
    await wait_gone(kclient, "ray.io/v1", "RayCluster", namespace, first_cluster)
    job = await wait_job(
        kclient,
        namespace,
        "retry",
        lambda j: j["status"].get("rayClusterName") not in (None, "", first_cluster),
        message="a new cluster name",
    )
    assert job["status"]["failed"] == 1
    second_cluster, second_id = job["status"]["rayClusterName"], job["status"]["jobId"]
    assert second_id != first_id

    await make_ready(kclient, namespace, second_cluster, dashboard)
    await wait_state(kclient, namespace, "retry", "Running")
    await eventually(
        lambda: kclient.get("batch/v1", "Job", "retry", namespace), timeout=30
    )  # a new submitter
    # the RayJob's head Service now selects the new cluster (same Service, selector updated)
    await wait_events(kclient, namespace, "retry", {"UpdatedService"})
    service = await kclient.get("v1", "Service", "retry-head-svc", namespace)
    assert service["spec"]["selector"]["ray.io/cluster"] == second_cluster
    dashboard.add_job(second_id, status="SUCCEEDED")
    await finish_submitter(kclient, namespace, "retry")
    job = await wait_state(kclient, namespace, "retry", "Complete")
    assert (job["status"]["succeeded"], job["status"]["failed"]) == (1, 1)


async def test_final_app_failure(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("appfail", namespace))
    _, job_id = await _running(kclient, namespace, "appfail", dashboard)
    dashboard.add_job(job_id, status="FAILED")
    await finish_submitter(kclient, namespace, "appfail")
    job = await wait_state(kclient, namespace, "appfail", "Failed")
    status = job["status"]
    assert (status["reason"], status["jobStatus"], status["failed"]) == ("AppFailed", "FAILED", 1)
    assert status.get("endTime")


async def test_submitter_failure(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("subfail", namespace))
    _, job_id = await _running(kclient, namespace, "subfail", dashboard)
    dashboard.add_job(job_id, status="RUNNING")
    await wait_job(
        kclient, namespace, "subfail", lambda j: j["status"].get("jobStatus") == "RUNNING"
    )
    await finish_submitter(kclient, namespace, "subfail", failed=True)
    job = await wait_state(kclient, namespace, "subfail", "Failed")
    assert job["status"]["reason"] == "SubmissionFailed"
    assert job["status"]["message"] == (
        "Job submission has failed. Reason: BackoffLimitExceeded. "
        "Message: Job has reached the specified backoff limit. "
        f"Stopped Ray job {job_id}; jobStatus RUNNING is the last one observed."
    )


async def test_submitter_finished_but_job_not_found(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("lost", namespace))
    await _running(kclient, namespace, "lost", dashboard)
    await finish_submitter(kclient, namespace, "lost")
    job = await wait_state(kclient, namespace, "lost", "Failed")
    assert job["status"]["reason"] == "AppFailed"
    assert job["status"]["message"].startswith(
        "Submitter completed but Ray job not found in RayCluster. Ray job "
    )
    assert "was not found, nothing to stop" in job["status"]["message"]


async def test_active_deadline_is_not_retried(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(rayjob("late", namespace, activeDeadlineSeconds=2, backoffLimit=1))
    job = await wait_state(kclient, namespace, "late", "Failed", timeout=30)
    assert job["status"]["reason"] == "DeadlineExceeded"
    assert job["status"]["message"].startswith("The RayJob has passed the activeDeadlineSeconds")
    assert job["status"]["failed"] == 1


async def test_pre_running_deadline(operator: Operator, kclient: Client, namespace: str) -> None:
    await kclient.create(rayjob("slow", namespace, preRunningDeadlineSeconds=2))
    job = await wait_state(kclient, namespace, "slow", "Failed", timeout=30)
    assert job["status"]["reason"] == "PreRunningDeadlineExceeded"


async def test_unreachable_dashboard_times_out(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    nobody = FakeDashboard(f"127.{random.randint(20, 250)}.{random.randint(0, 255)}.7", 8265)
    # never started: connections to it are refused
    async with start_operator(kclient, namespace, env={"RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS": "4"}):
        await kclient.create(rayjob("dark", namespace, submissionMode="HTTPMode"))
        job = await wait_state(kclient, namespace, "dark", "Initializing")
        await make_ready(kclient, namespace, job["status"]["rayClusterName"], nobody)
        job = await wait_job(
            kclient,
            namespace,
            "dark",
            lambda j: bool(j["status"].get("jobStatusCheckFailureStartTime")),
            message="status checks failing",
        )
        assert job["status"]["jobDeploymentStatus"] == "Running"
        assert "dashboard" in job["status"]["message"] and "unreachable" in job["status"]["message"]
        job = await wait_state(kclient, namespace, "dark", "Failed", timeout=30)
        assert job["status"]["reason"] == "JobStatusCheckTimeoutExceeded"
        assert (
            f"exceeded timeout of 4s: last error: dashboard address {nobody.host}:8265: "
            "connection refused (is the Ray head running?)"
        ) in job["status"]["message"]
        # it gave up: stopping its Ray job failed the same way (issue 44)
        assert job["status"]["message"].endswith(
            ", it may still be running (the same error); no jobStatus was observed."
        )


async def test_why_it_waits_names_failing_submitter_pods(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("crashy", namespace))
    await _running(kclient, namespace, "crashy", dashboard)
    # the submitter's pods keep failing before anything reaches the dashboard
    await kclient.patch_status(
        "batch/v1", "Job", "crashy", {"status": {"failed": 2, "active": 1}}, namespace
    )
    job = await wait_job(
        kclient,
        namespace,
        "crashy",
        lambda j: "2 failed pod(s)" in (j["status"].get("message") or ""),
        message="the failing submitter named",
    )
    assert job["status"]["jobDeploymentStatus"] == "Running"
    assert "kubectl logs job/crashy" in job["status"]["message"]
