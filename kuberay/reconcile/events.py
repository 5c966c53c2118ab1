"""EventRecorder: Events about objects, with repeats aggregated.

``event(obj, type, reason, message, action=...)`` never blocks and never fails the caller:
events are written by a background task (at most ``queue_size`` waiting; more
are dropped with a log line, as client-go's broadcaster does).

Two wire formats, chosen by ``api``:

* ``events.k8s.io/v1`` (default; what controller-runtime's current recorder and
  KubeRay v1.7 write, so KubeRay's ClusterRole, which grants only ``events.k8s.io``
  ``create``/``patch``, is enough): ``regarding``, ``note``, ``action``,
  ``reportingController``/``reportingInstance``, ``eventTime``. A repeat of the same
  (object, type, reason, message) within ``aggregate_window`` seconds becomes an
  event series: ``series.count`` and ``series.lastObservedTime`` are patched.
* ``v1`` (core/v1, the legacy recorder): ``involvedObject``, ``message``, ``source``;
  a repeat bumps ``count`` and ``lastTimestamp``.

Both are the same objects on the server; ``kubectl get events`` and ``kubectl
describe`` show either.

Aggregation state is bounded like client-go's ``EventCorrelator``: an LRU of at
most ``max_aggregated`` (default 4096) keys; each write marks its key most
recently used and, when full, the least recently used key is evicted (its next
occurrence creates a new Event instead of bumping the old one). Memory therefore
stays constant however many distinct objects or messages an operator reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as dt
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import structlog

from kuberay.kube import ApiError, Client, KubeError, NotFound

log = structlog.get_logger("kuberay.events")

Obj = dict[str, Any]
NORMAL = "Normal"
WARNING = "Warning"

#: The events API group/version of :class:`EventRecorder` (the default) ...
EVENTS_V1 = "events.k8s.io/v1"
#: ... and the legacy core/v1 Events.
CORE_V1 = "v1"

#: client-go's ``maxLruCacheEntries``: keys of the aggregation LRU.
DEFAULT_MAX_AGGREGATED = 4096

AggregationKey = tuple[str, str, str, str]


def _now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _now_micro() -> str:
    """metav1.MicroTime: RFC 3339 with microseconds."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventRecorder:
    """Writes Events for ``component`` (the ``source.component`` / reportingController).

    ``max_aggregated`` (>= 1) bounds how many (object, type, reason, message) keys
    are remembered for aggregation; ``api`` is :data:`EVENTS_V1` (default) or
    :data:`CORE_V1`; see the module docstring.
    """

    def __init__(
        self,
        client: Client,
        component: str,
        *,
        host: str | None = None,
        aggregate_window: float = 600.0,
        queue_size: int = 1000,
        now: Callable[[], float] = time.monotonic,
        max_aggregated: int = DEFAULT_MAX_AGGREGATED,
        api: str = EVENTS_V1,
    ) -> None:
        if api not in (EVENTS_V1, CORE_V1):
            raise ValueError(f"api must be {EVENTS_V1!r} or {CORE_V1!r}, got {api!r}")
        self.api = api
        if max_aggregated < 1:
            raise ValueError(f"max_aggregated must be >= 1, got {max_aggregated}")
        self.client = client
        self.component = component
        self.host = host or socket.gethostname()
        self.aggregate_window = aggregate_window
        self._now = now
        self._queue: asyncio.Queue[tuple[Obj, str, str, str, str]] = asyncio.Queue(queue_size)
        self.max_aggregated = max_aggregated
        # LRU, oldest first: seen[(object id, type, reason, message)] =
        # (namespace, event name, count, last seen). Never longer than max_aggregated.
        self._seen: OrderedDict[AggregationKey, tuple[str, str, int, float]] = OrderedDict()
        self._task: asyncio.Task[None] | None = None
        self._aborted = False
        self.written = 0

    def event(self, obj: Obj, event_type: str, reason: str, message: str, action: str = "") -> None:
        """Record an Event about ``obj`` (``event_type`` is ``Normal`` or ``Warning``;
        ``action`` is what was done, e.g. ``Create``, as events.k8s.io records it)."""
        if self._aborted:
            return
        try:
            self._queue.put_nowait((obj, event_type, reason, message, action))
        except asyncio.QueueFull:
            log.warning("event dropped: queue full", reason=reason)
            return
        if self._task is None or self._task.done():
            # A fresh context: the writer must not inherit the first caller's log fields.
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="event-recorder", context=contextvars.Context()
            )

    def eventf(self, obj: Obj, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        """``event`` with a %-formatted message."""
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    def pending(self) -> int:
        """Events recorded but not yet written."""
        return self._queue.qsize()

    async def flush(self) -> None:
        """Wait until every recorded event has been written (or failed)."""
        await self._queue.join()

    def abort(self) -> None:
        """Drop every pending event and stop writing now (the process lost its right
        to write, e.g. its leader lease). Later :meth:`event` calls are dropped too."""
        self._aborted = True
        while not self._queue.empty():
            self._queue.get_nowait()
            self._queue.task_done()
        if self._task is not None:
            self._task.cancel()

    async def close(self, *, flush: bool = True) -> None:
        """Write what is queued (unless ``flush`` is False: drop it), then stop the
        writer task."""
        if not flush:
            self.abort()
        if self._task is not None:
            if flush:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(5):
                        await self.flush()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            obj, etype, reason, message, action = await self._queue.get()
            try:
                await self._write(obj, etype, reason, message, action)
            except asyncio.CancelledError:
                raise
            except (KubeError, KeyError) as exc:
                log.warning("could not write event", reason=reason, error=str(exc))
            finally:
                self._queue.task_done()

    async def _write(self, obj: Obj, etype: str, reason: str, message: str, action: str) -> None:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        ident = meta.get("uid") or f"{namespace}/{obj.get('kind')}/{meta.get('name')}"
        key = (str(ident), etype, reason, message)
        now = self._now()
        seen = self._seen.get(key)
        if seen is not None:
            self._seen.move_to_end(key)
        if seen is not None and now - seen[3] < self.aggregate_window:
            ns, name, count, _ = seen
            try:
                await self.client.patch(self.api, "Event", name, self._repeat_patch(count + 1), ns)
                self._remember(key, (ns, name, count + 1, now))
                self.written += 1
                return
            except NotFound:
                pass
        name = f"{meta.get('name')}.{time.time_ns():x}"
        reference = {
            k: v
            for k, v in {
                "apiVersion": obj.get("apiVersion"),
                "kind": obj.get("kind"),
                "name": meta.get("name"),
                "namespace": meta.get("namespace"),
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            }.items()
            if v
        }
        body = self._new_event(name, namespace, reference, etype, reason, message, action)
        try:
            await self.client.create(body)
        except ApiError as exc:
            log.warning("could not create event", reason=reason, error=str(exc))
            return
        self.written += 1
        self._remember(key, (namespace, name, 1, now))

    def _new_event(
        self,
        name: str,
        namespace: str,
        reference: Obj,
        etype: str,
        reason: str,
        message: str,
        action: str,
    ) -> Obj:
        if self.api == EVENTS_V1:
            return {
                "apiVersion": EVENTS_V1,
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "eventTime": _now_micro(),
                "regarding": reference,
                "reason": reason,
                "note": message[:1024],
                "type": etype,
                # events.k8s.io requires an action; the reason says what happened
                # when the caller gave none.
                "action": (action or reason)[:128],
                "reportingController": self.component,
                "reportingInstance": self.host[:128],
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
            "count": 1,
        }

    def _repeat_patch(self, count: int) -> Obj:
        if self.api == EVENTS_V1:
            return {"series": {"count": count, "lastObservedTime": _now_micro()}}
        return {"count": count, "lastTimestamp": _now_rfc3339()}

    def _remember(self, key: AggregationKey, value: tuple[str, str, int, float]) -> None:
        """Store ``key`` as the most recently used; evict the least recently used
        keys beyond ``max_aggregated``."""
        self._seen[key] = value
        self._seen.move_to_end(key)
        while len(self._seen) > self.max_aggregated:
            self._seen.popitem(last=False)
