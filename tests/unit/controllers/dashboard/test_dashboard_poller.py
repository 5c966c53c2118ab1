"""DashboardPoller: background calls, bounded concurrency, change-only notifications."""

from __future__ import annotations

import asyncio
import gc
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.controllers.dashboard import (
    BadResponse,
    DashboardClient,
    DashboardPoller,
    DashboardTarget,
    DashboardUnreachable,
    DuplicateSubmissionId,
    JobNotFound,
    ServeProxyTarget,
)
from kuberay.controllers.dashboard.client import client_at
from kuberay.http import OriginPools
from kuberay.reconcile.options import ManagerOptions
from kuberay.testing import FakeDashboard
from tests.helpers import eventually

A = ("ns", "job-a")
B = ("ns", "job-b")


def target(cluster: str) -> DashboardTarget:
    return DashboardTarget(namespace="ns", cluster_name=cluster, head_service=f"{cluster}-head-svc")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Source:
    """Clients for fake dashboards, by cluster name (stands in for the factory)."""

    def __init__(self, pools: OriginPools, timeout: float = 30.0) -> None:
        self.pools = pools
        self.timeout = timeout
        self.urls: dict[str, str] = {}
        self.asked: list[str] = []

    async def client_for(self, t: DashboardTarget | ServeProxyTarget) -> DashboardClient:
        assert isinstance(t, DashboardTarget)
        self.asked.append(t.cluster_name)
        return client_at(self.pools, self.urls[t.cluster_name], timeout=self.timeout)


class Notified:
    """Records on_result calls and lets a test wait for the next one of an owner."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self._events: dict[tuple[str, str], asyncio.Event] = {}

    def __call__(self, owner: tuple[str, str]) -> None:
        self.calls.append(owner)
        self._events.setdefault(owner, asyncio.Event()).set()

    async def wait(self, owner: tuple[str, str], timeout: float = 10.0) -> None:
        event = self._events.setdefault(owner, asyncio.Event())
        await asyncio.wait_for(event.wait(), timeout)
        event.clear()


@pytest.fixture
async def loop_errors() -> AsyncIterator[list[dict[str, Any]]]:
    """Errors the event loop reports (destroyed pending tasks, unretrieved exceptions)."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, ctx: errors.append(ctx))
    yield errors
    loop.set_exception_handler(previous)


@pytest.fixture
async def pools() -> AsyncIterator[OriginPools]:
    made = OriginPools()
    yield made
    await made.close()


@pytest.fixture
async def dash_a() -> AsyncIterator[FakeDashboard]:
    async with FakeDashboard("127.0.0.41", 0) as fd:
        yield fd


@pytest.fixture
async def dash_b() -> AsyncIterator[FakeDashboard]:
    async with FakeDashboard("127.0.0.42", 0) as fd:
        yield fd


@pytest.fixture
async def source(pools: OriginPools, dash_a: FakeDashboard, dash_b: FakeDashboard) -> Source:
    s = Source(pools)
    s.urls = {"rc-a": dash_a.url, "rc-b": dash_b.url}
    return s


async def test_job_info_never_awaits_and_notifies_the_owner(
    source: Source, dash_a: FakeDashboard
) -> None:
    dash_a.add_job("j1", status="RUNNING")
    poller = DashboardPoller(source)
    notified = Notified()
    poller.on_result = notified
    try:
        assert poller.job_info(A, target("rc-a"), "j1") is None  # nothing finished yet
        await notified.wait(A)
        got = poller.job_info(A, target("rc-a"), "j1")
        assert got is not None and got.error is None and got.value is not None
        assert got.value.status == "RUNNING"
    finally:
        await poller.close()


async def test_hanging_dashboard_of_one_owner_does_not_delay_another(
    source: Source, dash_a: FakeDashboard, dash_b: FakeDashboard
) -> None:
    dash_a.hang = True
    dash_a.add_job("ja")
    dash_b.add_job("jb", status="SUCCEEDED")
    poller = DashboardPoller(source, max_in_flight=4)
    notified = Notified()
    poller.on_result = notified
    try:
        poller.job_info(A, target("rc-a"), "ja")  # asked first, never answered
        poller.job_info(B, target("rc-b"), "jb")
        await notified.wait(B)
        b = poller.job_info(B, target("rc-b"), "jb")
        assert b is not None and b.value is not None and b.value.status == "SUCCEEDED"
        # A's call is still in flight: no outcome, no notification, no second request.
        assert poller.job_info(A, target("rc-a"), "ja", max_age=0) is None
        assert A not in notified.calls
        assert dash_a.requests == [("GET", "/api/jobs/ja")]
    finally:
        await poller.close()


