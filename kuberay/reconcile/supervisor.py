"""TaskSupervisor: notices background tasks that end while they should be running.

A Manager's work happens in long-lived asyncio tasks it does not await while
running: controller workers, each work queue's delayed-add loop, informers'
reflector and resync loops, runnables. In Go an unexpected panic there crashes
the process; in asyncio the task just ends, its exception is stored unread and
the operator keeps answering probes while doing nothing. The supervisor closes
that gap:

* Components report each such task through a :data:`TaskHook`
  (``supervisor.watch``) right after creating it.
* A task that raises is logged at error level with its name and traceback and
  recorded as a failure (also during shutdown: an exception is never expected).
* A task that *returns* before :meth:`TaskSupervisor.close` is recorded as a
  failure too, unless it was watched with ``may_return=True``; after ``close``
  (the manager is shutting down) returning is the normal way to end.
* A cancelled task is never a failure: whoever cancelled it owns that decision
  (the manager only cancels its tasks while shutting down or on leadership loss).

:meth:`TaskSupervisor.check` is a health check (``Manager`` registers it on
``/healthz`` as ``tasks``): it raises, naming every dead task, once anything failed,
so an HTTP liveness probe gets 500 and the kubelet restarts the operator. Failures
are sticky: a process that lost a worker is not healthy again by itself.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import attrs
import structlog

log = structlog.get_logger("kuberay.supervisor")

#: Called by a component with every long-lived task it creates.
TaskHook = Callable[[asyncio.Task[Any]], None]

__all__ = ["TaskFailure", "TaskHook", "TaskSupervisor"]


@attrs.frozen
class TaskFailure:
    """One task that ended unexpectedly: its name and why (``raised ...`` / ``returned``)."""

    name: str
    reason: str

    def __str__(self) -> str:
        return f"task {self.name!r} {self.reason}"


class TaskSupervisor:
    """Watches tasks and records those that end unexpectedly (see the module docstring).

    Not thread-safe: use from the event loop that runs the watched tasks.
    """

    def __init__(self) -> None:
        self._closing = False
        self._failures: list[TaskFailure] = []
        # Strong references, so a watched task is never garbage-collected mid-run.
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def closing(self) -> bool:
        """True once :meth:`close` was called (tasks may now return)."""
        return self._closing

    @property
    def failures(self) -> list[TaskFailure]:
        """Every unexpected end so far, oldest first (a copy)."""
        return list(self._failures)

    def watch(self, task: asyncio.Task[Any], *, may_return: bool = False) -> None:
        """Supervise ``task`` (named by ``task.get_name()``) until it ends.

        ``may_return``: returning normally is fine even before :meth:`close`
        (one-shot work); raising is still a failure.
        """
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._done, may_return=may_return))

    def close(self) -> None:
        """Mark the start of shutdown: from now on a watched task may return. Idempotent."""
        self._closing = True

    def check(self) -> None:
        """Health check: returns while nothing failed, else raises ``RuntimeError``
        naming every dead task."""
        if self._failures:
            raise RuntimeError("; ".join(str(f) for f in self._failures))

    def _done(self, task: asyncio.Task[Any], *, may_return: bool) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        name = task.get_name()
        exc = task.exception()  # also marks it retrieved: asyncio logs nothing more
        if exc is None:
            if may_return or self._closing:
                return
            failure = TaskFailure(name, "returned while the manager was running")
            log.error("background task ended unexpectedly", task=name, reason=failure.reason)
        else:
            failure = TaskFailure(name, f"raised {type(exc).__name__}: {exc}")
            log.error("background task died", task=name, error=repr(exc), exc_info=exc)
        self._failures.append(failure)
