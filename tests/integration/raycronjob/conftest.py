"""Fixtures: the RayCronJob controller running in-process against the real apiserver,
on a fake clock the test moves (ticks are due when the test says so, not when the
wall clock gets there)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest

from kuberay.controllers.raycronjob import RayCronJobSettings, setup_raycronjob_controller
from kuberay.kube import Client
from kuberay.reconcile import Controller, Manager, Request
from tests.integration.operator_harness import feature_gates, new_manager, running


@attrs.define
class FakeClock:
    """The operator's ``now()``: stands still at ``at`` until the test moves it."""

    at: dt.datetime

    def __call__(self) -> dt.datetime:
        return self.at


@attrs.define
class CronOperator:
    """A running in-process RayCronJob controller scoped to one namespace, with its own
    client (so its writes can be counted) and clock."""

    manager: Manager
    controller: Controller
    client: Client
    clock: FakeClock
    namespace: str
    task: asyncio.Task[None]

    def poke(self, name: str) -> None:
        """Reconcile ``name`` now: what the controller's timed requeue does when it fires
        (with a fake clock the real-time timer would fire at the wrong moment)."""
        assert self.controller.queue is not None
        self.controller.queue.add(Request(self.namespace, name))

    def at(self, when: dt.datetime, name: str) -> None:
        """Move the clock to ``when`` and let ``name``'s timer fire."""
        self.clock.at = when
        self.poke(name)


@contextlib.asynccontextmanager
async def start_cron_operator(
    kubeconfig_path: Path, namespace: str, *, clock: FakeClock, gates: str = "RayCronJob=true"
) -> AsyncIterator[CronOperator]:
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    mgr = new_manager(client, namespace)
    settings = RayCronJobSettings(features=feature_gates(gates), now=clock)
    ctrl = setup_raycronjob_controller(mgr, settings)
    try:
        async with running(mgr) as task:
            yield CronOperator(mgr, ctrl, client, clock, namespace, task)
    finally:
        await client.close()


@pytest.fixture
async def cron_operator(
    crds_installed: None, kubeconfig_path: Path, namespace: str
) -> AsyncIterator[CronOperator]:
    """The controller with its clock a day in the past: nothing is due until a test
    moves the clock."""
    clock = FakeClock(dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
    async with start_cron_operator(kubeconfig_path, namespace, clock=clock) as op:
        yield op
