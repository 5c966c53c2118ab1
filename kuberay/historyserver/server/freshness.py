"""Sessions still being written: reloaded when their objects change.

A cluster that is alive keeps adding event files (and growing them: our collector re-puts a
growing file at its final key) and snapshots. A cached session of such a cluster is checked
at most every ``interval`` seconds, in the background, after a request used it: its
*fingerprint* (the keys and sizes of its event files and ``fetched_endpoints/`` objects, what
``load_session`` decoded) is listed again, and when it differs the session is loaded anew in
the background. Requests keep the cached snapshot until the new one is ready, so no request
waits for a reload (``?reload=true`` on ``/enter_cluster`` still forces one).

Which sessions may still be written:

* with ``--enable-live-clusters``, those whose RayCluster exists now (the live list); a
  session of a cluster that is gone is never checked again;
* without Kubernetes, the newest session of its cluster (a newer one means this one ended)
  until nothing changed for ``settle`` seconds (15 min: far beyond any collector's upload
  delay), so the sessions of long-deleted clusters stop costing listings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

from kuberay.historyserver.server.session import (
    SessionKey,
    SessionSnapshot,
    endpoint_objects,
    fingerprint,
)
from kuberay.historyserver.storage.base import ObjectStore

if TYPE_CHECKING:
    from kuberay.historyserver.server.cache import SessionCache
    from kuberay.historyserver.server.clusters import ClusterIndex
    from kuberay.historyserver.server.live import LiveClusters

log = structlog.get_logger("historyserver.server.freshness")

DEFAULT_INTERVAL = 10.0
DEFAULT_SETTLE = 900.0


async def current_fingerprint(store: ObjectStore, key: SessionKey) -> int:
    """The session's fingerprint as stored now."""
    from kuberay.historyserver.server.event_files import find_event_files

    files = await find_event_files(store, key.layout, key.session)
    return fingerprint(files, await endpoint_objects(store, key))


class Freshness:
    """Decides when a cached session is checked, checks it, and asks the cache to reload."""

    def __init__(
        self,
        store: ObjectStore,
        cache: SessionCache[SessionKey, SessionSnapshot],
        clusters: ClusterIndex,
        *,
        live: LiveClusters | None = None,
        interval: float = DEFAULT_INTERVAL,
        settle: float = DEFAULT_SETTLE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.cache = cache
        self.clusters = clusters
        self.live = live
        self.interval = interval
        self.settle = settle
        self._clock = clock
        #: key -> (when it was last checked, when it last changed); ``inf`` check: never
        self._seen: dict[SessionKey, tuple[float, float]] = {}
        self._checking: dict[SessionKey, asyncio.Task[None]] = {}
        self.checks = 0
        self.reloads = 0

    def used(self, snapshot: SessionSnapshot) -> None:
        """A request used ``snapshot``: check it in the background if it is due."""
        key = snapshot.key
        now = self._clock()
        checked, changed = self._seen.setdefault(key, (now, now))
        if now - checked < self.interval or key in self._checking:
            return
        self._seen[key] = (now, changed)
        task = asyncio.create_task(self._check(snapshot, changed))
        self._checking[key] = task
        task.add_done_callback(lambda _t: self._checking.pop(key, None))

    async def close(self) -> None:
        """Cancel the checks in flight."""
        tasks = list(self._checking.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _may_be_written(self, key: SessionKey, changed: float) -> bool:
        cluster = key.layout.cluster
        if self.live is not None:
            alive = await self.live.entries()
            return any(c.namespace == cluster.namespace and c.name == cluster.name for c in alive)
        if self._clock() - changed > self.settle:
            return False
        for s in await self.clusters.sessions():
            if s.cluster == cluster:
                return s.session == key.session  # the newest session of the cluster
        return True

    async def _check(self, snapshot: SessionSnapshot, changed: float) -> None:
        key = snapshot.key
        try:
            if not await self._may_be_written(key, changed):
                self._seen[key] = (float("inf"), changed)
                return
            self.checks += 1
            if await current_fingerprint(self.store, key) != snapshot.fingerprint:
                self.reloads += 1
                self._seen[key] = (self._clock(), self._clock())
                log.info("session changed in storage: reloading", session=key.describe())
                self.cache.refresh(key)
        except Exception as exc:  # a failed check is retried at the next interval
            log.warning("session freshness check failed", session=key.describe(), error=str(exc))
