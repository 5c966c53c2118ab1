"""A daemon thread running its own asyncio event loop.

Why: the operator is one asyncio loop. Under CPU starvation (a loaded node, a
burst of reconciles, a long synchronous step such as a big JSON decode) every
callback on that loop waits its turn, so a timer that must fire on time -- lease
renewal -- can be late by many seconds and the process loses its lease while it
is alive and well. Work submitted to a :class:`LoopThread` runs on a second loop
in a second OS thread: the interpreter switches threads every few milliseconds
(``sys.getswitchinterval``) whatever the main loop is doing, and a main loop
blocked in a syscall or ``time.sleep`` releases the GIL entirely.

Objects bound to a loop (aiohttp sessions, asyncio primitives that were waited
on) must be created and used on the thread's loop; hand results back through
the future that :meth:`LoopThread.submit` returns.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["LoopThread"]


class LoopThread:
    """Runs an event loop in a daemon thread from :meth:`start` until :meth:`stop`.

    Usable as a context manager (start on enter, stop on exit). Coroutines are
    submitted with :meth:`submit`; plain callbacks with :meth:`call`.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)

    def start(self) -> None:
        """Start the thread and its loop."""
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the thread's loop; its result/exception lands in the
        returned future (wrap it with :func:`asyncio.wrap_future` to await it)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn: Callable[[], object]) -> None:
        """Run ``fn()`` on the thread's loop soon (thread-safe); no-op once stopped."""
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(fn)

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel what still runs on the loop, stop it, and join the thread for at
        most ``timeout`` seconds (a daemon thread never holds up interpreter exit)."""
        if self.loop.is_closed():
            return
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self._cancel_all)
            self._thread.join(timeout)

    def _cancel_all(self) -> None:
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        if not pending:
            self.loop.stop()
            return
        gathered = asyncio.gather(*pending, return_exceptions=True)
        gathered.add_done_callback(lambda _: self.loop.stop())

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def __enter__(self) -> LoopThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
