"""The basic deduplicating work queue (client-go ``workqueue.Typed`` semantics).

Controllers enqueue *keys*, not events: if an object changes ten times before a
worker gets to it, it must be reconciled once.  And an object must never be
reconciled by two workers at once, yet a change that arrives while it is being
reconciled must not be lost.  The queue guarantees both:

* an item that is already waiting is not queued again (deduplication);
* an item re-added while a worker holds it is parked and queued again only when
  the worker calls :meth:`Queue.done` -- exactly once, however many adds happened.

Everything runs on one asyncio event loop; the methods other than :meth:`Queue.get`
and :meth:`Queue.shutdown_with_drain` are synchronous and therefore atomic.

Shutdown contract (controller-runtime's priority queue, not client-go's FIFO):
once :meth:`Queue.shutdown` is called, :meth:`Queue.get` hands out *nothing*
more, not even items queued before -- a stopping controller (or one that lost its
leader lease) must not start new work.  :meth:`Queue.shutdown_with_drain`
additionally waits for the items already handed out (in flight) to be
:meth:`Queue.done`; queued items are dropped, not drained.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry

from .clock import Clock, RealClock
from .metrics import QueueMetrics, new_queue_metrics

__all__ = ["Queue"]

T = TypeVar("T", bound=Hashable)


class Queue(Generic[T]):
    """A FIFO of hashable items with deduplication and single-worker-per-item processing.

    Protocol for workers: ``item, shutdown = await q.get()``; if ``shutdown`` stop,
    otherwise process ``item`` and always call ``q.done(item)`` afterwards.
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        """Create an empty queue.

        ``name`` enables Prometheus metrics labelled with it on ``registry`` (default:
        the global registry); an unnamed queue records no metrics.  ``clock`` is used
        for latency metrics (and delays, in subclasses).
        """
        self.name = name
        self._clock: Clock = RealClock() if clock is None else clock
        self._metrics: QueueMetrics = new_queue_metrics(name, self._clock, registry)
        # Invariants (hold between any two method calls):
        #   * every element of _queue is in _dirty and not in _processing;
        #   * _queue holds no duplicates;
        #   * an item may be in both _dirty and _processing: it was re-added while a
        #     worker held it and is pushed onto _queue again by done().
        # Items waiting to be handed to a worker, in FIFO order.
        self._queue: deque[T] = deque()
        # Items that need processing (queued, or re-added while being processed).
        self._dirty: set[T] = set()
        # Items currently held by a worker (between get() and done()).
        self._processing: set[T] = set()
        self._shutting_down = False
        # Tasks blocked in get(), woken one per queued item (all on shutdown).
        self._getters: deque[asyncio.Future[None]] = deque()
        # Tasks blocked in shutdown_with_drain(), woken when _processing empties.
        self._drainers: list[asyncio.Future[None]] = []

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing.

        Ignored while shutting down, and when the item is already dirty.  An item
        currently being processed is queued again only once :meth:`done` is called.
        """
        if self._shutting_down or item in self._dirty:
            return
        self._metrics.add(item)
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wake_one_getter()

    async def get(self) -> tuple[T | None, bool]:
        """Wait for the next item and mark it as being processed.

        Returns ``(item, False)``, or ``(None, True)`` as soon as the queue is shutting
        down -- items still queued at shutdown are not handed out.
        """
        while not self._queue and not self._shutting_down:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    # We were woken for an item but will not take it: pass it on.
                    self._wake_one_getter()
                else:
                    with contextlib.suppress(ValueError):
                        self._getters.remove(waiter)
                raise
        if self._shutting_down:
            return None, True
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        self._metrics.get(item)
        return item, False

    def done(self, item: T) -> None:
        """Finish processing ``item``; requeue it if it was added meanwhile."""
        self._metrics.done(item)
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wake_one_getter()
        if not self._processing:
            self._wake_drainers()

    def __len__(self) -> int:
        """Number of items waiting to be handed out (not counting in-flight ones)."""
        return len(self._queue)

    def shutdown(self) -> None:
        """Stop accepting adds and handing out items; wake every blocked :meth:`get`.

        From now on ``get`` returns ``(None, True)`` at once, even if items are still
        queued (they are abandoned).  In-flight items may still be :meth:`done`.
        Idempotent.
        """
        self._shutting_down = True
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    async def shutdown_with_drain(self) -> None:
        """Shut down, then wait until no item is being processed (in-flight items are
        waited for; queued ones are not handed out)."""
        self.shutdown()
        while self._processing:
            drainer: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drainers.append(drainer)
            try:
                await drainer
            finally:
                if drainer in self._drainers:
                    self._drainers.remove(drainer)

    def shutting_down(self) -> bool:
        """Return True once :meth:`shutdown` has been called."""
        return self._shutting_down

    def _wake_one_getter(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _wake_drainers(self) -> None:
        drainers, self._drainers = self._drainers, []
        for drainer in drainers:
            if not drainer.done():
                drainer.set_result(None)
