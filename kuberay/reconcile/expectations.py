"""Expectations: children a controller created or deleted that its cache has not
shown yet.

Why: right after creating a pod, the informer may not have delivered it. A
reconcile that runs in that window would count too few pods and create another.
Record what you did with ``expect_creations`` / ``expect_deletions``; the cache
event handlers call ``creation_observed`` / ``deletion_observed``; while
``satisfied(owner)`` is False, a reconcile must not scale that owner again.
Expectations expire after ``ttl`` seconds (default 5 minutes, as client-go's
controller expectations), so a lost watch event cannot wedge an owner forever.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import attrs


@attrs.define
class _Pending:
    adds: set[str] = attrs.field(factory=set)
    deletes: set[str] = attrs.field(factory=set)
    since: float = 0.0


class Expectations:
    """Per-owner sets of child names expected to appear or disappear in the cache."""

    def __init__(self, ttl: float = 300.0, *, now: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._now = now
        # pending[owner key]: child names created/deleted but not yet observed.
        # An owner with empty sets is removed.
        self._pending: dict[str, _Pending] = {}

    def _entry(self, owner: str) -> _Pending:
        entry = self._pending.get(owner)
        if entry is None:
            entry = self._pending[owner] = _Pending(since=self._now())
        return entry

    def expect_creations(self, owner: str, names: Iterable[str]) -> None:
        """``owner`` created children ``names``; wait for the cache to show them."""
        entry = self._entry(owner)
        entry.adds.update(names)
        entry.since = self._now()

    def expect_deletions(self, owner: str, names: Iterable[str]) -> None:
        """``owner`` deleted children ``names``; wait for the cache to drop them."""
        entry = self._entry(owner)
        entry.deletes.update(names)
        entry.since = self._now()

    def creation_observed(self, owner: str, name: str) -> None:
        """The cache now has child ``name``."""
        self._observe(owner, name, adds=True)

    def deletion_observed(self, owner: str, name: str) -> None:
        """The cache no longer has child ``name``."""
        self._observe(owner, name, adds=False)

    def observe(self, owner: str, exists: Callable[[str], bool]) -> None:
        """Settle ``owner``'s expectations against a cache lookup: expected
        children that ``exists`` and expected deletions that no longer exist
        are observed. (For controllers that check lazily instead of from event
        handlers.)"""
        entry = self._pending.get(owner)
        if entry is None:
            return
        entry.adds = {name for name in entry.adds if not exists(name)}
        entry.deletes = {name for name in entry.deletes if exists(name)}
        self._gc(owner, entry)

    def lower(self, owner: str, name: str) -> None:
        """Forget one expectation, e.g. because the create or delete call failed."""
        entry = self._pending.get(owner)
        if entry is not None:
            entry.adds.discard(name)
            entry.deletes.discard(name)
            self._gc(owner, entry)

    def _observe(self, owner: str, name: str, *, adds: bool) -> None:
        entry = self._pending.get(owner)
        if entry is None:
            return
        (entry.adds if adds else entry.deletes).discard(name)
        self._gc(owner, entry)

    def _gc(self, owner: str, entry: _Pending) -> None:
        if not entry.adds and not entry.deletes:
            self._pending.pop(owner, None)

    def satisfied(self, owner: str) -> bool:
        """True when nothing is pending for ``owner`` or its expectations expired."""
        entry = self._pending.get(owner)
        if entry is None:
            return True
        if self._now() - entry.since > self.ttl:
            self._pending.pop(owner, None)
            return True
        return False

    def pending(self, owner: str) -> tuple[frozenset[str], frozenset[str]]:
        """(names expected to appear, names expected to disappear)."""
        entry = self._pending.get(owner)
        if entry is None:
            return frozenset(), frozenset()
        return frozenset(entry.adds), frozenset(entry.deletes)

    def delete(self, owner: str) -> None:
        """Drop everything pending for ``owner`` (it was deleted)."""
        self._pending.pop(owner, None)
