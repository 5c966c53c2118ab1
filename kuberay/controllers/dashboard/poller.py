"""Dashboard calls off the reconcile workers.

A reconciler asks :class:`DashboardPoller` for the latest outcome of a call and gets it at once
(``None`` before the first one finished); the call itself runs in a background task. When a
call ends with an outcome different from the previous one for the same call, ``on_result(owner)``
is invoked (the controller enqueues the owner), so a dead or slow dashboard delays only the
RayJob/RayService that uses it, and a steady dashboard causes no extra reconciles.

* One call in flight per ``(owner, call name)``; calls wait for one of ``max_in_flight`` slots
  (a semaphore), each bounded by the client's timeout and by ``call_timeout`` overall.
* Dead dashboards cannot crowd out live ones: a call whose previous outcome was "unreachable"
  (refused, timed out) also needs one of ``max_in_flight // 4`` suspect slots, and such a call
  is repeated with exponential backoff (``retry_after`` doubled per consecutive failure, up to
  ``max_backoff``) instead of every ``max_age``.
* A call's identity is its name plus its target and arguments: asking the same name with a
  different target, job id or ``key`` drops the old outcome and cancels the old call. So an
  owner has one entry per call name (a retried RayJob's new job id, a RayService's next Serve
  config replace the old entry), and memory is bounded by what exists now as long as owners
  prune names they no longer use (:meth:`DashboardPoller.forget` with ``keep``, e.g. the
  calls to a retired cluster) and forget themselves when deleted.
* :meth:`DashboardPoller.forget` drops an owner's outcomes and cancels its calls, except stop
  requests, which run to their end. :meth:`DashboardPoller.close` cancels everything and
  waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, Generic, Protocol, TypeVar, cast

import attrs
import structlog

from .client import DashboardClient
from .errors import DashboardError, DashboardUnreachable, DuplicateSubmissionId
from .models import JobInfo
from .target import DashboardTarget, ServeProxyTarget

__all__ = ["ClientSource", "DashboardPoller", "ObjectKey", "Observed"]

log = structlog.get_logger("kuberay.dashboard")

T = TypeVar("T")
ObjectKey = tuple[str, str]
Target = DashboardTarget | ServeProxyTarget
_Key = tuple[ObjectKey, str]

JOB_INFO = "job_info"
SUBMIT_JOB = "submit_job"
STOP_JOB = "stop_job"


@attrs.frozen
class Observed(Generic[T]):
    """The outcome of one finished call: ``value`` on success, else ``error``;
    ``started_at`` / ``finished_at``: when the request was sent (its turn came) and when it
    ended, on the poller's clock (``started_at`` defaults to ``finished_at``)."""

    value: T | None
    error: DashboardError | None
    finished_at: float
    started_at: float = attrs.field()

    @started_at.default
    def _started_at(self) -> float:
        return self.finished_at

    @property
    def ok(self) -> bool:
        return self.error is None


def _same_outcome(a: Observed[Any] | None, b: Observed[Any]) -> bool:
    if a is None:
        return False
    if (a.error is None) != (b.error is None):
        return False
    if a.error is not None and b.error is not None:
        return type(a.error) is type(b.error) and str(a.error) == str(b.error)
    return bool(a.value == b.value)


@attrs.define
class _Slot:
    signature: Hashable
    outcome: Observed[Any] | None = None
    task: asyncio.Task[None] | None = None
    #: A newer fact makes ``outcome`` out of date (refresh at the next ask, whatever its age).
    stale: bool = False
    #: Runs to its end even when its owner is forgotten (stop requests).
    detached: bool = False
    #: Consecutive DashboardUnreachable outcomes.
    unreachable: int = 0


class ClientSource(Protocol):
    """What the poller needs of :class:`~.factory.DashboardClientFactory`."""

    async def client_for(self, target: Target) -> DashboardClient: ...


