"""Snapshots of the head's dashboard endpoints (KubeRay ``poll.go``, ``startup_endpoints.go``).

Each answer body is stored raw at ``<session>/fetched_endpoints/restful__<path>`` (query
kept), the key KubeRay's server reads.

* Once per session, retried with backoff 5 s -> 60 s: ``/api/v0/cluster_metadata`` and
  ``/timezone``.
* Every poll interval (30 s): ``/api/serve/applications/``,
  ``/api/v0/placement_groups?detail=1&limit=10000``, ``RAY_COLLECTOR_ADDITIONAL_ENDPOINTS``,
  ``/api/jobs/`` (stored too: KubeRay only reads it for job IDs) and
  ``/api/data/datasets/<job hex>`` per job. An empty datasets answer is never stored; a
  terminal job's datasets stop being polled once stored or after 2 empty answers; on the final
  poll an empty Serve answer is not stored (the Serve controller usually died first).
* ``job_finished()`` (the event collector calls it when a job's driver or submission reaches
  a terminal state) polls at once, and again 3 s and 10 s later (Ray's job manager marks the
  submission terminal a moment after the driver exits): jobs, placement groups and datasets
  are in storage without waiting for the next tick.
* A 401/403 stops that endpoint's retries (startup) or the poller (periodic): a rejected
  credential does not heal by retrying.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import attrs
import orjson
import structlog

from kuberay.historyserver.collector.auth import AuthConfigError, AuthRejected
from kuberay.historyserver.collector.dashboard import DashboardClient, DashboardError
from kuberay.historyserver.layout import (
    CLUSTER_METADATA_ENDPOINT,
    DATASETS_ENDPOINT_PREFIX,
    JOBS_ENDPOINT,
    PLACEMENT_GROUPS_ENDPOINT,
    SERVE_APPLICATIONS_ENDPOINT,
    TIMEZONE_ENDPOINT,
    Layout,
)
from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.errors import StorageError

log = structlog.get_logger("historyserver.collector.snapshots")

DEFAULT_POLLED = (SERVE_APPLICATIONS_ENDPOINT, PLACEMENT_GROUPS_ENDPOINT)
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})
TERMINAL_EMPTY_POLLS = 2
FINAL_POLL_BUDGET = 10.0
AFTER_FINISH_DELAYS = (0.0, 3.0, 10.0)


@attrs.define
class DatasetState:
    """Per-session dataset polling memory (KubeRay ``datasetPollState``)."""

    terminal_stored: set[str] = attrs.Factory(set)
    empty_runs: dict[str, int] = attrs.Factory(dict)


def _has(body: bytes, field: str) -> bool:
    """Whether ``body`` has a non-empty ``field``; unparsable bodies count as non-empty."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return True
    if not isinstance(data, dict):
        return True
    return bool(data.get(field))


