"""Token-auth RayJobs read their auth Secret from the operator's cache (issue 26, item 5):
polling their dashboards costs no Secret GETs, so the apiserver's rate limit never slows the
polls (before: one Secret GET per dashboard call, every job polled every ~15 s at 300 jobs)."""

from __future__ import annotations

import asyncio

from kuberay.kube import Client
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.integration.apiserver_metrics import apiserver_requests
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import make_ready, rayjob, state, wait_job

JOBS = 6
WINDOW = 12.0  # seconds: four 3 s status polls of every job


async def test_polling_token_auth_jobs_reads_no_secret_from_the_apiserver(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    names = [f"tok-{i}" for i in range(JOBS)]
    for name in names:
        job = rayjob(name, namespace, submissionMode="HTTPMode")
        job["spec"]["rayClusterSpec"]["authOptions"] = {"mode": "token"}
        await kclient.create(job)
    for name in names:
        job = await wait_job(
            kclient, namespace, name, lambda j: bool((j.get("status") or {}).get("rayClusterName"))
        )
        await make_ready(kclient, namespace, job["status"]["rayClusterName"], dashboard)
    for name in names:
        await wait_job(
            kclient,
            namespace,
            name,
            lambda j: (
                state(j) == "Running" and j["status"].get("jobStatus") in ("PENDING", "RUNNING")
            ),
            message="submitted and polled",
        )
    calls_before = len(dashboard.request_headers)
    gets_before = await apiserver_requests(kclient, resource="secrets", verb="GET")
    await asyncio.sleep(WINDOW)
    gets = await apiserver_requests(kclient, resource="secrets", verb="GET") - gets_before
    calls = len(dashboard.request_headers) - calls_before
    tokens = {h.get("x-ray-authorization") for h in dashboard.request_headers[calls_before:]}
    print(f"{JOBS} token-auth RayJobs, {WINDOW:.0f} s: {calls} dashboard calls, {gets} Secret GETs")
    assert calls >= JOBS * 2, f"only {calls} dashboard calls in {WINDOW} s"
    assert len(tokens) == JOBS and None not in tokens  # each job's own cluster token
    assert gets == 0, f"{gets} Secret GETs for {calls} dashboard calls"
