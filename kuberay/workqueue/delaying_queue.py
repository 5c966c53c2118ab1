"""A work queue that can add items after a delay (client-go ``DelayingInterface``).

Retries with backoff and periodic resyncs ("reconcile this again in 30 s") need
"add later" without parking a task per item.  Pending adds live in a heap ordered
by due time and one background task sleeps on the injected :class:`Clock` until the
earliest is due, then :meth:`~Queue.add` s it -- so the usual deduplication applies
at that moment.

Per item only the earliest pending due time is kept: asking again for a later time
is a no-op, asking for an earlier one moves it forward.  A pending delayed add is
independent of the item's other life: ``add``, ``done`` and a rate limiter's
``forget`` do not cancel it.  Shutdown discards everything pending.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry

from .clock import Clock
from .queue import Queue

__all__ = ["DelayingQueue"]

T = TypeVar("T", bound=Hashable)


class DelayingQueue(Queue[T]):
    """A :class:`Queue` with :meth:`add_after`.

    The background task that performs delayed adds is started lazily by the first
    ``add_after``/``get`` made inside a running event loop, or explicitly by
    :meth:`start`.  Call :meth:`aclose` (or ``shutdown`` and let the loop run) to
    stop it cleanly.  ``on_task``, if given, is called with that task right after
    it is created (e.g. a supervisor's ``watch``): if the task dies, delayed adds
    silently stop, so an owner should notice.
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
        on_task: Callable[[asyncio.Task[Any]], None] | None = None,
    ) -> None:
        """Create an empty delaying queue; arguments as for :class:`Queue`, plus
        ``on_task`` (see the class docstring)."""
        super().__init__(name=name, clock=clock, registry=registry)
        self.on_task = on_task
        # Heap of (ready_at, tie-breaker, item).  An entry is live only while
        # _ready_at[item] == ready_at; entries superseded by an earlier time go stale
        # and are skipped when they surface.
        self._waiting: list[tuple[float, int, T]] = []
        # item -> earliest pending due time.
        self._ready_at: dict[T, float] = {}
        self._seq = itertools.count()
        self._task: asyncio.Task[None] | None = None
        # Resolved to interrupt the background task's sleep (earlier item, shutdown).
        self._wakeup: asyncio.Future[None] | None = None
        # Due time the background task is currently sleeping towards (None: idle).
        self._sleeping_until: float | None = None

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` once ``delay`` seconds have passed on the queue's clock.

        Ignored while shutting down.  ``delay <= 0`` adds immediately.  If the item is
        already waiting, the earlier of the two due times wins.  Every call with a
        positive delay counts as a retry in the metrics (controller-runtime's).
        """
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(item)
            return
        self._metrics.retry()
        ready_at = self._clock.now() + delay
        current = self._ready_at.get(item)
        if current is not None and current <= ready_at:
            return
        self._ready_at[item] = ready_at
        heapq.heappush(self._waiting, (ready_at, next(self._seq), item))
        if self._sleeping_until is None or ready_at < self._sleeping_until:
            self._interrupt_sleep()
        self._ensure_started()

    def num_waiting(self) -> int:
        """Number of distinct items with a pending delayed add."""
        return len(self._ready_at)

    def start(self) -> None:
        """Start the background task now; requires a running event loop. Idempotent."""
        if self._task is None and not self._shutting_down:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"workqueue-delay-{self.name or 'unnamed'}"
            )
            if self.on_task is not None:
                self.on_task(self._task)

    async def get(self) -> tuple[T | None, bool]:
        """As :meth:`Queue.get`; also makes sure delayed adds are being processed."""
        self._ensure_started()
        return await super().get()

    def shutdown(self) -> None:
        """As :meth:`Queue.shutdown`; also drops pending delayed adds and stops the task."""
        super().shutdown()
        self._waiting.clear()
        self._ready_at.clear()
        self._interrupt_sleep()

    async def shutdown_with_drain(self) -> None:
        """As :meth:`Queue.shutdown_with_drain`, then wait for the background task to end."""
        await super().shutdown_with_drain()
        await self.aclose()

    async def aclose(self) -> None:
        """Shut down and wait for the background task to finish."""
        self.shutdown()
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            await asyncio.wait([task])

    def _ensure_started(self) -> None:
        if self._task is None and not self._shutting_down:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return  # No loop yet: start() or the first get() will do it.
            self.start()

    def _interrupt_sleep(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    def _next_ready_at(self) -> float | None:
        while self._waiting:
            ready_at, _, item = self._waiting[0]
            if self._ready_at.get(item) == ready_at:
                return ready_at
            heapq.heappop(self._waiting)  # stale
        return None

    def _add_due(self, now: float) -> None:
        while (ready_at := self._next_ready_at()) is not None and ready_at <= now:
            _, _, item = heapq.heappop(self._waiting)
            del self._ready_at[item]
            self.add(item)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._shutting_down:
            now = self._clock.now()
            self._add_due(now)
            target = self._next_ready_at()
            wakeup: asyncio.Future[None] = loop.create_future()
            self._wakeup = wakeup
            self._sleeping_until = target
            sleeper: asyncio.Task[None] | None = None
            waits: set[asyncio.Future[None]] = {wakeup}
            if target is not None:
                sleeper = loop.create_task(self._clock.sleep(target - now))
                waits.add(sleeper)
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._wakeup = None
                self._sleeping_until = None
                if sleeper is not None and not sleeper.done():
                    sleeper.cancel()
                    await asyncio.wait([sleeper])
            if target is not None and sleeper is not None and not sleeper.cancelled():
                sleeper.result()  # Surface a failing clock instead of spinning.
                # The clock says `target` has been reached; trust it over a `now()`
                # that may lag by a rounding error or the loop's timer granularity.
                self._add_due(max(self._clock.now(), target))