async def test_one_call_in_flight_per_owner_and_name(source: Source, dash_a: FakeDashboard) -> None:
    dash_a.hang = True
    poller = DashboardPoller(source)
    try:
        for _ in range(20):
            poller.job_info(A, target("rc-a"), "j", max_age=0)
        await eventually(lambda: dash_a.requests, message="request never arrived")
        assert poller.in_flight == 1
        assert source.asked == ["rc-a"]
        # Another owner has its own slot.
        poller.job_info(B, target("rc-a"), "j", max_age=0)
        assert poller.in_flight == 2
    finally:
        await poller.close()


async def test_global_bound_on_calls_in_flight() -> None:
    running = 0
    peak = 0
    release = asyncio.Event()
    started = asyncio.Event()

    class Blocking:
        async def client_for(self, t: DashboardTarget | ServeProxyTarget) -> DashboardClient:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            if running == 2:
                started.set()
            try:
                await release.wait()
            finally:
                running -= 1
            raise DashboardUnreachable("no endpoint")

    poller = DashboardPoller(Blocking(), max_in_flight=2)
    notified = Notified()
    poller.on_result = notified
    try:
        owners = [("ns", f"j{i}") for i in range(6)]
        for owner in owners:
            poller.job_info(owner, target("rc"), "x")
        await asyncio.wait_for(started.wait(), 10)
        await asyncio.sleep(0)  # let any further task reach the semaphore
        assert running == 2 and poller.in_flight == 6
        release.set()
        await eventually(lambda: len(set(notified.calls)) == 6, message="not all finished")
        assert peak == 2
        got = poller.job_info(owners[-1], target("rc"), "x")
        assert got is not None and isinstance(got.error, DashboardUnreachable)
    finally:
        await poller.close()


async def test_on_result_only_when_the_outcome_changes(
    source: Source, dash_a: FakeDashboard
) -> None:
    dash_a.add_job("j", status="RUNNING")
    clock = Clock()
    poller = DashboardPoller(source, clock=clock)
    notified = Notified()
    poller.on_result = notified
    try:
        poller.job_info(A, target("rc-a"), "j")
        await notified.wait(A)
        assert notified.calls == [A]
        # Young outcome: no new request.
        clock.now += 1
        poller.job_info(A, target("rc-a"), "j", max_age=3)
        assert poller.in_flight == 0
        # Old outcome: refreshed; same answer -> no notification.
        clock.now += 5
        poller.job_info(A, target("rc-a"), "j", max_age=3)
        assert poller.in_flight == 1
        await eventually(lambda: poller.in_flight == 0, message="refresh never ended")
        assert len(dash_a.requests) == 2 and notified.calls == [A]
        # The job moves on -> the next refresh notifies.
        dash_a.set_job_status("j", "SUCCEEDED")
        clock.now += 5
        poller.job_info(A, target("rc-a"), "j", max_age=3)
        await notified.wait(A)
        got = poller.job_info(A, target("rc-a"), "j", max_age=3)
        assert got is not None and got.value is not None and got.value.status == "SUCCEEDED"
        assert got.finished_at == clock.now
    finally:
        await poller.close()


async def test_same_error_twice_notifies_once(source: Source, dash_a: FakeDashboard) -> None:
    clock = Clock()
    poller = DashboardPoller(source, clock=clock)
    notified = Notified()
    poller.on_result = notified
    try:
        poller.job_info(A, target("rc-a"), "missing")
        await notified.wait(A)
        clock.now += 10
        poller.job_info(A, target("rc-a"), "missing")
        await eventually(lambda: poller.in_flight == 0, message="refresh never ended")
        assert notified.calls == [A]
        got = poller.job_info(A, target("rc-a"), "missing", max_age=math.inf)
        assert got is not None and isinstance(got.error, JobNotFound)
    finally:
        await poller.close()


