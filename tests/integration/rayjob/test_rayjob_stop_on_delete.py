"""Deleting a RayJob whose Ray job has not ended (issue 26, item 6): as KubeRay, the operator
asks the dashboard to stop the job first and removes ``ray.io/rayjob-finalizer`` after the
answer, whatever it is. A RayJob on a shared cluster (``clusterSelector``) must not leave its
job running there because the operator shut down between the two steps; a stop that gets no
answer still lets the RayJob go once the (bounded) call gives up."""

from __future__ import annotations

from typing import Any

from kuberay.kube import Client, NotFound
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import start_operator
from tests.integration.rayjob.helpers import (
    get_job,
    make_ready,
    rayjob,
    wait_gone,
    wait_job,
    wait_state,
)

FINALIZER = "ray.io/rayjob-finalizer"


async def _shared_cluster(client: Client, namespace: str, dashboard: FakeDashboard) -> None:
    spec = rayjob("x", namespace)["spec"]["rayClusterSpec"]
    await client.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": "shared", "namespace": namespace},
            "spec": spec,
        }
    )
    await make_ready(client, namespace, "shared", dashboard)


async def _running_on_shared(
    client: Client, namespace: str, name: str, dashboard: FakeDashboard
) -> str:
    """An HTTPMode RayJob on the shared cluster whose Ray job is RUNNING; its job id."""
    await client.create(
        rayjob(
            name,
            namespace,
            submissionMode="HTTPMode",
            clusterSelector={"ray.io/cluster": "shared"},
            rayClusterSpec=None,
        )
    )
    job = await wait_state(client, namespace, name, "Running")
    job_id = str(job["status"]["jobId"])
    await eventually(lambda: job_id in dashboard.jobs, timeout=30, message="submitted")
    dashboard.set_job_status(job_id, "RUNNING")
    await wait_job(client, namespace, name, lambda j: j["status"].get("jobStatus") == "RUNNING")
    return job_id


async def test_shutdown_during_the_stop_keeps_the_rayjob_until_its_job_is_stopped(
    crds_installed: None, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    # A dashboard client timeout longer than the test: the stop stays unanswered until the
    # operator shuts down.
    async with start_operator(kclient, namespace, dashboard_timeout=120):
        await _shared_cluster(kclient, namespace, dashboard)
        job_id = await _running_on_shared(kclient, namespace, "sel", dashboard)
        dashboard.hang = True
        await kclient.delete("ray.io/v1", "RayJob", "sel", namespace)
        stop = ("POST", f"/api/jobs/{job_id}/stop")
        await eventually(lambda: stop in dashboard.requests, timeout=30, message="stop sent")
        held: dict[str, Any] = await get_job(kclient, namespace, "sel")
        assert held["metadata"].get("deletionTimestamp")
        assert FINALIZER in held["metadata"]["finalizers"]  # kept while the stop is pending
    dashboard.hang = False

    # The operator shut down before the stop was answered: the RayJob is still there...
    held = await get_job(kclient, namespace, "sel")
    assert FINALIZER in held["metadata"]["finalizers"]
    assert dashboard.jobs[job_id]["status"] == "RUNNING"
    # ...and the next operator stops the job, then lets the RayJob go.
    async with start_operator(kclient, namespace):
        await wait_gone(kclient, "ray.io/v1", "RayJob", namespace, "sel")
        assert dashboard.jobs[job_id]["status"] == "STOPPED"
    await kclient.get("ray.io/v1", "RayCluster", "shared", namespace)  # never deleted


async def test_a_stop_without_an_answer_does_not_keep_the_rayjob(
    crds_installed: None, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    async with start_operator(kclient, namespace):
        await _shared_cluster(kclient, namespace, dashboard)
        job_id = await _running_on_shared(kclient, namespace, "mute", dashboard)
        dashboard.hang = True
        await kclient.delete("ray.io/v1", "RayJob", "mute", namespace)
        await wait_gone(kclient, "ray.io/v1", "RayJob", namespace, "mute", timeout=60)
        assert ("POST", f"/api/jobs/{job_id}/stop") in dashboard.requests
        try:
            await get_job(kclient, namespace, "mute")
            raise AssertionError("the RayJob should be gone")
        except NotFound:
            pass
