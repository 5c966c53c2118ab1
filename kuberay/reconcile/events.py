"""EventRecorder: Events about objects, correlated like client-go's recorder.

``event(obj, type, reason, message, action=...)`` never blocks and never fails the caller:
events are written by ``writers`` background tasks (at most ``queue_size`` waiting in all;
more are dropped with a log line, as client-go's broadcaster does). Each object's events go
to one writer, so they are written in the order recorded. client-go's events.k8s.io
recorder writes each event in a goroutine of its own, bounded only by its client's token
bucket; one writer fell behind 4 reconcile workers and 1000 new RayClusters and dropped 43%
of the events, and four still dropped 32% behind 16 workers (``hack/bench.py``), so the
default is 16: a writer is an idle asyncio task until it has something to write.

Repeats are written as client-go writes them. With ``api=EVENTS_V1`` (the default;
client-go's ``tools/events``, what KubeRay v1.7 uses) the
:class:`~kuberay.reconcile.eventseries.EventSeries` decides: the first occurrence is
created, the second makes it a series (``series.count`` 2, written at once), later
ones are counted locally and the grown series are written every ``series_refresh``
seconds (30 minutes), once more when the series ends (``series_finish``, 6 minutes
without an occurrence) and on :meth:`EventRecorder.close` -- so an Event repeated
every few seconds costs two writes, then one per 30 minutes. Nothing is dropped or
combined there, so every distinct Event KubeRay shows is shown.

With ``api=CORE_V1`` (client-go's ``tools/record``) every event goes through an
:class:`~kuberay.reconcile.eventcorrelator.EventCorrelator`: a repeat patches the
count of the Event already written; ten or more different messages of one (object,
type, reason) within ten minutes are combined into one ``"(combined from similar
events): ..."`` Event, and each object gets at most 25 events at once, then one per
5 minutes (the rest are dropped). Both caches are LRUs of 4096 keys, so memory stays
constant however many objects an operator reports on.

Events should be written with a client of their own (its own token bucket, as
client-go's broadcaster has its own clientset): :class:`~kuberay.reconcile.Manager`
gives its recorders one, so Events never wait behind, or delay, the pod creates
and status writes of reconciles.

Two wire formats, chosen by ``api``:

* ``events.k8s.io/v1`` (default; what controller-runtime's current recorder and
  KubeRay v1.7 write, so KubeRay's ClusterRole, which grants only ``events.k8s.io``
  ``create``/``patch``, is enough): ``regarding``, ``note``, ``action``,
  ``reportingController``/``reportingInstance``, ``eventTime``. A series write patches
  ``series.count`` and ``series.lastObservedTime`` (``note`` is immutable there).
* ``v1`` (core/v1, the legacy recorder): ``involvedObject``, ``message``, ``source``;
  a repeat patches ``count``, ``lastTimestamp`` and ``message``.

Both are the same objects on the server; ``kubectl get events`` and ``kubectl
describe`` show either.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as dt
import socket
import time
from collections.abc import Callable
from typing import Any

import structlog

from kuberay.gocompat.gotime import format_rfc3339, format_rfc3339_micro
from kuberay.kube import ApiError, Client, KubeError, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.eventcorrelator import DEFAULT_MAX_KEYS, EventCorrelator
from kuberay.reconcile.eventseries import (
    CREATE,
    DEFAULT_FINISH,
    DEFAULT_REFRESH,
    PATCH,
    EventSeries,
    Series,
)

log = structlog.get_logger("kuberay.events")

NORMAL = "Normal"
WARNING = "Warning"

#: The events API group/version of :class:`EventRecorder` (the default) ...
EVENTS_V1 = "events.k8s.io/v1"
#: ... and the legacy core/v1 Events.
CORE_V1 = "v1"

#: client-go's ``maxLruCacheEntries``: keys of each correlator LRU.
DEFAULT_MAX_AGGREGATED = DEFAULT_MAX_KEYS


def _now_rfc3339() -> str:
    return format_rfc3339(dt.datetime.now(dt.UTC))


def _now_micro() -> str:
    """metav1.MicroTime: RFC 3339 with microseconds."""
    return format_rfc3339_micro(dt.datetime.now(dt.UTC))


class _Record:
    """One recorded event, waiting for its writer."""

    __slots__ = ("action", "etype", "message", "obj", "observed", "reason", "related")

    def __init__(
        self,
        obj: Obj,
        etype: str,
        reason: str,
        message: str,
        action: str,
        observed: str,
        related: Obj | None = None,
    ) -> None:
        self.obj = obj
        self.etype = etype
        self.reason = reason
        self.message = message
        self.action = action
        self.observed = observed
        self.related = related


#: What a writer writes: a recorded event, or the current count of a series.
_Item = _Record | Series


class EventRecorder:
    """Writes Events for ``component`` (the ``source.component`` / reportingController).

    ``max_aggregated`` (>= 1) bounds each correlator map; ``aggregate_window`` is the
    correlator's aggregation interval; ``api`` is :data:`EVENTS_V1` (default) or
    :data:`CORE_V1`; ``correlator`` replaces the default one of CORE_V1. For EVENTS_V1,
    ``series_refresh`` and ``series_finish`` are client-go's ``refreshTime`` (30 min) and
    ``finishTime`` (6 min), see :mod:`~kuberay.reconcile.eventseries`.
    """

    def __init__(
        self,
        client: Client,
        component: str,
        *,
        host: str | None = None,
        aggregate_window: float = 600.0,
        queue_size: int = 1000,
        writers: int = 16,
        now: Callable[[], float] = time.monotonic,
        max_aggregated: int = DEFAULT_MAX_AGGREGATED,
        api: str = EVENTS_V1,
        correlator: EventCorrelator | None = None,
        series_refresh: float = DEFAULT_REFRESH,
        series_finish: float = DEFAULT_FINISH,
    ) -> None:
        if api not in (EVENTS_V1, CORE_V1):
            raise ValueError(f"api must be {EVENTS_V1!r} or {CORE_V1!r}, got {api!r}")
        self.api = api
        if max_aggregated < 1:
            raise ValueError(f"max_aggregated must be >= 1, got {max_aggregated}")
        if series_refresh <= 0 or series_finish <= 0:
            raise ValueError("series_refresh and series_finish must be > 0")
        self.client = client
        self.component = component
        self.host = host or socket.gethostname()
        if writers < 1:
            raise ValueError(f"writers must be >= 1, got {writers}")
        self._queue_size = queue_size
        self._queues: list[asyncio.Queue[_Item]] = [asyncio.Queue() for _ in range(writers)]
        # core/v1 as client-go's tools/record writes it.
        self.correlator = correlator or EventCorrelator(
            now=now, max_keys=max_aggregated, interval=aggregate_window
        )
        # events.k8s.io/v1 as client-go's tools/events writes it.
        self.series = EventSeries(now=now, max_keys=max_aggregated, finish=series_finish)
        self.series_refresh = series_refresh
        self._tasks: list[asyncio.Task[None] | None] = [None] * writers
        self._series_task: asyncio.Task[None] | None = None
        self._aborted = False
        #: Events written (creates and patches) and dropped by the spam filter.
        self.written = 0
        self.filtered = 0

    def event(
        self,
        obj: Obj,
        event_type: str,
        reason: str,
        message: str,
        action: str = "",
        *,
        related: Obj | None = None,
    ) -> None:
        """Record an Event about ``obj`` (``event_type`` is ``Normal`` or ``Warning``;
        ``action`` is what was done, e.g. ``Create``, as events.k8s.io records it;
        ``related`` a second object it is about, e.g. the Node of a forwarded Node Event)."""
        if self._aborted:
            return
        if self.pending() >= self._queue_size:
            log.warning("event dropped: queue full", reason=reason)
            return
        record = _Record(obj, event_type, reason, message, action, _now_micro(), related)
        self._enqueue(hash(_identity(obj)) % len(self._queues), record)
        if self.api == EVENTS_V1 and (self._series_task is None or self._series_task.done()):
            self._series_task = asyncio.get_running_loop().create_task(
                self._maintain_series(), name="event-series", context=contextvars.Context()
            )

    def eventf(self, obj: Obj, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        """``event`` with a %-formatted message."""
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    def pending(self) -> int:
        """Events recorded but not yet written."""
        return sum(queue.qsize() for queue in self._queues)

    async def flush(self) -> None:
        """Wait until every recorded event has been written (or failed) -- a repeat
        that only counted in its series included: the series is written later."""
        for queue in self._queues:
            await queue.join()

    def abort(self) -> None:
        """Drop every pending event and stop writing now (the process lost its right
        to write, e.g. its leader lease). Later :meth:`event` calls are dropped too."""
        self._aborted = True
        for queue in self._queues:
            while not queue.empty():
                queue.get_nowait()
                queue.task_done()
        for task in [*self._tasks, self._series_task]:
            if task is not None:
                task.cancel()

    async def close(self, *, flush: bool = True) -> None:
        """Write what is queued and the current count of every grown series (unless
        ``flush`` is False: drop it), within 5 s; then stop the writer tasks."""
        if not flush:
            self.abort()
        if self._series_task is not None:
            self._series_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._series_task
            self._series_task = None
        if flush and any(task is not None for task in self._tasks):
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await self.flush()
                    self._write_series(self.series.grown())
                    await self.flush()
        for i, task in enumerate(self._tasks):
            if task is None:
                continue
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self._tasks[i] = None

    def _enqueue(self, shard: int, item: _Item) -> None:
        self._queues[shard].put_nowait(item)
        task = self._tasks[shard]
        if task is None or task.done():
            # A fresh context: the writer must not inherit the first caller's log fields.
            self._tasks[shard] = asyncio.get_running_loop().create_task(
                self._run(self._queues[shard]),
                name="event-recorder",
                context=contextvars.Context(),
            )

    def _write_series(self, entries: list[Series]) -> None:
        """Have each series' writer write its current count (after what it has queued)."""
        for entry in entries:
            self._enqueue(entry.shard, entry)

    async def _maintain_series(self) -> None:
        """client-go's two loops: write the grown series every ``series_refresh``;
        finish (write once more, then forget) the idle ones every ``series_finish``."""
        loop = asyncio.get_running_loop()
        next_refresh = loop.time() + self.series_refresh
        next_finish = loop.time() + self.series.finish_after
        while True:
            await asyncio.sleep(max(0.0, min(next_refresh, next_finish) - loop.time()))
            now = loop.time()
            if now >= next_finish:
                self._write_series(self.series.finish())
                next_finish = now + self.series.finish_after
            if now >= next_refresh:
                self._write_series(self.series.grown())
                next_refresh = now + self.series_refresh

    async def _run(self, queue: asyncio.Queue[_Item]) -> None:
        while True:
            item = await queue.get()
            reason = item.reason if isinstance(item, _Record) else item.key[4]
            try:
                if isinstance(item, Series):
                    await self._patch_series(item)
                elif self.api == EVENTS_V1:
                    await self._record_series(item)
                else:
                    await self._write(item)
            except asyncio.CancelledError:
                raise
            except (KubeError, KeyError) as exc:
                log.warning("could not write event", reason=reason, error=str(exc))
            finally:
                queue.task_done()

    async def _record_series(self, record: _Record) -> None:
        """events.k8s.io/v1: create the first occurrence, start the series on the
        second; later ones only count (see :mod:`~kuberay.reconcile.eventseries`)."""
        meta = k8s.meta(record.obj)
        namespace = meta.get("namespace") or "default"
        ident = _identity(record.obj)
        key = (
            self.component,
            self.host,
            ident,
            record.etype,
            record.reason,
            record.action,
            record.message,
            _identity(record.related) if record.related is not None else "",
        )
        shard = hash(ident) % len(self._queues)
        verdict, entry = self.series.observe(key, namespace, shard, record.observed)
        if verdict == PATCH:
            await self._patch_series(entry)
            return
        if verdict != CREATE:
            return
        name = f"{meta.get('name')}.{time.time_ns():x}"
        body = self._new_event(
            name,
            namespace,
            _reference(record.obj),
            record.etype,
            record.reason,
            record.message,
            record.action,
            observed=record.observed,
            related=record.related,
        )
        try:
            await self.client.create(body)
        except ApiError as exc:
            self.series.forget(key)
            log.warning("could not create event", reason=record.reason, error=str(exc))
            return
        self.written += 1
        entry.name, entry.body, entry.written = name, body, 1

    async def _patch_series(self, entry: Series) -> None:
        """Write ``entry``'s count and last observation, unless the apiserver has them;
        an expired (gone) Event is created again, series included."""
        if not entry.grown:
            return
        count = entry.count
        series = {"series": {"count": count, "lastObservedTime": entry.observed}}
        try:
            await self.client.patch(self.api, "Event", entry.name, series, entry.namespace)
        except NotFound:
            body = {**entry.body, **series}
            body["metadata"] = {"name": entry.name, "namespace": entry.namespace}
            await self.client.create(body)
        self.written += 1
        entry.written = count

    async def _write(self, record: _Record) -> None:
        """core/v1: as client-go's EventCorrelator decides (module doc)."""
        obj, etype, reason, message = record.obj, record.etype, record.reason, record.message
        meta = k8s.meta(obj)
        namespace = meta.get("namespace") or "default"
        ident = _identity(obj)
        verdict = self.correlator.correlate(
            (self.component, self.host, str(ident)), namespace, etype, reason, message
        )
        if verdict.skip:
            self.filtered += 1
            log.debug("event dropped by the spam filter", reason=reason)
            return
        if verdict.count > 1 and verdict.name:
            patch = self._repeat_patch(verdict.count, verdict.message)
            try:
                await self.client.patch(self.api, "Event", verdict.name, patch, verdict.namespace)
                self.written += 1
                return
            except NotFound:
                pass  # expired (Events live an hour): write a new one
        name = f"{meta.get('name')}.{time.time_ns():x}"
        body = self._new_event(
            name,
            namespace,
            _reference(obj),
            etype,
            reason,
            verdict.message,
            record.action,
            verdict.count,
            related=record.related,
        )
        try:
            await self.client.create(body)
        except ApiError as exc:
            self.correlator.forget(verdict.key)
            log.warning("could not create event", reason=reason, error=str(exc))
            return
        self.written += 1
        self.correlator.created(verdict.key, name)

    def _new_event(
        self,
        name: str,
        namespace: str,
        reference: Obj,
        etype: str,
        reason: str,
        message: str,
        action: str,
        count: int = 1,
        *,
        observed: str = "",
        related: Obj | None = None,
    ) -> Obj:
        extra = {"related": _reference(related)} if related is not None else {}
        if self.api == EVENTS_V1:
            return {
                "apiVersion": EVENTS_V1,
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "eventTime": observed or _now_micro(),
                "regarding": reference,
                "reason": reason,
                "note": message[:1024],
                "type": etype,
                # events.k8s.io requires an action; the reason says what happened
                # when the caller gave none.
                "action": (action or reason)[:128],
                "reportingController": self.component,
                "reportingInstance": self.host[:128],
                **extra,
            }
        stamp = _now_rfc3339()
        return {
            "apiVersion": CORE_V1,
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": reference,
            "reason": reason,
            "message": message[:1024],
            "type": etype,
            "source": {"component": self.component, "host": self.host},
            "reportingComponent": self.component,
            "reportingInstance": self.host,
            **({"action": action} if action else {}),
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": count,
            **extra,
        }

    def _repeat_patch(self, count: int, message: str) -> Obj:
        return {"count": count, "lastTimestamp": _now_rfc3339(), "message": message[:1024]}


def _reference(obj: Obj) -> Obj:
    """The ObjectReference of ``obj`` (``regarding`` / ``involvedObject``)."""
    meta = k8s.meta(obj)
    fields = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "uid": meta.get("uid"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    return {k: v for k, v in fields.items() if v}


def _identity(obj: Obj) -> str:
    """The object an event is about: its uid, else namespace/kind/name."""
    meta = k8s.meta(obj)
    namespace = meta.get("namespace") or "default"
    return str(meta.get("uid") or f"{namespace}/{obj.get('kind')}/{meta.get('name')}")