async def test_new_job_id_replaces_the_old_call(source: Source, dash_a: FakeDashboard) -> None:
    dash_a.hang = True
    poller = DashboardPoller(source)
    try:
        poller.job_info(A, target("rc-a"), "old")
        await eventually(lambda: dash_a.requests, message="request never arrived")
        (old_task,) = poller._tasks
        assert poller.job_info(A, target("rc-a"), "new") is None
        await eventually(lambda: old_task.cancelled(), message="old call not cancelled")
        assert poller.in_flight == 1
    finally:
        await poller.close()


async def test_forget_cancels_and_drops(
    source: Source, dash_a: FakeDashboard, loop_errors: list[dict[str, Any]]
) -> None:
    dash_a.hang = True
    poller = DashboardPoller(source)
    notified = Notified()
    poller.on_result = notified
    try:
        poller.job_info(A, target("rc-a"), "j")
        await eventually(lambda: dash_a.requests, message="request never arrived")
        poller.forget(A)
        await eventually(lambda: poller.in_flight == 0, message="call not cancelled")
        assert poller.outcome(A, "job_info") is None and notified.calls == []
    finally:
        await poller.close()
    gc.collect()
    assert loop_errors == []


async def test_close_cancels_everything_cleanly(
    source: Source, dash_a: FakeDashboard, loop_errors: list[dict[str, Any]]
) -> None:
    dash_a.hang = True
    poller = DashboardPoller(source)
    for i in range(5):
        poller.job_info(("ns", f"j{i}"), target("rc-a"), "j")
    poller.stop_job(A, target("rc-a"), "j")
    await eventually(lambda: len(dash_a.requests) == 6, message="requests never arrived")
    await poller.close()
    assert poller.in_flight == 0
    # Closed: asking starts nothing.
    assert poller.job_info(A, target("rc-a"), "j") is None and poller.in_flight == 0
    gc.collect()
    assert loop_errors == []


async def test_submit_once_then_job_info_is_refreshed(
    source: Source, dash_a: FakeDashboard
) -> None:
    clock = Clock()
    poller = DashboardPoller(source, clock=clock)
    notified = Notified()
    poller.on_result = notified
    t = target("rc-a")
    try:
        poller.job_info(A, t, "sub-1", max_age=math.inf)
        await notified.wait(A)
        first = poller.job_info(A, t, "sub-1", max_age=math.inf)
        assert first is not None and isinstance(first.error, JobNotFound)

        body = {"entrypoint": "python run.py"}
        assert poller.submit_job(A, t, body, "sub-1") is None
        await notified.wait(A)
        done = poller.submit_job(A, t, body, "sub-1")
        assert done is not None and done.value == "sub-1"
        assert dash_a.jobs["sub-1"]["entrypoint"] == "python run.py"
        clock.now += 3600
        poller.submit_job(A, t, body, "sub-1")  # a success is never repeated
        assert dash_a.requests_to("/api/jobs/").count(("POST", "/api/jobs/")) == 1

        # The submission made the stored 404 out of date: refreshed despite max_age=inf.
        poller.job_info(A, t, "sub-1", max_age=math.inf)
        await notified.wait(A)
        got = poller.job_info(A, t, "sub-1", max_age=math.inf)
        assert got is not None and got.value is not None and got.value.status == "PENDING"
    finally:
        await poller.close()


async def test_failed_submit_is_retried_after_a_while_duplicate_is_not(
    source: Source, dash_a: FakeDashboard
) -> None:
    clock = Clock()
    poller = DashboardPoller(source, clock=clock, retry_after=3)
    notified = Notified()
    poller.on_result = notified
    t = target("rc-a")
    body = {"entrypoint": "echo"}
    try:
        dash_a.fail_with = 503
        poller.submit_job(A, t, body, "s")
        await notified.wait(A)
        got = poller.submit_job(A, t, body, "s")
        assert got is not None and isinstance(got.error, BadResponse)
        clock.now += 1
        poller.submit_job(A, t, body, "s")
        assert poller.in_flight == 0  # too early to retry

        dash_a.fail_with = None
        dash_a.add_job("s")  # someone else took the id meanwhile
        clock.now += 3
        poller.submit_job(A, t, body, "s")
        await notified.wait(A)
        got = poller.submit_job(A, t, body, "s")
        assert got is not None and isinstance(got.error, DuplicateSubmissionId)
        clock.now += 60
        poller.submit_job(A, t, body, "s")
        assert poller.in_flight == 0
        assert dash_a.requests.count(("POST", "/api/jobs/")) == 2
    finally:
        await poller.close()


