"""Small test helpers shared by integration and e2e tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


async def eventually(
    check: Callable[[], Any],
    *,
    timeout: float = 30.0,
    interval: float = 0.1,
    message: str = "condition not met",
) -> Any:
    """Poll ``check`` until it returns a truthy value (returned) or ``timeout`` passes.

    Exceptions raised by ``check`` count as "not yet"; the last one is reported.
    """
    deadline = time.monotonic() + timeout
    last_exc: BaseException | None = None
    last: Any = None
    while True:
        try:
            result = check()
            if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                result = await result
            last = result
            if result:
                return result
        except AssertionError as exc:
            last_exc = exc
        except Exception as exc:
            last_exc = exc
        if time.monotonic() > deadline:
            detail = f": last error {last_exc!r}" if last_exc else f": last value {last!r}"
            raise AssertionError(f"{message} within {timeout}s{detail}")
        await asyncio.sleep(interval)


async def wait_quiet(
    value: Callable[[], Any],
    *,
    quiet: float = 3.0,
    timeout: float = 60.0,
    interval: float = 0.2,
    message: str = "value kept changing",
) -> Any:
    """Wait until ``value()`` (e.g. a client's write count) has not changed for ``quiet``
    seconds: background work has settled. Returns the settled value."""
    deadline = time.monotonic() + timeout
    last = value()
    since = time.monotonic()
    while True:
        await asyncio.sleep(interval)
        now = value()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(f"{message}: not quiet for {quiet}s within {timeout}s")
