"""The stored clusters and sessions (``/clusters``), from the collector's marker objects.

Markers are ``<root>/cluster-metadata/<kind>/<ns>_[<owner>_]<cluster>/<session>`` (empty
objects, ``layout.parse_session_marker``). Listing them all can take many pages on a big
bucket, so ``ClusterIndex`` lists once and keeps the result for ``ttl`` seconds; concurrent
callers during a refresh share it. Entries are sorted newest session first (the time in the
session's name, then the names), with no cap.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC
from typing import Any

import attrs

from kuberay.gocompat.gotime import format_rfc3339
from kuberay.historyserver.layout import (
    CLUSTER_METADATA_DIR,
    RAYCLUSTER_KIND,
    ClusterRef,
    normalize_root,
    parse_session_marker,
    session_created_at,
)
from kuberay.historyserver.storage.base import ObjectStore, list_all

DEFAULT_TTL = 10.0


@attrs.frozen
class StoredSession:
    """One marker: a cluster and one of its sessions."""

    cluster: ClusterRef
    session: str

    def created_ts(self) -> int:
        """The session's creation time (Unix seconds, the name's wall time read as UTC);
        0 when the name has none."""
        created = session_created_at(self.session)
        return int(created.replace(tzinfo=UTC).timestamp()) if created else 0

    def as_json(self) -> dict[str, Any]:
        """The ``/clusters`` entry (KubeRay's field names)."""
        created = session_created_at(self.session)
        return {
            "name": self.cluster.name,
            "namespace": self.cluster.namespace,
            "sessionName": self.session,
            "createTime": format_rfc3339(created.replace(tzinfo=UTC)) if created else "",
            "createTimeStamp": self.created_ts(),
            "ownerKind": self.cluster.owner_kind,
            "ownerName": self.cluster.owner_name,
        }


def _order(s: StoredSession) -> tuple[int, str, str, str, str]:
    c = s.cluster
    return (-s.created_ts(), s.session, c.namespace, c.owner_name, c.name)


class ClusterIndex:
    """The marker listing, cached for ``ttl`` seconds."""

    def __init__(
        self,
        store: ObjectStore,
        root: str = "",
        *,
        ttl: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.root = normalize_root(root)
        self.ttl = ttl
        self._clock = clock
        self._sessions: list[StoredSession] | None = None
        self._json: list[dict[str, Any]] = []
        self._listed_at = 0.0
        self._lock = asyncio.Lock()
        self.listings = 0

    def _prefix(self) -> str:
        return "/".join(p for p in (self.root, CLUSTER_METADATA_DIR) if p) + "/"

    async def sessions(self, *, refresh: bool = False) -> list[StoredSession]:
        """Every stored session, newest first (cached up to ``ttl`` seconds)."""
        async with self._lock:
            stale = self._sessions is None or self._clock() - self._listed_at >= self.ttl
            if refresh or stale:
                listing = await list_all(self.store, self._prefix(), delimiter=None)
                self.listings += 1
                found = set()
                for obj in listing.objects:
                    parsed = parse_session_marker(obj.key, self.root)
                    if parsed is not None:
                        found.add(StoredSession(*parsed))
                self._sessions = sorted(found, key=_order)
                self._json = [s.as_json() for s in self._sessions]
                self._listed_at = self._clock()
            assert self._sessions is not None
            return self._sessions

    async def entries(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """``sessions()`` as ``/clusters`` entries (encoded once per listing)."""
        await self.sessions(refresh=refresh)
        return self._json

    async def find(
        self, namespace: str, kind: str, name: str, session: str | None = None
    ) -> StoredSession | None:
        """The stored session a ``/enter_cluster`` path names (KubeRay's ``resolveSession``):
        ``kind`` ``raycluster`` matches the cluster's own name whatever its owner (a RayJob's
        or RayService's cluster too: the cluster picker enters every row that way),
        ``rayjob``/``rayservice`` the owner's kind and name; ``session`` ``None`` or ``latest``
        means the newest. Refreshes the listing once before giving up."""
        for refresh in (False, True):
            for s in await self.sessions(refresh=refresh):
                if not _names(s.cluster, namespace, kind, name):
                    continue
                if session in (None, "latest") or s.session == session:
                    return s
        return None


def _names(cluster: ClusterRef, namespace: str, kind: str, name: str) -> bool:
    """Whether ``/enter_cluster/{namespace}/{kind}/{name}`` names ``cluster``."""
    if cluster.namespace != namespace:
        return False
    if kind == RAYCLUSTER_KIND:
        return cluster.name == name
    return cluster.owner_kind == kind and cluster.owner_name == name