async def test_stop_survives_forget(source: Source, dash_a: FakeDashboard) -> None:
    dash_a.add_job("j", status="RUNNING")
    poller = DashboardPoller(source)
    try:
        poller.stop_job(A, target("rc-a"), "j")
        poller.forget(A)  # the RayJob is gone right after asking
        await eventually(
            lambda: dash_a.jobs["j"]["status"] == "STOPPED", message="stop never arrived"
        )
        await eventually(lambda: poller.in_flight == 0, message="stop never ended")
    finally:
        await poller.close()


async def test_stop_outcome_reads_without_sending(source: Source, dash_a: FakeDashboard) -> None:
    """A RayJob that gave up reads its stop's outcome each pass without sending another."""
    dash_a.add_job("j", status="RUNNING")
    poller = DashboardPoller(source)
    notified = Notified()
    poller.on_result = notified
    try:
        assert poller.stop_outcome(A, target("rc-a"), "j") is None  # never asked: nothing sent
        assert poller.stop_job(A, target("rc-a"), "j") is None
        assert poller.stop_outcome(A, target("rc-a"), "j") is None  # in flight
        await notified.wait(A)
        done = poller.stop_outcome(A, target("rc-a"), "j")
        assert done is not None and done.error is None
        assert poller.stop_outcome(A, target("rc-a"), "other") is None  # another job
        assert poller.stop_outcome(A, target("rc-b"), "j") is None  # another cluster
        assert dash_a.requests.count(("POST", "/api/jobs/j/stop")) == 1
        poller.forget(A, keep=lambda name: name != "stop_job")
        assert poller.stop_outcome(A, target("rc-a"), "j") is None
    finally:
        await poller.close()


async def test_generic_call_and_unexpected_exceptions(source: Source) -> None:
    poller = DashboardPoller(source)
    notified = Notified()
    poller.on_result = notified

    async def broken(client: DashboardClient) -> int:
        raise RuntimeError("bug")

    try:
        assert poller.call(A, "serve/x", target("rc-a"), broken, max_age=math.inf) is None
        await notified.wait(A)
        got = poller.call(A, "serve/x", target("rc-a"), broken, max_age=math.inf)
        assert got is not None and got.value is None and "bug" in str(got.error)
    finally:
        await poller.close()


async def test_on_result_errors_do_not_break_the_poller(
    source: Source, dash_a: FakeDashboard
) -> None:
    dash_a.add_job("j")
    poller = DashboardPoller(source)

    def explode(owner: tuple[str, str]) -> None:
        raise RuntimeError("enqueue failed")

    poller.on_result = explode
    try:
        poller.job_info(A, target("rc-a"), "j")
        await eventually(lambda: poller.outcome(A, "job_info"), message="no outcome")
        got = poller.job_info(A, target("rc-a"), "j", max_age=math.inf)
        assert got is not None and got.value is not None
    finally:
        await poller.close()


async def test_manager_shutdown_closes_the_poller(dash_a: FakeDashboard) -> None:
    from types import SimpleNamespace

    from kuberay.controllers.dashboard import setup_dashboard_poller
    from kuberay.kube import Client
    from kuberay.reconcile import Manager

    dash_a.hang = True
    dash_a.add_job("j")
    config = SimpleNamespace(host="https://127.0.0.1:1", tls_server_name=None)
    mgr = Manager(
        Client(config),
        ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            handle_signals=False,
        ),
    )
    poller = setup_dashboard_poller(mgr, env={"KUBERNETES_SERVICE_HOST": "10.96.0.1"})
    run = asyncio.create_task(mgr.run())
    await asyncio.wait_for(mgr.leading.wait(), 10)
    # In a pod the factory needs the Service: answer it from a stub instead of an apiserver.
    poller.factory = Source(OriginPools())  # type: ignore[assignment]
    poller.factory.urls["rc-a"] = dash_a.url  # type: ignore[attr-defined]
    poller.job_info(A, target("rc-a"), "j")
    await eventually(lambda: dash_a.requests, message="request never arrived")
    mgr.stop()
    await asyncio.wait_for(run, 30)
    assert poller.in_flight == 0
    assert poller.job_info(A, target("rc-a"), "j") is None and poller.in_flight == 0
    await poller.factory.pools.close()  # type: ignore[attr-defined]


