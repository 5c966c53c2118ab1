"""EventSeries: when a repeated events.k8s.io Event is written (client-go's broadcaster).

client-go's ``tools/events`` broadcaster (``event_broadcaster.go``, what KubeRay v1.7 and
controller-runtime's ``GetEventRecorder`` use) keeps each Event it wrote in a cache keyed
by what makes two Events the same ("isomorphic"), and then:

1. the first occurrence is created, without a series;
2. the second makes it a series: ``series.count`` 2 and ``series.lastObservedTime`` are
   written at once (one PATCH);
3. every later one is only counted, locally (count + 1, lastObservedTime = its time);
4. every ``refreshTime`` (30 min) the series are written (one PATCH each; a 404 -- the
   Event expired -- creates it again, series included);
5. every ``finishTime`` (6 min) a series last observed more than ``finishTime`` ago is
   written a last time and forgotten, and so is a singleton created that long ago: the
   next occurrence of either is a new Event.

So an Event repeated every few seconds costs two writes, then one per 30 minutes, however
long it goes on -- not one per occurrence.

:class:`EventSeries` is that cache, pure and synchronous (a clock is injected);
:class:`~kuberay.reconcile.events.EventRecorder` runs the two loops and does the writes.

Differences from client-go, none visible in how often an Event is written:

* The key is (reporting controller and instance, the object's uid, type, reason, action,
  note). client-go's has the object's whole reference, resourceVersion included, and no
  note: a change of the object starts a new Event there, and a different note joins the
  series of the first (whose note is shown). Here each distinct note keeps its own Event.
* The refresh writes only the series whose count grew since they were last written
  (client-go rewrites every series in its cache, but one that did not grow within
  ``finishTime`` is already gone from it).
* The cache is an LRU of ``max_keys`` (client-go's map is bounded only by its finish loop).
* ``EventRecorder.close`` writes every series that grew (client-go's ``Shutdown`` drops
  their last counts).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kuberay.reconcile.eventcorrelator import DEFAULT_MAX_KEYS, LRU

#: client-go's ``refreshTime``: how often grown series are written.
DEFAULT_REFRESH = 30 * 60.0
#: client-go's ``finishTime``: a series (or singleton) older than this is finished.
DEFAULT_FINISH = 6 * 60.0

#: What a new occurrence asks the recorder to do.
CREATE = "create"
PATCH = "patch"
COUNTED = "counted"


class Series:
    """One cached Event: what was written and how often it has occurred since.

    ``count`` is the occurrences seen, ``written`` the count the apiserver has (0 until
    created); ``observed`` is the wall time (``series.lastObservedTime``) and ``last`` the
    clock time of the latest occurrence; ``shard`` is the writer that owns it."""

    __slots__ = (
        "body",
        "count",
        "key",
        "last",
        "name",
        "namespace",
        "observed",
        "shard",
        "written",
    )

    def __init__(
        self, key: tuple[str, ...], namespace: str, shard: int, observed: str, last: float
    ) -> None:
        self.key = key
        self.namespace = namespace
        self.shard = shard
        self.count = 1
        self.written = 0
        self.name = ""
        self.body: dict[str, Any] = {}
        self.observed = observed
        self.last = last

    @property
    def grown(self) -> bool:
        """Created, and occurred more often than the apiserver was told."""
        return bool(self.name) and self.count > self.written


class EventSeries:
    """The isomorphic-Event cache of client-go's events.k8s.io broadcaster (module doc)."""

    def __init__(
        self,
        *,
        now: Callable[[], float] = time.monotonic,
        max_keys: int = DEFAULT_MAX_KEYS,
        finish: float = DEFAULT_FINISH,
    ) -> None:
        if max_keys < 1:
            raise ValueError(f"max_keys must be >= 1, got {max_keys}")
        self._now = now
        self.finish_after = finish
        self.entries: LRU[tuple[str, ...], Series] = LRU(max_keys)

    def observe(
        self, key: tuple[str, ...], namespace: str, shard: int, observed: str
    ) -> tuple[str, Series]:
        """Count one occurrence of ``key`` (observed at wall time ``observed``): returns
        :data:`CREATE` (first), :data:`PATCH` (second: write the new series now) or
        :data:`COUNTED` (later: nothing to write now), with the key's entry."""
        now = self._now()
        entry = self.entries.get(key)
        if entry is None:
            entry = Series(key, namespace, shard, observed, now)
            self.entries.put(key, entry)
            return CREATE, entry
        entry.count += 1
        entry.observed = observed
        entry.last = now
        return (PATCH if entry.count == 2 else COUNTED), entry

    def forget(self, key: tuple[str, ...]) -> None:
        """The Event of ``key`` could not be written: its next occurrence creates one."""
        self.entries.pop(key)

    def grown(self) -> list[Series]:
        """The series to write now (refresh, shutdown): those that grew."""
        return [e for e in self.entries.items.values() if e.grown]

    def finish(self) -> list[Series]:
        """Forget every Event last observed more than ``finish`` ago; returns those of
        them that still need their last count written."""
        horizon = self._now() - self.finish_after
        done = [e for e in self.entries.items.values() if e.last < horizon]
        for entry in done:
            self.entries.pop(entry.key)
        return [e for e in done if e.grown]

    def __len__(self) -> int:
        return len(self.entries)