class Snapshots:
    """The head's endpoint poller."""

    def __init__(
        self,
        store: ObjectStore,
        layout: Layout,
        client: DashboardClient,
        session: Callable[[], str],
        *,
        poll_interval: float,
        additional: tuple[str, ...] = (),
        retry_interval: float = 5.0,
        max_retry_interval: float = 60.0,
        after_finish_delays: tuple[float, ...] = AFTER_FINISH_DELAYS,
    ) -> None:
        self.store = store
        self.layout = layout
        self.client = client
        self.session = session
        self.poll_interval = poll_interval
        self.endpoints = tuple(dict.fromkeys(DEFAULT_POLLED + additional))
        self.retry_interval = retry_interval
        self.max_retry_interval = max_retry_interval
        self.after_finish_delays = after_finish_delays
        self.state = DatasetState()
        self._state_session = ""
        self._finished = asyncio.Event()
        self.auth_failed = False
        self._lock = asyncio.Lock()
        self.stored: list[str] = []

    # ----- one endpoint -----------------------------------------------------------------
    async def _fetch(self, endpoint: str) -> bytes | None:
        try:
            return await self.client.get(endpoint)
        except (AuthRejected, AuthConfigError):
            raise
        except DashboardError as exc:
            log.warning("endpoint poll failed", endpoint=endpoint, error=str(exc))
            return None

    async def _store(self, session: str, endpoint: str, body: bytes) -> bool:
        key = self.layout.endpoint_key(session, endpoint)
        try:
            await self.store.put(key, body, content_type="application/json")
        except StorageError as exc:
            log.error("failed to store endpoint", endpoint=endpoint, key=key, error=str(exc))
            return False
        self.stored.append(key)
        return True

    # ----- startup endpoints ------------------------------------------------------------
    async def fetch_once(self, endpoint: str) -> bool:
        """Fetch and store ``endpoint`` for the current session, retrying with backoff until
        it is stored (``True``) or the credential is rejected (``False``)."""
        delay = self.retry_interval
        while True:
            session = self.session()
            try:
                body = await self.client.get(endpoint)
            except (AuthRejected, AuthConfigError) as exc:
                log.error(
                    "giving up on endpoint: not authenticated", endpoint=endpoint, error=str(exc)
                )
                self.auth_failed = True
                return False
            except DashboardError as exc:
                log.warning("startup endpoint fetch failed", endpoint=endpoint, error=str(exc))
                body = b""
            if body and await self._store(session, endpoint, body):
                return True
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_retry_interval)

    # ----- polling ----------------------------------------------------------------------
    async def poll_once(self, *, final: bool = False) -> None:
        """One pass over every polled endpoint and the per-job datasets."""
        async with self._lock:
            session = self.session()
            if session != self._state_session:
                self.state, self._state_session = DatasetState(), session
            for endpoint in self.endpoints:
                body = await self._fetch(endpoint)
                if body is None:
                    continue
                if (
                    final
                    and endpoint == SERVE_APPLICATIONS_ENDPOINT
                    and not _has(body, "applications")
                ):
                    continue
                await self._store(session, endpoint, body)
            await self._poll_jobs(session, final)

    async def _poll_jobs(self, session: str, final: bool) -> None:
        body = await self._fetch(JOBS_ENDPOINT)
        if body is None:
            return
        await self._store(session, JOBS_ENDPOINT, body)
        try:
            jobs = orjson.loads(body)
        except orjson.JSONDecodeError:
            log.warning("unparsable jobs list")
            return
        state = self.state
        for job in jobs if isinstance(jobs, list) else []:
            if not isinstance(job, dict):
                continue
            job_id, status = job.get("job_id"), job.get("status")
            if not isinstance(job_id, str) or not job_id or job_id in state.terminal_stored:
                continue
            terminal = status in TERMINAL
            if not final and terminal and state.empty_runs.get(job_id, 0) >= TERMINAL_EMPTY_POLLS:
                continue
            endpoint = DATASETS_ENDPOINT_PREFIX + job_id
            try:
                self.layout.endpoint_key(session, endpoint)
            except ValueError:
                continue
            data = await self._fetch(endpoint)
            if data is None:
                continue
            if not _has(data, "datasets"):
                if terminal:
                    state.empty_runs[job_id] = state.empty_runs.get(job_id, 0) + 1
                continue
            if await self._store(session, endpoint, data) and terminal:
                state.terminal_stored.add(job_id)
                state.empty_runs.pop(job_id, None)

    def job_finished(self) -> None:
        """A job reached a terminal state: snapshot now (see the module doc)."""
        self._finished.set()

    async def run(self) -> None:
        """Startup endpoints, then poll every interval (and after each ``job_finished``)
        until cancelled or the credential is rejected."""
        startup = [
            asyncio.create_task(self.fetch_once(CLUSTER_METADATA_ENDPOINT)),
            asyncio.create_task(self.fetch_once(TIMEZONE_ENDPOINT)),
        ]
        try:
            while not self.auth_failed:
                try:
                    await self.poll_once()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._finished.wait(), self.poll_interval)
                    if self._finished.is_set():
                        await self._after_finish()
                except (AuthRejected, AuthConfigError) as exc:
                    log.error("endpoint polling stopped: not authenticated", error=str(exc))
                    self.auth_failed = True
        finally:
            for task in startup:
                task.cancel()

    async def _after_finish(self) -> None:
        last = 0.0
        for delay in self.after_finish_delays:
            await asyncio.sleep(delay - last)
            last = delay
            self._finished.clear()
            await self.poll_once()

    async def final_poll(self, budget: float = FINAL_POLL_BUDGET) -> None:
        """The shutdown poll, bounded by ``budget`` seconds."""
        if self.auth_failed:
            return
        try:
            await asyncio.wait_for(self.poll_once(final=True), budget)
        except TimeoutError:
            log.warning("final endpoint poll cut short", budget=budget)
        except (AuthRejected, AuthConfigError) as exc:
            log.error("final endpoint poll not authenticated", error=str(exc))