class DashboardPoller:
    """Background dashboard calls for reconcilers; see the module doc.

    ``factory`` provides clients (``await factory.client_for(target)``). ``clock`` (monotonic
    seconds) stamps outcomes and ages them against ``max_age``.
    """

    def __init__(
        self,
        factory: ClientSource,
        *,
        max_in_flight: int = 64,
        call_timeout: float = 30.0,
        retry_after: float = 3.0,
        max_backoff: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.factory = factory
        self.max_in_flight = max_in_flight
        self.call_timeout = call_timeout
        self.retry_after = retry_after
        self.max_backoff = max_backoff
        self.on_result: Callable[[ObjectKey], None] | None = None
        self._clock = clock
        self._semaphore = asyncio.Semaphore(max_in_flight)
        self._suspect = asyncio.Semaphore(max(1, max_in_flight // 4))
        self._slots: dict[_Key, _Slot] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    # ----- the calls reconcilers use ------------------------------------------------------
    def job_info(
        self, owner: ObjectKey, target: DashboardTarget, job_id: str, *, max_age: float = 3.0
    ) -> Observed[JobInfo] | None:
        """Latest finished ``GET /api/jobs/{job_id}`` outcome for ``owner`` (None before the
        first one ends); starts a background refresh when it is older than ``max_age`` and
        none is in flight."""

        async def get(client: DashboardClient) -> JobInfo:
            return await client.get_job_info(job_id)

        return self._ask(owner, JOB_INFO, (target, job_id), target, get, max_age=max_age)

    def submit_job(
        self,
        owner: ObjectKey,
        target: DashboardTarget,
        body: Mapping[str, Any],
        submission_id: str,
        *,
        not_found_at: float | None = None,
    ) -> Observed[str] | None:
        """``POST /api/jobs/`` once per ``(owner, submission_id)`` in the background; its
        outcome when done (value = the job id Ray returns, i.e. the submission id). An owner
        keeps one submission: a new ``submission_id`` replaces the old one.

        A success is not repeated, unless the job was lost since: ``not_found_at`` is when a
        lookup that found no such job was sent (``Observed.started_at``); an outcome that
        ended before it is out of date (e.g. the head that had the job was replaced) and the
        job is submitted again under the same id. A failure is retried at an ask
        ``retry_after`` seconds later, except DuplicateSubmissionId (the job exists).
        ``body["submission_id"]`` is set to ``submission_id`` when missing.
        """
        payload = dict(body)
        payload.setdefault("submission_id", submission_id)
        signature = (target, submission_id)
        slot = self._slots.get((owner, SUBMIT_JOB))
        if (
            not_found_at is not None
            and slot is not None
            and slot.signature == signature
            and slot.task is None
            and slot.outcome is not None
            and slot.outcome.finished_at <= not_found_at
        ):
            slot.stale = True

        async def submit(client: DashboardClient) -> str:
            return await client.submit_job(payload)

        return self._ask(
            owner,
            SUBMIT_JOB,
            signature,
            target,
            submit,
            max_age=math.inf,
            retry_failures=True,
            invalidates=JOB_INFO,
        )

    def submit_outcome(
        self, owner: ObjectKey, target: DashboardTarget, submission_id: str
    ) -> Observed[str] | None:
        """The outcome :meth:`submit_job` for ``(owner, target, submission_id)`` would return
        (the latest finished one, also while a retry is in flight), without sending anything
        (None: none finished yet, or the last one asked was another submission or target)."""
        slot = self._slots.get((owner, SUBMIT_JOB))
        if slot is None or slot.signature != (target, submission_id):
            return None
        return cast(Observed[str] | None, slot.outcome)

    def stop_job(
        self, owner: ObjectKey, target: DashboardTarget, job_id: str
    ) -> Observed[None] | None:
        """``POST /api/jobs/{job_id}/stop`` in the background, once per ``(owner, job_id)``
        (one attempt: its outcome, error or not, is final); the outcome when done. A stop
        that was sent runs to its end (bounded by the call timeout) even if ``owner`` is
        forgotten meanwhile; only :meth:`close` cancels it."""

        async def stop(client: DashboardClient) -> None:
            await client.stop_job(job_id)

        return self._ask(
            owner,
            STOP_JOB,
            (target, job_id),
            target,
            stop,
            max_age=math.inf,
            invalidates=JOB_INFO,
            detached=True,
        )

    def stop_outcome(
        self, owner: ObjectKey, target: DashboardTarget, job_id: str
    ) -> Observed[None] | None:
        """The outcome of :meth:`stop_job` for ``(owner, target, job_id)`` without sending
        anything (None: never asked, in flight, or asked for another job or target)."""
        slot = self._slots.get((owner, STOP_JOB))
        if slot is None or slot.signature != (target, job_id):
            return None
        return cast(Observed[None] | None, slot.outcome)

    def call(
        self,
        owner: ObjectKey,
        name: str,
        target: Target,
        fn: Callable[[DashboardClient], Awaitable[T]],
        *,
        max_age: float,
        retry_failures: bool = False,
        invalidates: str | None = None,
        key: Hashable = None,
    ) -> Observed[T] | None:
        """Generic keyed background call ``fn(client)`` (RayService's Serve calls).

        ``key`` must change when ``fn``'s arguments do (e.g. a config sequence number): the
        poller cannot compare functions; a new ``key`` (or target) replaces the old outcome
        of ``name``. ``max_age=math.inf``: run once per name, target and key; with
        ``retry_failures`` a failed outcome is retried at an ask ``retry_after`` seconds
        later. ``invalidates``: the name of another call of the owner whose outcome a success
        makes out of date (e.g. a Serve config update and the Serve status).
        """
        return self._ask(
            owner,
            name,
            (target, key),
            target,
            fn,
            max_age=max_age,
            retry_failures=retry_failures,
            invalidates=invalidates,
        )

    def invalidate(self, owner: ObjectKey, name: str) -> None:
        """Mark ``owner``'s outcome of ``name`` out of date: the next ask refreshes it."""
        slot = self._slots.get((owner, name))
        if slot is not None:
            slot.stale = True

    def forget(self, owner: ObjectKey, keep: Callable[[str], bool] | None = None) -> None:
        """Drop ``owner``'s outcomes and cancel its calls (stop requests run on); with
        ``keep``, only those of the calls whose name ``keep(name)`` rejects."""
        for key in [k for k in self._slots if k[0] == owner]:
            if keep is not None and keep(key[1]):
                continue
            slot = self._slots.pop(key)
            if slot.task is not None and not slot.detached:
                slot.task.cancel()

    async def close(self) -> None:
        """Cancel every call, wait for them to end, drop all outcomes."""
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._slots.clear()

    # ----- introspection (tests, metrics) -------------------------------------------------
    @property
    def in_flight(self) -> int:
        """Calls started and not finished (running or waiting for a slot)."""
        return len(self._tasks)

    @property
    def entries(self) -> int:
        """Calls kept (one per owner and call name, with its latest outcome)."""
        return len(self._slots)

    def outcome(self, owner: ObjectKey, name: str) -> Observed[Any] | None:
        """The stored outcome of ``owner``'s call ``name`` (no refresh)."""
        slot = self._slots.get((owner, name))
        return slot.outcome if slot is not None else None

    # ----- machinery ----------------------------------------------------------------------
    def _ask(
        self,
        owner: ObjectKey,
        name: str,
        signature: Hashable,
        target: Target,
        fn: Callable[[DashboardClient], Awaitable[T]],
        *,
        max_age: float,
        retry_failures: bool = False,
        invalidates: str | None = None,
        detached: bool = False,
    ) -> Observed[T] | None:
        key = (owner, name)
        slot = self._slots.get(key)
        if slot is not None and slot.signature != signature:
            if slot.task is not None and not slot.detached:
                slot.task.cancel()
            slot = None
        if slot is None:
            slot = _Slot(signature=signature, detached=detached)
            self._slots[key] = slot
        if slot.task is None and not self._closed and self._due(slot, max_age, retry_failures):
            slot.stale = False
            task = asyncio.get_running_loop().create_task(
                self._run(key, slot, target, fn, invalidates), name=f"dashboard {name} {owner}"
            )
            slot.task = task
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return cast(Observed[T] | None, slot.outcome)

    def _due(self, slot: _Slot, max_age: float, retry_failures: bool) -> bool:
        outcome = slot.outcome
        if outcome is None or slot.stale:
            return True
        age = self._clock() - outcome.finished_at
        if outcome.error is not None and retry_failures:
            if isinstance(outcome.error, DuplicateSubmissionId):
                return False
            return age >= max(self.retry_after, self._backoff(slot))
        return age >= max(max_age, self._backoff(slot))

    def _backoff(self, slot: _Slot) -> float:
        """How long to leave a dashboard alone after ``slot.unreachable`` failures in a row."""
        if slot.unreachable <= 1:
            return 0.0
        return min(self.retry_after * 2.0 ** (slot.unreachable - 1), self.max_backoff)

    async def _run(
        self,
        key: _Key,
        slot: _Slot,
        target: Target,
        fn: Callable[[DashboardClient], Awaitable[Any]],
        invalidates: str | None,
    ) -> None:
        owner, name = key
        value: Any = None
        error: DashboardError | None = None
        started = math.nan
        try:
            async with contextlib.AsyncExitStack() as slots:
                if slot.unreachable:
                    await slots.enter_async_context(self._suspect)
                await slots.enter_async_context(self._semaphore)
                started = self._clock()
                try:
                    async with asyncio.timeout(self.call_timeout):
                        client = await self.factory.client_for(target)
                        value = await fn(client)
                except DashboardError as exc:
                    error = exc
                except TimeoutError:
                    error = DashboardUnreachable(
                        f"{name}: did not finish within {self.call_timeout:g}s"
                    )
                except Exception as exc:  # a bug must not kill the poller or leak
                    log.exception(
                        "dashboard call raised", namespace=owner[0], name=owner[1], call=name
                    )
                    error = DashboardError(f"{name}: unexpected error: {exc!r}")
        finally:
            if slot.task is asyncio.current_task():
                slot.task = None
        finished = self._clock()
        outcome: Observed[Any] = Observed(
            value=value, error=error, finished_at=finished, started_at=started
        )
        self._finish(key, slot, outcome, invalidates)

    def _finish(
        self, key: _Key, slot: _Slot, outcome: Observed[Any], invalidates: str | None
    ) -> None:
        owner, name = key
        current = self._slots.get(key) is slot
        changed = not _same_outcome(slot.outcome, outcome)
        slot.outcome = outcome
        slot.unreachable = (
            slot.unreachable + 1 if isinstance(outcome.error, DashboardUnreachable) else 0
        )
        if outcome.error is not None and (changed or not current):
            log.info(
                "dashboard call failed",
                namespace=owner[0],
                name=owner[1],
                call=name,
                error=str(outcome.error),
                error_type=type(outcome.error).__name__,
            )
        if not current:
            return  # forgotten or superseded: nobody waits for this outcome
        if outcome.error is None and invalidates is not None:
            self.invalidate(owner, invalidates)
        if changed and self.on_result is not None:
            try:
                self.on_result(owner)
            except Exception:
                log.exception("on_result failed", namespace=owner[0], name=owner[1], call=name)
