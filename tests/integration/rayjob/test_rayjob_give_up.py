"""A RayJob that gives up stops its Ray job (issue 44, item 2; KubeRay #2314), with the fake
Ray dashboard: past ``activeDeadlineSeconds`` on a cluster that is kept, the operator sends
one ``POST /api/jobs/{id}/stop``, writes Failed/DeadlineExceeded with a message saying the
job was stopped and that ``jobStatus`` is the last one observed, and records a Normal Event;
later passes send nothing. A stop the dashboard does not carry out is a Warning."""

from __future__ import annotations

import asyncio
from typing import Any

from kuberay.kube import Client
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import (
    finish_submitter,
    make_ready,
    rayjob,
    wait_events,
    wait_job,
    wait_state,
)


async def _ray_job_running(
    client: Client, namespace: str, name: str, dashboard: FakeDashboard
) -> dict[str, Any]:
    """The RayJob once Running with its Ray job RUNNING in the fake dashboard."""
    job = await wait_state(client, namespace, name, "Initializing")
    await make_ready(client, namespace, job["status"]["rayClusterName"], dashboard)
    job = await wait_state(client, namespace, name, "Running")
    job_id = str(job["status"]["jobId"])
    if job_id not in dashboard.jobs:  # K8sJobMode: what its submitter pod would submit
        dashboard.add_job(job_id)
    dashboard.set_job_status(job_id, "RUNNING")
    return await wait_job(
        client, namespace, name, lambda j: j["status"].get("jobStatus") == "RUNNING"
    )


async def test_a_rayjob_past_its_deadline_stops_its_ray_job_once(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    # HTTPMode, no shutdownAfterJobFinishes: the cluster is kept after the RayJob fails
    await kclient.create(rayjob("late", namespace, submissionMode="HTTPMode"))
    running = await _ray_job_running(kclient, namespace, "late", dashboard)
    job_id = running["status"]["jobId"]
    # the deadline passes now (set once the job runs, so the test needs no long wait)
    await kclient.patch(
        "ray.io/v1", "RayJob", "late", {"spec": {"activeDeadlineSeconds": 1}}, namespace
    )

    job = await wait_state(kclient, namespace, "late", "Failed", timeout=30)
    status = job["status"]
    stop = ("POST", f"/api/jobs/{job_id}/stop")
    assert dashboard.requests.count(stop) == 1
    assert dashboard.jobs[job_id]["status"] == "STOPPED"
    assert status["reason"] == "DeadlineExceeded"
    assert status["jobStatus"] == "RUNNING"  # as last observed, and said so
    assert status["message"].startswith("The RayJob has passed the activeDeadlineSeconds.")
    assert status["message"].endswith(
        f". Stopped Ray job {job_id}; jobStatus RUNNING is the last one observed."
    )
    events = await wait_events(kclient, namespace, "late", {"StoppedRayJob"})
    (stopped,) = [e for e in events if e["reason"] == "StoppedRayJob"]
    assert stopped["type"] == "Normal"
    assert stopped["note"] == (
        f"Stopped Ray job {job_id} on RayCluster {status['rayClusterName']}: "
        "the RayJob gave up on it"
    )
    await kclient.get("ray.io/v1", "RayCluster", status["rayClusterName"], namespace)  # kept

    # later passes (each change of the RayJob is one) stop nothing again
    for i in range(3):
        operator.poke("late")
        await kclient.patch(
            "ray.io/v1", "RayJob", "late", {"metadata": {"labels": {"pass": str(i)}}}, namespace
        )
        await asyncio.sleep(0.5)
    assert dashboard.requests.count(stop) == 1


async def test_a_stop_the_dashboard_does_not_carry_out_is_a_warning(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("stuck", namespace))  # K8sJobMode
    running = await _ray_job_running(kclient, namespace, "stuck", dashboard)
    job_id = running["status"]["jobId"]
    dashboard.stop_takes_effect = False  # answers {"stopped": false}, the job runs on
    await finish_submitter(kclient, namespace, "stuck", failed=True)

    job = await wait_state(kclient, namespace, "stuck", "Failed", timeout=30)
    status = job["status"]
    assert status["reason"] == "SubmissionFailed"
    assert f"Failed to stop Ray job {job_id}, it may still be running (" in status["message"]
    assert status["message"].endswith("jobStatus RUNNING is the last one observed.")
    events = await wait_events(kclient, namespace, "stuck", {"FailedToStopRayJob"})
    (warning,) = [e for e in events if e["reason"] == "FailedToStopRayJob"]
    assert warning["type"] == "Warning" and job_id in warning["note"]
    await eventually(
        lambda: dashboard.requests.count(("POST", f"/api/jobs/{job_id}/stop")) == 1,
        timeout=5,
        message="one stop",
    )