async def test_serve_update_retried_on_failure_and_refreshes_status(
    source: Source, dash_a: FakeDashboard
) -> None:
    clock = Clock()
    poller = DashboardPoller(source, clock=clock, retry_after=3)
    notified = Notified()
    poller.on_result = notified
    t = target("rc-a")
    config = {"applications": [{"name": "app", "import_path": "m:app"}]}

    def status() -> Any:
        async def get(client: DashboardClient) -> Any:
            return await client.get_serve_details()

        return poller.call(A, "serve_details", t, get, max_age=math.inf)

    def update() -> Any:
        async def put(client: DashboardClient) -> None:
            await client.update_serve_applications(config)

        return poller.call(
            A,
            "serve_update/v1",
            t,
            put,
            max_age=math.inf,
            retry_failures=True,
            invalidates="serve_details",
        )

    try:
        status()
        await notified.wait(A)
        assert status().value.applications == {}
        dash_a.fail_with = 500
        update()
        await notified.wait(A)
        assert isinstance(update().error, BadResponse)
        dash_a.fail_with = None
        clock.now += 3
        update()  # retried
        await notified.wait(A)
        assert update().ok and dash_a.serve_config == config
        status()  # out of date after the update, despite max_age=inf
        await notified.wait(A)
        assert status().value.applications["app"].status == "DEPLOYING"
        assert dash_a.requests.count(("PUT", "/api/serve/applications/")) == 2
    finally:
        await poller.close()


async def test_unreachable_dashboard_is_polled_with_backoff(source: Source) -> None:
    async with FakeDashboard("127.0.0.43", 0) as gone:
        source.urls["rc-gone"] = gone.url
    clock = Clock()
    poller = DashboardPoller(source, clock=clock, retry_after=3, max_backoff=12)
    t = target("rc-gone")

    async def ask_after(seconds: float) -> int:
        """Advance the clock, ask, let any call end; how many calls were made so far."""
        clock.now += seconds
        poller.job_info(A, t, "j", max_age=3)
        await eventually(lambda: poller.in_flight == 0, message="call never ended")
        return source.asked.count("rc-gone")

    try:
        assert await ask_after(0) == 1
        assert await ask_after(3) == 2  # a first failure is retried at the normal pace
        assert await ask_after(3) == 2  # then 6 s
        assert await ask_after(3) == 3
        assert await ask_after(6) == 3  # then 12 s (the cap)
        assert await ask_after(6) == 4
        assert await ask_after(12) == 5  # capped
        got = poller.job_info(A, t, "j", max_age=3)
        assert got is not None and isinstance(got.error, DashboardUnreachable)
    finally:
        await poller.close()


async def test_dead_dashboards_cannot_take_every_slot(
    pools: OriginPools, dash_a: FakeDashboard, dash_b: FakeDashboard
) -> None:
    source = Source(pools, timeout=0.05)
    source.urls = {"rc-a": dash_a.url, "rc-b": dash_b.url}
    dash_a.hang = True
    dash_b.add_job("jb")
    clock = Clock()
    poller = DashboardPoller(source, clock=clock, max_in_flight=4)  # 1 suspect slot
    notified = Notified()
    poller.on_result = notified
    dead = [("ns", f"dead-{i}") for i in range(4)]
    try:
        for owner in dead:  # first round: they time out and become suspect
            poller.job_info(owner, target("rc-a"), "ja")
        for owner in dead:
            await notified.wait(owner)
        assert len(dash_a.requests) == 4
        source.timeout = 30.0  # from now on the dead dashboard holds its calls
        clock.now += 3
        for owner in dead:
            poller.job_info(owner, target("rc-a"), "ja")
        await eventually(lambda: len(dash_a.requests) == 5, message="suspect call not sent")
        poller.job_info(B, target("rc-b"), "jb")
        await notified.wait(B)  # a live dashboard still gets a slot at once
        assert len(dash_a.requests) == 5  # only one suspect call at a time
        assert poller.in_flight == 4
    finally:
        await poller.close()
