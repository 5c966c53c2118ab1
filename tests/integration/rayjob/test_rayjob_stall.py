"""No reconcile waits on a Ray dashboard (issue 10's stall test), on the real apiserver.

50 RayJobs (half K8sJobMode, half HTTPMode) whose fake dashboards never answer, each on
its own loopback address, with a 600 s dashboard timeout: a reconcile worker that awaited
one of them would stay blocked for the whole test. The operator runs one reconcile worker
per controller, as KubeRay does. While every one of those calls is still open:

* 50 plain RayClusters, created afterwards, all reach ``ready``;
* a RayJob with a healthy dashboard, created after the hanging ones, is submitted through
  HTTPMode and reaches Complete;
* no RayJob reconcile took as long as the hanging calls have been open (controller-runtime's
  ``controller_runtime_reconcile_time_seconds`` histogram).

Nothing here is timed against a threshold: each claim is about what happened while the
hanging calls were provably still unanswered.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from kuberay.controllers.dashboard.poller import JOB_INFO, DashboardPoller
from kuberay.controllers.rayjob.setup import CONTROLLER_NAME
from kuberay.kube import Client
from kuberay.reconcile.metrics import RECONCILE_TIME
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.operator_harness import start_operator
from tests.integration.rayjob.helpers import make_ready, rayjob, state, wait_job, wait_state

HUNG = 50
CLUSTERS = 50
#: Dashboard timeout for this test: far longer than the test, so a hung call stays open.
DASHBOARD_TIMEOUT = 600.0
PARALLEL = 10  # kubelet stand-in: pods marked ready this many at a time


@contextlib.asynccontextmanager
async def stall_operator(client: Client, namespace: str) -> AsyncIterator[DashboardPoller]:
    """RayCluster + RayJob controllers, ONE worker each (KubeRay's default), the real
    poller and factory with ``DASHBOARD_TIMEOUT`` on every dashboard call."""
    async with start_operator(
        client,
        namespace,
        kinds=("raycluster", "rayjob"),
        workers=1,
        raycluster={"requeue_seconds": 10},
        dashboard_timeout=DASHBOARD_TIMEOUT,
        poller={"call_timeout": DASHBOARD_TIMEOUT},
    ) as op:
        assert op.poller is not None
        yield op.poller


def raycluster(name: str, namespace: str) -> dict[str, Any]:
    """A head-only RayCluster (the RayJob baseline's cluster spec)."""
    spec = rayjob(name, namespace)["spec"]["rayClusterSpec"]
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def reconcile_histogram() -> dict[float, float]:
    """The RayJob controller's reconcile-time histogram: upper bound -> cumulative count."""
    buckets: dict[float, float] = {}
    for family in RECONCILE_TIME.collect():
        for sample in family.samples:
            if (
                sample.name.endswith("_bucket")
                and sample.labels.get("controller") == CONTROLLER_NAME
            ):
                buckets[float(sample.labels["le"])] = sample.value
    return buckets


async def bounded_gather(calls: list[Callable[[], Awaitable[Any]]]) -> None:
    sem = asyncio.Semaphore(PARALLEL)

    async def run(call: Callable[[], Awaitable[Any]]) -> None:
        async with sem:
            await call()

    await asyncio.gather(*(run(c) for c in calls))


@pytest.fixture
async def hung_dashboards() -> AsyncIterator[list[FakeDashboard]]:
    """``HUNG`` fake dashboards that never answer, each on its own loopback address."""
    net = random.randint(20, 250)
    fakes = [FakeDashboard(f"127.{net}.{net}.{i + 2}", 8265) for i in range(HUNG)]
    async with contextlib.AsyncExitStack() as stack:
        for fake in fakes:
            fake.hang = True
            await stack.enter_async_context(fake)
        yield fakes


async def test_hanging_dashboards_stall_nothing_else(
    crds_installed: None,
    kclient: Client,
    namespace: str,
    hung_dashboards: list[FakeDashboard],
    dashboard: FakeDashboard,
) -> None:
    before = reconcile_histogram()
    async with stall_operator(kclient, namespace) as poller:
        # 1. the hanging RayJobs, each asking its dashboard for its job
        names = [f"hung-{i}" for i in range(HUNG)]
        for i, name in enumerate(names):
            mode = "HTTPMode" if i % 2 else "K8sJobMode"
            await kclient.create(rayjob(name, namespace, submissionMode=mode))

        async def start(name: str, fake: FakeDashboard) -> None:
            job = await wait_job(
                kclient, namespace, name, lambda j: bool(j.get("status", {}).get("rayClusterName"))
            )
            await make_ready(kclient, namespace, job["status"]["rayClusterName"], fake)
            await wait_state(kclient, namespace, name, "Running")

        await bounded_gather(
            [
                (lambda n=name, f=fake: start(n, f))
                for name, fake in zip(names, hung_dashboards, strict=True)
            ]
        )

        def unanswered() -> list[str]:
            """Hung RayJobs whose dashboard got a job lookup and no lookup ended."""
            return [
                name
                for name, fake in zip(names, hung_dashboards, strict=True)
                if fake.requests_to("/api/jobs/")
                and poller.outcome((namespace, name), JOB_INFO) is None
            ]

        await eventually(
            lambda: len(unanswered()) == HUNG,
            timeout=60,
            message="every hanging dashboard is asked for its job",
        )
        hung_since = asyncio.get_running_loop().time()

        # 2. a healthy RayJob and 50 plain RayClusters, all created after
        await kclient.create(rayjob("healthy", namespace, submissionMode="HTTPMode"))
        clusters = [f"plain-{i}" for i in range(CLUSTERS)]
        for name in clusters:
            await kclient.create(raycluster(name, namespace))
        healthy = await wait_job(
            kclient, namespace, "healthy", lambda j: bool(j.get("status", {}).get("jobId"))
        )
        job_id = healthy["status"]["jobId"]
        await bounded_gather(
            [lambda: make_ready(kclient, namespace, healthy["status"]["rayClusterName"], dashboard)]
            + [(lambda n=name: make_ready(kclient, namespace, n)) for name in clusters]
        )

        async def all_ready() -> bool:
            items, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
            ready = {
                i["metadata"]["name"]
                for i in items
                if (i.get("status") or {}).get("state") == "ready"
            }
            return set(clusters) <= ready

        await eventually(all_ready, timeout=90, interval=0.5, message="50 RayClusters ready")
        await eventually(lambda: job_id in dashboard.jobs, timeout=60, message="job submitted")
        dashboard.set_job_status(job_id, "SUCCEEDED")
        done = await wait_state(kclient, namespace, "healthy", "Complete", timeout=60)
        assert done["status"]["jobStatus"] == "SUCCEEDED"

        # 3. ... and all of it while every hanging call is still unanswered
        still_open = unanswered()
        open_for = asyncio.get_running_loop().time() - hung_since
        assert len(still_open) == HUNG, f"hung calls that ended: {set(names) - set(still_open)}"
        assert poller.in_flight >= HUNG
        for name in names[:3]:
            assert state(await kclient.get("ray.io/v1", "RayJob", name, namespace)) == "Running"

    # 4. no RayJob reconcile lasted as long as those calls have been open
    after = reconcile_histogram()
    new = {le: after[le] - before.get(le, 0.0) for le in after}
    total = new[float("inf")]
    within = max((le for le in new if le <= open_for), default=None)
    assert within is not None, f"the hanging calls were open only {open_for:.2f}s"
    slower = total - new[within]
    assert total > HUNG and slower == 0, (
        f"{slower:g} of {total:g} RayJob reconciles took longer than {within:g}s, while the "
        f"hanging dashboard calls had been open {open_for:.1f}s: {new}"
    )
