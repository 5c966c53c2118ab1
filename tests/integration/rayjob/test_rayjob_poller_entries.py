"""The dashboard poller keeps only what exists now (issue 26, item 4): a RayJob retried on
new clusters under new job ids keeps one lookup and one submission in the poller, whatever
the number of retries, and none once it is deleted."""

from __future__ import annotations

from kuberay.kube import Client
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import make_ready, rayjob, state, wait_gone, wait_job

RETRIES = 10  # 20 (the count) keeps it at 2 too; before the fix: 22


async def test_retries_leave_no_poller_entries_behind(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("many", namespace, submissionMode="HTTPMode", backoffLimit=RETRIES))
    entries: list[int] = []
    job_ids: list[str] = []
    for _ in range(RETRIES + 1):
        job = await wait_job(
            kclient,
            namespace,
            "many",
            lambda j: state(j) == "Initializing" and j["status"].get("jobId") not in job_ids,
            message="a new attempt",
        )
        cluster, job_id = job["status"]["rayClusterName"], job["status"]["jobId"]
        job_ids.append(job_id)
        await make_ready(kclient, namespace, cluster, dashboard)
        await wait_job(
            kclient,
            namespace,
            "many",
            lambda j, job_id=job_id: (
                j["status"].get("jobId") == job_id and j["status"].get("jobStatus") == "PENDING"
            ),
            message=f"{job_id} submitted and seen",
        )
        entries.append(operator.poller.entries)
        dashboard.set_job_status(job_id, "FAILED")
    job = await wait_job(kclient, namespace, "many", lambda j: state(j) == "Failed")
    assert job["status"]["failed"] == RETRIES + 1
    print(f"poller entries per attempt: {entries}")
    assert entries == [entries[0]] * len(entries) and entries[0] <= 2, entries

    await kclient.delete("ray.io/v1", "RayJob", "many", namespace)
    await wait_gone(kclient, "ray.io/v1", "RayJob", namespace, "many")
    await eventually(lambda: operator.poller.entries == 0, message="entries of the deleted RayJob")
