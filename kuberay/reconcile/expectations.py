"""Expectations: children a controller created or deleted that its cache has not
shown yet.

Why: right after creating a pod, the informer may not have delivered it. A
reconcile that runs in that window would count too few pods and create another.
Record what you did with ``expect_creations`` / ``expect_deletions``; the cache
event handlers call ``creation_observed`` / ``deletion_observed`` (or a lazy
controller settles them with ``observe`` against its cache); while
``satisfied(owner)`` is False, a reconcile must not scale that owner again.

The two kinds age differently (as KubeRay's scale expectations):

* an expected creation expires ``ttl`` seconds after it was recorded, so a child
  that vanished before the cache ever showed it (or a lost watch event) cannot
  wedge its owner;
* an expected deletion never expires: it holds until the child is gone from the
  cache. A child can stay in the cache for a long time after its delete call
  (finalizers, a long grace period, a dead node); an owner that scaled again
  meanwhile would count that child and delete or create one more. Deletions
  that the informer missed are still settled by its relist.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import attrs


@attrs.define
class _Pending:
    # adds[name]: when the creation was recorded (only creations expire).
    adds: dict[str, float] = attrs.field(factory=dict)
    deletes: set[str] = attrs.field(factory=set)


class Expectations:
    """Per-owner sets of child names expected to appear or disappear in the cache."""

    def __init__(self, ttl: float = 300.0, *, now: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._now = now
        # pending[owner key]: child names created/deleted but not yet observed.
        # An owner with nothing pending is removed.
        self._pending: dict[str, _Pending] = {}

    def _entry(self, owner: str) -> _Pending:
        entry = self._pending.get(owner)
        if entry is None:
            entry = self._pending[owner] = _Pending()
        return entry

    def expect_creations(self, owner: str, names: Iterable[str]) -> None:
        """``owner`` created children ``names``; wait (at most ``ttl``) for the cache."""
        entry = self._entry(owner)
        now = self._now()
        for name in names:
            entry.adds[name] = now

    def expect_deletions(self, owner: str, names: Iterable[str]) -> None:
        """``owner`` deleted children ``names``; wait until the cache no longer has them."""
        self._entry(owner).deletes.update(names)

    def creation_observed(self, owner: str, name: str) -> None:
        """The cache now has child ``name``."""
        entry = self._pending.get(owner)
        if entry is not None:
            entry.adds.pop(name, None)
            self._gc(owner, entry)

    def deletion_observed(self, owner: str, name: str) -> None:
        """The cache no longer has child ``name``."""
        entry = self._pending.get(owner)
        if entry is not None:
            entry.deletes.discard(name)
            self._gc(owner, entry)

    def observe(self, owner: str, exists: Callable[[str], bool]) -> None:
        """Settle ``owner``'s expectations against a cache lookup: expected
        children that ``exists`` and expected deletions that no longer exist
        are observed. (For controllers that check lazily instead of from event
        handlers.)"""
        entry = self._pending.get(owner)
        if entry is None:
            return
        entry.adds = {name: at for name, at in entry.adds.items() if not exists(name)}
        entry.deletes = {name for name in entry.deletes if exists(name)}
        self._gc(owner, entry)

    def lower(self, owner: str, name: str) -> None:
        """Forget one expectation, e.g. because the create or delete call failed."""
        entry = self._pending.get(owner)
        if entry is not None:
            entry.adds.pop(name, None)
            entry.deletes.discard(name)
            self._gc(owner, entry)

    def _gc(self, owner: str, entry: _Pending) -> None:
        if not entry.adds and not entry.deletes:
            self._pending.pop(owner, None)

    def satisfied(self, owner: str) -> bool:
        """True when nothing is pending for ``owner``: every expected creation was
        observed or expired, and every expected deletion was observed."""
        entry = self._pending.get(owner)
        if entry is None:
            return True
        deadline = self._now() - self.ttl
        entry.adds = {name: at for name, at in entry.adds.items() if at >= deadline}
        self._gc(owner, entry)
        return owner not in self._pending

    def expires_in(self, owner: str) -> float | None:
        """Seconds until ``owner``'s earliest pending creation expires (0 if already
        due), or None when no creation is pending. Nothing else wakes a controller when
        an expectation expires (a child deleted before its creation was ever seen sends
        no event it can act on), so requeue no later than this."""
        entry = self._pending.get(owner)
        if entry is None or not entry.adds:
            return None
        return max(0.0, min(entry.adds.values()) + self.ttl - self._now())

    def creations_pending(self, owner: str) -> frozenset[str]:
        """Names ``owner`` created that the cache has not shown yet and whose
        expectation has not expired."""
        entry = self._pending.get(owner)
        if entry is None:
            return frozenset()
        deadline = self._now() - self.ttl
        return frozenset(name for name, at in entry.adds.items() if at >= deadline)

    def pending(self, owner: str) -> tuple[frozenset[str], frozenset[str]]:
        """(names expected to appear, names expected to disappear)."""
        entry = self._pending.get(owner)
        if entry is None:
            return frozenset(), frozenset()
        return frozenset(entry.adds), frozenset(entry.deletes)

    def delete(self, owner: str) -> None:
        """Drop everything pending for ``owner`` (it was deleted)."""
        self._pending.pop(owner, None)

    def delete_prefix(self, prefix: str) -> None:
        """Drop everything pending for every owner whose key starts with ``prefix``
        (e.g. ``"ns/cluster/"``: all groups of a deleted cluster)."""
        for owner in [o for o in self._pending if o.startswith(prefix)]:
            del self._pending[owner]

    def owners(self, prefix: str = "") -> list[str]:
        """Owner keys with something pending, optionally only those starting with ``prefix``."""
        return [o for o in self._pending if o.startswith(prefix)]
