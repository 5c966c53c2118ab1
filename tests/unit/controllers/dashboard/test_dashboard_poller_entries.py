"""DashboardPoller: one entry per owner and call name, pruning, a lost job submitted again,
a stop whose outcome the caller waits for (issue 26, items 1, 4 and 6), a submission's outcome
read without sending (issue 45)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator

import pytest

from kuberay.controllers.dashboard import (
    BadResponse,
    DashboardClient,
    DashboardPoller,
    JobNotFound,
)
from kuberay.http import OriginPools
from kuberay.testing import FakeDashboard
from tests.helpers import eventually
from tests.unit.controllers.dashboard.test_dashboard_poller import A, B, Clock, Notified, Source
from tests.unit.controllers.dashboard.test_dashboard_poller import target as _target

SUBMIT = ("POST", "/api/jobs/")


@pytest.fixture
async def dash() -> AsyncIterator[FakeDashboard]:
    async with FakeDashboard("127.0.0.43", 0) as fd:
        yield fd


@pytest.fixture
async def source(dash: FakeDashboard) -> AsyncIterator[Source]:
    async with contextlib.AsyncExitStack() as stack:
        pools = OriginPools()
        stack.push_async_callback(pools.close)
        s = Source(pools)
        s.urls = {"rc": dash.url}
        yield s


async def test_a_job_lost_after_its_submission_is_submitted_again(
    source: Source, dash: FakeDashboard
) -> None:
    clock = Clock()
    poller = DashboardPoller(source, clock=clock)
    notified = Notified()
    poller.on_result = notified
    t = _target("rc")
    body = {"entrypoint": "python run.py"}
    try:
        poller.job_info(A, t, "s", max_age=0)
        await notified.wait(A)
        first = poller.job_info(A, t, "s", max_age=math.inf)
        assert first is not None and isinstance(first.error, JobNotFound)
        clock.now += 1
        poller.submit_job(A, t, body, "s", not_found_at=first.started_at)
        await notified.wait(A)
        clock.now += 1
        # The "not found" was read before the submission: nothing to send again.
        done = poller.submit_job(A, t, body, "s", not_found_at=first.started_at)
        assert done is not None and done.ok and poller.in_flight == 0
        poller.job_info(A, t, "s", max_age=0)
        await notified.wait(A)
        found = poller.job_info(A, t, "s", max_age=math.inf)
        assert found is not None and found.ok

        dash.jobs.clear()  # the head is replaced: its GCS has no job
        poller.job_info(A, t, "s", max_age=0)
        await notified.wait(A)
        lost = poller.job_info(A, t, "s", max_age=math.inf)
        assert lost is not None and isinstance(lost.error, JobNotFound)
        assert lost.started_at > done.finished_at
        poller.submit_job(A, t, body, "s", not_found_at=lost.started_at)
        await eventually(lambda: dash.requests.count(SUBMIT) == 2, message="submitted again")
        assert dash.jobs["s"]["submission_id"] == "s"
    finally:
        await poller.close()


async def test_submit_outcome_reads_what_submit_job_returns_without_sending(
    source: Source, dash: FakeDashboard
) -> None:
    """A RayJob pass reads its submission's outcome before deciding to (re)submit: the same
    outcome ``submit_job`` returns, including the last one while a retry is in flight."""
    clock = Clock()
    poller = DashboardPoller(source, clock=clock, retry_after=3)
    notified = Notified()
    poller.on_result = notified
    t, body = _target("rc"), {"entrypoint": "echo"}
    try:
        assert poller.submit_outcome(A, t, "s") is None  # never asked: nothing sent
        dash.fail_with = 503
        poller.submit_job(A, t, body, "s")
        assert poller.submit_outcome(A, t, "s") is None  # in flight, none finished
        await notified.wait(A)
        failed = poller.submit_outcome(A, t, "s")
        assert failed is not None and isinstance(failed.error, BadResponse)
        dash.fail_with = None
        clock.now += 3
        assert poller.submit_job(A, t, body, "s") is failed  # the retry is sent
        assert poller.submit_outcome(A, t, "s") is failed  # still the last finished one
        assert poller.submit_outcome(A, t, "other") is None  # another submission
        assert poller.submit_outcome(A, _target("elsewhere"), "s") is None  # another cluster
        await notified.wait(A)
        assert dash.requests.count(SUBMIT) == 2  # reading sent none
    finally:
        await poller.close()


async def test_one_entry_per_owner_and_call_name(source: Source, dash: FakeDashboard) -> None:
    clock = Clock()
    poller = DashboardPoller(source, clock=clock)
    notified = Notified()
    poller.on_result = notified
    t = _target("rc")

    async def put(client: DashboardClient) -> None:
        await client.list_jobs()

    try:
        for attempt in range(20):  # a RayJob retried under new job ids
            poller.job_info(A, t, f"job-{attempt}")
            poller.submit_job(A, t, {"entrypoint": "echo"}, f"job-{attempt}")
            poller.call(B, "serve-update/rc", t, put, max_age=math.inf, key=attempt)
            poller.call(B, f"serve-details/rc-{attempt}", t, put, max_age=1.0)
            await notified.wait(B)
        assert poller.entries == 2 + 1 + 20
        # A RayService keeps the calls to its live clusters only.
        poller.forget(B, keep=lambda name: name in ("serve-update/rc", "serve-details/rc-19"))
        assert poller.entries == 2 + 2
        poller.forget(A)
        poller.forget(B)
        assert poller.entries == 0
    finally:
        await poller.close()


async def test_a_stop_is_tried_once_and_its_outcome_kept(
    source: Source, dash: FakeDashboard
) -> None:
    clock = Clock()
    poller = DashboardPoller(source, clock=clock, retry_after=1)
    notified = Notified()
    poller.on_result = notified
    t = _target("rc")
    dash.add_job("j", status="RUNNING")
    try:
        dash.fail_with = 503
        assert poller.stop_job(A, t, "j") is None
        await notified.wait(A)
        failed = poller.stop_job(A, t, "j")
        assert failed is not None and isinstance(failed.error, BadResponse)
        clock.now += 60
        assert poller.stop_job(A, t, "j") is failed and poller.in_flight == 0

        dash.fail_with = None
        assert poller.stop_job(B, t, "j") is None
        await notified.wait(B)
        stopped = poller.stop_job(B, t, "j")
        assert stopped is not None and stopped.ok
        assert dash.jobs["j"]["status"] == "STOPPED"
    finally:
        await poller.close()
