"""Fixtures: the RayCronJob controller running in-process against the real apiserver,
on a fake clock the test moves (ticks are due when the test says so, not when the
wall clock gets there)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.integration import operator_harness as harness
from tests.integration.operator_harness import FakeClock, Operator

__all__ = ["CronOperator", "FakeClock", "start_cron_operator"]


CronOperator = Operator


def start_cron_operator(
    kubeconfig_path: Path, namespace: str, *, clock: FakeClock, gates: str = "RayCronJob=true"
) -> contextlib.AbstractAsyncContextManager[Operator]:
    """The RayCronJob controller alone, on ``clock``, with a client of its own (its writes
    can be counted); ``poke``/``at`` stand for its timed requeue."""
    return harness.start_operator(
        kubeconfig_path, namespace, kinds=("raycronjob",), gates=gates, raycronjob={"now": clock}
    )


@pytest.fixture
async def cron_operator(
    crds_installed: None, kubeconfig_path: Path, namespace: str
) -> AsyncIterator[CronOperator]:
    """The controller with its clock a day in the past: nothing is due until a test
    moves the clock."""
    clock = FakeClock(dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
    async with start_cron_operator(kubeconfig_path, namespace, clock=clock) as op:
        yield op
