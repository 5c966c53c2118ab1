"""Shared by the real-node e2e modules (``test_real_node*.py``): timings into the e2e report
and polling with a deadline."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.e2e.harness import TIMINGS


def record(name: str, seconds: float) -> float:
    """Add ``seconds`` under ``name`` to the e2e timings report; returns it."""
    TIMINGS.setdefault(name, []).append(seconds)
    return seconds


async def wait_until(what: str, check: Any, timeout: float, interval: float = 0.5) -> float:
    """Poll the coroutine function ``check`` until it returns truthy; seconds taken (the test
    fails naming ``what`` and the last answer after ``timeout``)."""
    began = time.monotonic()
    last: Any = None
    while True:
        last = await check()
        if last:
            return time.monotonic() - began
        if time.monotonic() - began > timeout:
            pytest.fail(f"{what}: not within {timeout:.0f}s (last: {last!r})")
        await asyncio.sleep(interval)
