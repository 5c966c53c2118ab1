"""The event collector: ``POST /v1/events`` in, files on disk, objects in storage.

Answers (KubeRay ``PersistEvents``): 200 once every event of the batch is on local disk;
400 for a body that is not a JSON array of valid events (nothing of it is written); 503 with
``Retry-After: 5`` while draining for shutdown and ``Retry-After: 10`` while the data dir
holds 80 % of ``--event-max-disk-mb``. Ray's aggregator retries until it gets a 2xx, so a 503
is real backpressure, never loss. Bodies up to 64 MiB are read (Ray sends up to 1,000 events
per POST; aiohttp's default limit is 1 MiB).

Timers: rotation is checked every ``min(30 s, rotation interval)``; growing files are flushed
to storage every ``flush interval`` (see ``event_upload``); disk use re-measured every minute.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import structlog
from aiohttp import web

from kuberay.historyserver.collector.event_check import (
    BadEvents,
    category_of,
    job_finished_in,
    parse_batch,
)
from kuberay.historyserver.collector.event_files import EventFiles
from kuberay.historyserver.collector.event_upload import EventUploader

log = structlog.get_logger("historyserver.collector.events")

MAX_BODY = 64 << 20
ROTATION_CHECK = 30.0
DISK_RECONCILE = 60.0


class EventCollector:
    """Receives, files and uploads events; ``start``/``drain`` bracket its life."""

    def __init__(
        self,
        files: EventFiles,
        uploader: EventUploader,
        *,
        flush_interval: float,
        rotation_check: float = ROTATION_CHECK,
        reconcile_interval: float = DISK_RECONCILE,
        on_job_finished: Callable[[], None] | None = None,
    ) -> None:
        self.on_job_finished = on_job_finished
        self.files = files
        self.uploader = uploader
        self.flush_interval = flush_interval
        self.rotation_check = min(rotation_check, files.rotation_interval)
        self.reconcile_interval = reconcile_interval
        self.draining = False
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._tasks: list[asyncio.Task[Any]] = []
        self.accepted = 0

    # ----- HTTP -------------------------------------------------------------------------
    def routes(self, app: web.Application) -> None:
        """Add ``POST /v1/events`` to ``app``."""
        app.router.add_post("/v1/events", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """One POST of events."""
        if self.draining:
            return _unavailable("event collector is shutting down", 5)
        self._inflight += 1
        self._idle.clear()
        try:
            if self.files.under_disk_pressure():
                return _unavailable("event collector under disk pressure", 10)
            try:
                body = await request.read()
            except web.HTTPRequestEntityTooLarge:
                raise
            except Exception as exc:
                return web.Response(status=400, text=f"failed to read body: {exc}")
            try:
                events = parse_batch(body)
            except BadEvents as exc:
                log.warning("rejected events", error=str(exc))
                return web.Response(status=400, text=str(exc))
            filed = [(e["sessionName"], category_of(e), e) for e in events]
            try:
                self.uploader.submit(self.files.write(filed))
            except OSError as exc:
                log.error("failed to write events to disk", error=str(exc))
                return web.Response(status=500, text=f"failed to write events: {exc}")
            self.accepted += len(events)
            if self.on_job_finished is not None and job_finished_in(events):
                self.on_job_finished()
            return web.Response(status=200)
        finally:
            self._inflight -= 1
            if self._inflight == 0:
                self._idle.set()

    # ----- timers -----------------------------------------------------------------------
    def start(self) -> None:
        """Re-queue a crash's leftovers and start the worker and timers."""
        self.uploader.resume()
        self._tasks = [
            asyncio.create_task(self.uploader.run(), name="event-upload"),
            asyncio.create_task(
                self._every(self.rotation_check, self._rotate), name="event-rotate"
            ),
            asyncio.create_task(
                self._every(self.reconcile_interval, self.files.reconcile_disk), name="event-disk"
            ),
        ]
        if self.flush_interval > 0:
            self._tasks.append(
                asyncio.create_task(
                    self._every(self.flush_interval, self._flush), name="event-flush"
                )
            )

    async def _every(self, interval: float, fn: Any) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                fn()
            except Exception:
                log.exception("event timer failed")

    def _rotate(self) -> None:
        self.uploader.submit(self.files.rotate_due())

    def _flush(self) -> None:
        self.uploader.flush_live(self.flush_interval)

    def set_node_id(self, node_id: str) -> None:
        """A new node ID (raylet restart): rotate, then file new events under it."""
        self.uploader.submit(self.files.set_node_id(node_id))

    async def drain(self) -> None:
        """Stop accepting (503), wait for requests in flight, rotate everything, give every
        file one last upload attempt, stop the worker."""
        self.draining = True
        await self._idle.wait()
        for task in self._tasks[1:]:
            task.cancel()
        self.uploader.submit(self.files.rotate_all())
        try:
            await self.uploader.drain()
        finally:
            for task in self._tasks:
                task.cancel()
            for task in self._tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        log.info("event collector drained", uploaded=self.uploader.uploaded, accepted=self.accepted)


def _unavailable(text: str, retry_after: int) -> web.Response:
    return web.Response(status=503, text=text, headers={"Retry-After": str(retry_after)})
