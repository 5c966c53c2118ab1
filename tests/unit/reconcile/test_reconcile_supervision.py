"""The Manager supervises its background tasks: one that dies (or returns while the
manager runs) is logged with its name and traceback and turns /healthz into 500
naming it; a normal run keeps /healthz at 200.

Everything runs in-process: a Manager whose only controller has no watch sources
(so no apiserver is needed), its probe server on 127.0.0.1:0.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import prometheus_client
import pytest
from kubernetes_asyncio import client as k8s_client

from kuberay.informers import Reflector
from kuberay.kube import Client
from kuberay.logging import configure_logging
from kuberay.reconcile import Controller, Manager, Request, Result
from kuberay.reconcile.options import ManagerOptions
from kuberay.workqueue import DelayingQueue
from tests.helpers import eventually

CTRL = "supervised"


class Recorder:
    """Reconciler: records requests; asks once for a short requeue_after per name."""

    def __init__(self) -> None:
        self.calls: list[Request] = []

    async def reconcile(self, request: Request) -> Result:
        self.calls.append(request)
        if self.calls.count(request) == 1:
            return Result(requeue_after=0.05)
        return Result()


def new_manager() -> tuple[Manager, Controller, Recorder]:
    cfg = k8s_client.Configuration()
    cfg.host = "http://127.0.0.1:1"  # never contacted: nothing is watched
    mgr = Manager(
        Client(cfg),
        ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="127.0.0.1:0",
            handle_signals=False,
        ),
        registry=prometheus_client.CollectorRegistry(),
    )
    reconciler = Recorder()
    ctrl = Controller(CTRL, reconciler, max_concurrent_reconciles=2)
    mgr.add_controller(ctrl)
    return mgr, ctrl, reconciler


@contextlib.asynccontextmanager
async def running(mgr: Manager, ctrl: Controller) -> AsyncIterator[str]:
    """Run ``mgr`` until the block ends (then stop it and await run()); yields the
    probe server's base URL once the controller's workers are started."""
    task = asyncio.create_task(mgr.run())
    try:
        await eventually(lambda: ctrl.started or task.done(), timeout=30, message="started")
        if task.done():
            await task
        yield f"http://127.0.0.1:{mgr.servers['probes'].port}"
    finally:
        mgr.stop()
        await asyncio.wait_for(task, 30)
        await mgr.client.close()


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as resp:
        return resp.status, await resp.text()


async def healthz_fails(base: str) -> str:
    """Wait until /healthz answers 500; its body."""

    async def failing() -> str | None:
        status, body = await get(f"{base}/healthz")
        return body if status == 500 else None

    body: str = await eventually(failing, timeout=30, message="/healthz answers 500")
    return body


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    buf = io.StringIO()
    configure_logging("json", stream=buf, keys="structlog")
    try:
        yield buf
    finally:
        configure_logging("console")


def logged(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines() if line.startswith("{")]


async def test_a_normal_run_keeps_healthz_200_through_shutdown() -> None:
    mgr, ctrl, reconciler = new_manager()
    returned: list[bool] = []

    async def one_shot() -> None:  # a runnable may finish: not a failure
        returned.append(True)

    mgr.add_runnable(one_shot, needs_leader=False)
    async with running(mgr, ctrl) as base:
        assert ctrl.queue is not None
        for i in range(5):
            ctrl.queue.add(Request("ns", f"r{i}"))
        # Each request runs twice: once at once, once via the delaying queue's loop.
        await eventually(lambda: len(reconciler.calls) == 10, timeout=30, message="reconciled")
        assert returned == [True]
        await asyncio.sleep(0.2)
        assert await get(f"{base}/healthz") == (200, "ok")
        status, body = await get(f"{base}/healthz?verbose")
        assert status == 200
        assert "[+]ping ok" in body and "[+]tasks ok" in body
        assert await get(f"{base}/healthz/tasks") == (200, "ok")
    # Workers and the delayed-add loop returned because of the stop: expected.
    assert mgr.supervisor.failures == []


async def test_a_worker_that_raises_turns_healthz_500_naming_it(
    monkeypatch: pytest.MonkeyPatch, json_logs: io.StringIO
) -> None:
    async def broken(self: Controller, req: Request) -> None:
        raise RuntimeError(f"injected worker failure for {req.name}")

    monkeypatch.setattr(Controller, "process", broken)
    mgr, ctrl, _ = new_manager()
    async with running(mgr, ctrl) as base:
        assert await get(f"{base}/healthz") == (200, "ok")
        assert ctrl.queue is not None
        ctrl.queue.add(Request("ns", "boom"))
        body = await healthz_fails(base)
        assert f"[-]tasks failed: task '{CTRL}-worker-" in body
        assert "RuntimeError: injected worker failure for boom" in body
        assert "[+]ping ok" in body
        status, one = await get(f"{base}/healthz/tasks")
        assert status == 500 and f"{CTRL}-worker-" in one
        # Only one worker died; the other one is still fine and stays unreported.
        assert len(mgr.supervisor.failures) == 1
    died = [e for e in logged(json_logs) if e["event"] == "background task died"]
    assert len(died) == 1
    assert died[0]["task"].startswith(f"{CTRL}-worker-")
    assert died[0]["level"] == "error"
    assert "Traceback" in died[0]["exception"]
    assert "injected worker failure for boom" in died[0]["exception"]


async def test_a_delaying_queue_loop_that_raises_turns_healthz_500_naming_it(
    monkeypatch: pytest.MonkeyPatch, json_logs: io.StringIO
) -> None:
    def broken(self: DelayingQueue[Any], now: float) -> None:
        raise RuntimeError("injected delaying-queue failure")

    monkeypatch.setattr(DelayingQueue, "_add_due", broken)
    mgr, ctrl, _ = new_manager()
    async with running(mgr, ctrl) as base:
        assert ctrl.queue is not None
        ctrl.queue.add_after(Request("ns", "later"), 0.01)
        body = await healthz_fails(base)
        assert f"task 'workqueue-delay-{CTRL}' raised RuntimeError" in body
        assert "injected delaying-queue failure" in body
    died = [e for e in logged(json_logs) if e["event"] == "background task died"]
    assert [e["task"] for e in died] == [f"workqueue-delay-{CTRL}"]
    assert "Traceback" in died[0]["exception"]


async def test_a_worker_that_returns_while_running_turns_healthz_500(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def gives_up(self: Controller) -> None:
        return None

    monkeypatch.setattr(Controller, "_worker", gives_up)
    mgr, ctrl, _ = new_manager()
    async with running(mgr, ctrl) as base:
        body = await healthz_fails(base)
        assert f"task '{CTRL}-worker-0' returned while the manager was running" in body
        assert f"task '{CTRL}-worker-1' returned" in body


async def test_a_reflector_that_dies_turns_healthz_500_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(self: Reflector) -> None:
        raise RuntimeError("injected reflector failure")

    monkeypatch.setattr(Reflector, "run", broken)
    mgr, ctrl, _ = new_manager()
    async with running(mgr, ctrl) as base:
        mgr.factory.informer_for("v1", "ConfigMap", namespace="ns").start()
        body = await healthz_fails(base)
        assert "task 'reflector ConfigMap.v1 in ns' raised RuntimeError" in body


async def test_a_runnable_that_raises_turns_healthz_500_naming_it() -> None:
    mgr, ctrl, _ = new_manager()

    async def crashes() -> None:
        raise ValueError("injected runnable failure")

    mgr.add_runnable(crashes, needs_leader=False)
    async with running(mgr, ctrl) as base:
        body = await healthz_fails(base)
        assert "crashes' raised ValueError: injected runnable failure" in body


def test_health_checks_are_named_and_unique() -> None:
    mgr, _, _ = new_manager()
    assert list(mgr.healthz.checks) == ["ping", "tasks"]
    mgr.add_healthz_check("extra", lambda: None)
    mgr.add_readyz_check("extra", lambda: None)
    with pytest.raises(ValueError, match="already exists"):
        mgr.add_healthz_check("tasks", lambda: None)
    with pytest.raises(ValueError, match="invalid"):
        mgr.add_readyz_check("a/b", lambda: None)
