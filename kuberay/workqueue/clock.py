"""Time sources for the work queues.

Every time-dependent piece of the work queue (delayed adds, token buckets,
latency metrics) reads time through a :class:`Clock` instead of calling
``time`` or ``asyncio.sleep`` directly.  Production code uses
:class:`RealClock`; tests inject a :class:`FakeClock` so that a 1000 s backoff
can be fast-forwarded instantly and deterministically.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "RealClock"]

_NS_PER_SECOND = 1_000_000_000


@runtime_checkable
class Clock(Protocol):
    """A monotonic time source that can also suspend the current task."""

    def now(self) -> float:
        """Return the current monotonic time in seconds (arbitrary epoch)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Suspend the calling task until ``now()`` has advanced by ``seconds``.

        A non-positive duration only yields to the event loop once.
        """
        ...


class RealClock:
    """Wall-independent real time: the running loop's clock, else ``time.monotonic``."""

    def now(self) -> float:
        """Return ``loop.time()`` of the running loop, or ``time.monotonic()`` outside one."""
        try:
            return asyncio.get_running_loop().time()
        except RuntimeError:
            return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """Sleep with :func:`asyncio.sleep`; non-positive durations just yield."""
        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """A manually driven clock for tests.

    Time only moves when :meth:`advance` (or :meth:`set_time`) is called.  Time is kept
    as integer nanoseconds, so ``advance(0.3)`` after ``sleep(0.3)`` always wakes the
    sleeper regardless of float rounding.  Due sleepers are woken synchronously, in
    deadline order, by the call that moves time; they resume on the next loop
    iterations.
    """

    def __init__(self, start: float = 0.0) -> None:
        """Create a clock whose ``now()`` is ``start`` seconds."""
        self._now_ns = _to_ns(start)
        self._seq = 0
        # Heap of (deadline_ns, insertion sequence, future to resolve).
        self._sleepers: list[tuple[int, int, asyncio.Future[None]]] = []

    def now(self) -> float:
        """Return the fake time in seconds."""
        return self._now_ns / _NS_PER_SECOND

    async def sleep(self, seconds: float) -> None:
        """Wait until the fake time reaches ``now() + seconds``; cancellation-safe."""
        deadline = self._now_ns + max(0, _to_ns(seconds))
        if deadline <= self._now_ns:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        entry = (deadline, self._seq, fut)
        heapq.heappush(self._sleepers, entry)
        try:
            await fut
        finally:
            if fut.cancelled() and entry in self._sleepers:
                # Keep the heap small when sleeps are interrupted, as the delaying
                # queue does whenever an earlier item arrives.
                self._sleepers.remove(entry)
                heapq.heapify(self._sleepers)

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (>= 0) and wake every sleeper now due."""
        if seconds < 0:
            raise ValueError(f"cannot move a FakeClock backwards (advance({seconds}))")
        self._now_ns += _to_ns(seconds)
        self._wake_due()

    def set_time(self, t: float) -> None:
        """Jump to absolute time ``t`` (must not be in the past) and wake due sleepers."""
        target = _to_ns(t)
        if target < self._now_ns:
            raise ValueError(f"cannot move a FakeClock backwards (set_time({t}) < {self.now()})")
        self._now_ns = target
        self._wake_due()

    def has_waiters(self) -> bool:
        """Return True while at least one task is blocked in :meth:`sleep`."""
        return self.waiter_count() > 0

    def waiter_count(self) -> int:
        """Return how many tasks are currently blocked in :meth:`sleep`."""
        return sum(1 for _, _, fut in self._sleepers if not fut.done())

    def _wake_due(self) -> None:
        while self._sleepers and self._sleepers[0][0] <= self._now_ns:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)


def _to_ns(seconds: float) -> int:
    return round(seconds * _NS_PER_SECOND)
