"""A RayJob whose head is lost while its Ray job runs (issue 26, item 1).

In HTTPMode the operator is the submitter: when the new head's dashboard answers "job not
found", KubeRay submits the job again under the same submission id (``status.jobId``) and the
RayJob goes on to its end (and, with ``shutdownAfterJobFinishes``, deletes its cluster). In
K8sJobMode and SidecarMode a submitter does that (the Job's retried pod, the new head's
sidecar); the operator only waits for it.
"""

from __future__ import annotations

from typing import Any

from kuberay.kube import Client
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import (
    make_ready,
    rayjob,
    wait_gone,
    wait_job,
    wait_state,
)

SUBMIT = ("POST", "/api/jobs/")


async def _live_head(client: Client, namespace: str, cluster: str) -> dict[str, Any] | None:
    items, _ = await client.list_all(
        "v1", "Pod", namespace, label_selector=f"ray.io/cluster={cluster},ray.io/node-type=head"
    )
    live = [p for p in items if not p["metadata"].get("deletionTimestamp")]
    return live[0] if live else None


async def test_http_mode_job_is_resubmitted_after_the_head_is_lost(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(
        rayjob("lost", namespace, submissionMode="HTTPMode", shutdownAfterJobFinishes=True)
    )
    job = await wait_state(kclient, namespace, "lost", "Initializing")
    cluster, job_id = job["status"]["rayClusterName"], job["status"]["jobId"]
    await make_ready(kclient, namespace, cluster, dashboard)
    await wait_state(kclient, namespace, "lost", "Running")
    await eventually(lambda: job_id in dashboard.jobs, timeout=30, message="first submission")
    dashboard.set_job_status(job_id, "RUNNING")
    await wait_job(kclient, namespace, "lost", lambda j: j["status"].get("jobStatus") == "RUNNING")

    # The head pod dies; its replacement's GCS knows no job (no GCS fault tolerance).
    old_head = await _live_head(kclient, namespace, cluster)
    assert old_head is not None
    await kclient.delete("v1", "Pod", old_head["metadata"]["name"], namespace)
    dashboard.jobs.clear()

    async def new_head() -> dict[str, Any] | None:
        pod = await _live_head(kclient, namespace, cluster)
        return pod if pod and pod["metadata"]["uid"] != old_head["metadata"]["uid"] else None

    await eventually(new_head, timeout=60, message="a new head pod")
    await make_ready(kclient, namespace, cluster, dashboard)

    await eventually(
        lambda: job_id in dashboard.jobs, timeout=30, message="the job submitted again"
    )
    assert dashboard.requests.count(SUBMIT) == 2  # once per head, same submission id
    assert dashboard.jobs[job_id]["submission_id"] == job_id
    dashboard.set_job_status(job_id, "SUCCEEDED")
    job = await wait_state(kclient, namespace, "lost", "Complete")
    assert job["status"]["jobId"] == job_id and job["status"]["jobStatus"] == "SUCCEEDED"
    await wait_gone(kclient, "ray.io/v1", "RayCluster", namespace, cluster)
    assert dashboard.requests.count(SUBMIT) == 2
