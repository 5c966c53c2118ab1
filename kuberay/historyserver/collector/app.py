"""The collector process: start-up, the running loops, and the shutdown flush.

Start-up (KubeRay ``main.go``): find this pod's node ID, wait for the active session, move
earlier sessions' logs to prev-logs, write the session marker (head), then run the event
collector, the log collector and (head) the endpoint snapshots. Every 5 s the session and the
node ID are looked at again: a new session moves the old one's logs to prev-logs and writes
its marker; a new node ID (raylet restart) rotates the event files.

Shutdown (SIGTERM): the event endpoint answers 503, requests in flight finish, every event
file is rotated and uploaded; at the same time the last endpoint poll (at most 10 s) and a
last, unbounded log scan run; then the marker is written once more. All of it fits in the
pod's default 30 s grace period unless storage is slow.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import aiohttp
import structlog
from aiohttp import web

from kuberay.historyserver.collector.auth import AuthConfigError, AuthRejected
from kuberay.historyserver.collector.config import CollectorOptions
from kuberay.historyserver.collector.dashboard import DashboardClient, base_url_from_fq_ray_ip
from kuberay.historyserver.collector.event_collector import MAX_BODY, EventCollector
from kuberay.historyserver.collector.event_files import EventFiles
from kuberay.historyserver.collector.event_upload import EventUploader
from kuberay.historyserver.collector.logs import LogUploader
from kuberay.historyserver.collector.nodeid import discover_node_id, fetch_node_id
from kuberay.historyserver.collector.sessions import (
    move_leftover_session_logs,
    resolve_session_latest,
    wait_for_session,
)
from kuberay.historyserver.collector.snapshots import Snapshots
from kuberay.historyserver.layout import ClusterRef, Layout
from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.errors import StorageError

log = structlog.get_logger("historyserver.collector")

WATCH_INTERVAL = 5.0


class StartupError(Exception):
    """The collector cannot start (no node ID, no session, auth rejected); one line."""


class Collector:
    """One collector; ``run(stop)`` returns after the shutdown flush."""

    def __init__(
        self,
        options: CollectorOptions,
        store: ObjectStore,
        *,
        watch_interval: float = WATCH_INTERVAL,
        startup_attempts: int = 12,
        startup_interval: float = 5.0,
    ) -> None:
        self.options = options
        self.store = store
        self.watch_interval = watch_interval
        self.startup_attempts = startup_attempts
        self.startup_interval = startup_interval
        self.tmp_root = Path(options.tmp_root)
        self.layout = Layout(
            ClusterRef.make(
                options.cluster_namespace,
                options.cluster_name,
                options.owner_kind,
                options.owner_name,
            ),
            root=options.storage_root_dir,
        )
        self.node_id = ""
        self.session_dir = Path()
        self.events: EventCollector | None = None
        self.logs: LogUploader | None = None
        self.snapshots: Snapshots | None = None
        self.ports: list[int] = []
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._node_auth_failed = False

    @property
    def session(self) -> str:
        """The active session's name."""
        return self.session_dir.name

    # ----- start-up ---------------------------------------------------------------------
    async def _discover(self, http: aiohttp.ClientSession) -> DashboardClient:
        o = self.options
        if not o.pod_ip:
            raise StartupError("POD_IP environment variable is not set")
        if not o.fq_ray_ip:
            raise StartupError("FQ_RAY_IP environment variable is not set")
        nodes = DashboardClient(
            http, base_url_from_fq_ray_ip(o.fq_ray_ip, o.dashboard_port), o.auth
        )
        try:
            self.node_id = await discover_node_id(
                nodes, o.pod_ip, attempts=self.startup_attempts, interval=self.startup_interval
            )
        except (AuthRejected, AuthConfigError) as exc:
            raise StartupError(f"cannot find the Ray node ID: {exc}") from None
        except Exception as exc:
            raise StartupError(
                f"failed to discover the Ray node ID for {o.pod_ip}: {exc}"
            ) from None
        try:
            self.session_dir = await wait_for_session(
                self.tmp_root, attempts=self.startup_attempts, interval=self.startup_interval
            )
        except TimeoutError as exc:
            raise StartupError(str(exc)) from None
        return nodes

    def _bind_context(self) -> None:
        structlog.contextvars.bind_contextvars(
            cluster=self.options.cluster_name,
            namespace=self.options.cluster_namespace,
            session=self.session,
            node_id=self.node_id,
            role=self.options.role,
        )

    async def write_marker(self, session: str) -> None:
        """The head's empty ``cluster-metadata`` marker for ``session``."""
        if not self.options.is_head:
            return
        key = self.layout.session_marker_key(session)
        try:
            await self.store.put(key, b"", content_type="application/octet-stream")
        except StorageError as exc:
            log.error("failed to write the session marker", key=key, error=str(exc))

    async def _start_events(self) -> None:
        o = self.options
        files = EventFiles(
            Path(o.event_data_dir),
            f"{o.cluster_name}_{o.cluster_namespace}",
            node_id=self.node_id,
            max_file_size=o.event_max_file_size,
            rotation_interval=o.event_rotation_interval,
            max_disk=o.event_max_disk,
        )
        files.session = self.session
        uploader = EventUploader(self.store, self.layout, files, compression=o.event_compression)
        self.events = EventCollector(
            files,
            uploader,
            flush_interval=o.event_flush_interval,
            on_job_finished=self._job_finished,
        )
        app = web.Application(client_max_size=MAX_BODY)
        self.events.routes(app)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=5.0)
        await runner.setup()
        self._runner = runner
        bound = 0
        for host in o.events_hosts:
            site = web.TCPSite(runner, host, o.events_port)
            try:
                await site.start()
            except OSError as exc:
                log.warning(
                    "cannot listen for events", host=host, port=o.events_port, error=str(exc)
                )
                continue
            bound += 1
            server = site._server
            for sock in getattr(server, "sockets", None) or ():
                self.ports.append(sock.getsockname()[1])
        if not bound:
            raise StartupError(f"cannot listen for events on port {o.events_port}")
        self.events.start()
        log.info("listening for events", hosts=list(o.events_hosts), port=o.events_port)

    def _job_finished(self) -> None:
        if self.snapshots is not None:
            self.snapshots.job_finished()

    # ----- loops ------------------------------------------------------------------------
    async def _watch(self, nodes: DashboardClient) -> None:
        """Every few seconds: session change (prev-logs, marker) and node ID change."""
        while True:
            await asyncio.sleep(self.watch_interval)
            current = resolve_session_latest(self.tmp_root)
            if current is not None and current != self.session_dir:
                log.info("session changed", old=self.session, new=current.name)
                if self.options.enable_log_collector:
                    await asyncio.to_thread(
                        move_leftover_session_logs, self.tmp_root, current, self.node_id
                    )
                self.session_dir = current
                self._bind_context()
                await self.write_marker(current.name)
            if self._node_auth_failed:
                continue
            try:
                fresh = await fetch_node_id(nodes, self.options.pod_ip)
            except (AuthRejected, AuthConfigError) as exc:
                log.error("node id refresh stopped: not authenticated", error=str(exc))
                self._node_auth_failed = True
                continue
            except Exception:
                continue
            if fresh != self.node_id:
                log.info("node id changed", old=self.node_id, new=fresh)
                self.node_id = fresh
                self._bind_context()
                if self.events is not None:
                    self.events.set_node_id(fresh)

    async def _log_loop(self) -> None:
        assert self.logs is not None
        interval = self.options.log_upload_interval
        next_live = 0.0
        loop = asyncio.get_running_loop()
        while True:
            await self._prev_logs()
            if interval > 0 and loop.time() >= next_live:
                await self.logs.scan_session(self.session_dir, self.node_id)
                next_live = loop.time() + interval
            await asyncio.sleep(
                min(self.watch_interval, interval) if interval > 0 else self.watch_interval
            )

    async def _prev_logs(self) -> None:
        assert self.logs is not None
        for session in await self.logs.process_prev_logs():
            await self.write_marker(session)

    # ----- run --------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Start, run until ``stop`` is set, then flush everything and return."""
        o = self.options
        async with aiohttp.ClientSession() as http:
            nodes = await self._discover(http)
            self._bind_context()
            log.info("collector starting", dashboard=o.dashboard_address, backend=o.storage_backend)
            if o.enable_log_collector:
                moved = await asyncio.to_thread(
                    move_leftover_session_logs, self.tmp_root, self.session_dir, self.node_id
                )
                if moved:
                    log.info("moved earlier sessions' logs to prev-logs", sessions=moved)
            await self.write_marker(self.session)
            if o.enable_event_collector:
                await self._start_events()
            if o.enable_log_collector:
                self.logs = LogUploader(
                    self.store,
                    self.layout,
                    self.tmp_root,
                    interval=o.log_upload_interval,
                    budget=o.log_upload_budget,
                )
                self._tasks.append(asyncio.create_task(self._log_loop(), name="logs"))
                if o.is_head:
                    dash = DashboardClient(http, o.dashboard_address, o.auth)
                    self.snapshots = Snapshots(
                        self.store,
                        self.layout,
                        dash,
                        lambda: self.session,
                        poll_interval=o.poll_interval,
                        additional=o.additional_endpoints,
                    )
                    self._tasks.append(asyncio.create_task(self.snapshots.run(), name="snapshots"))
            self._tasks.append(asyncio.create_task(self._watch(nodes), name="watch"))
            await stop.wait()
            await self.shutdown()

    async def shutdown(self) -> None:
        """The flush: events drained, a last endpoint poll and log scan, the marker."""
        log.info("shutting down: flushing events, logs and snapshots")
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        work = []
        if self.events is not None:
            work.append(self.events.drain())
        if self.snapshots is not None:
            work.append(self.snapshots.final_poll())
        if self.logs is not None:
            work.append(self._final_logs())
        results = await asyncio.gather(*work, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                log.error("shutdown step failed", error=repr(result))
        await self.write_marker(self.session)
        if self._runner is not None:
            await self._runner.cleanup()
        log.info("collector stopped")

    async def _final_logs(self) -> None:
        assert self.logs is not None
        await self._prev_logs()
        await self.logs.scan_session(self.session_dir, self.node_id, final=True)
