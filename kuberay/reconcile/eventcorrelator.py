"""EventCorrelator: what client-go's event correlator decides before an Event is sent.

Pure and synchronous (a clock is injected); :class:`~kuberay.reconcile.events.EventRecorder`
asks it about every recorded event, in order, and writes what it says:

1. **Aggregation** -- events about one object with the same type and reason but
   different messages are "similar". Once ``max_similar`` (10) distinct messages of
   one group were seen, each less than ``interval`` (600 s) after the group's previous
   event, further ones are combined: the message becomes ``"(combined from similar
   events): <message>"`` and they all share one Event (keyed by the group).
2. **Dedupe** -- an event whose key (object, type, reason, message; or the group, once
   combined) was seen before is a repeat: the Event already written for it is patched
   (``count`` + 1, new last timestamp and message) instead of a new one being created.
   The count grows even for repeats the spam filter drops, so the next patch that is
   sent carries the true count.
3. **Spam filter** -- every object (with the reporting component and host) has a token
   bucket of ``spam_burst`` (25) tokens refilled at ``spam_qps`` (one per 5 minutes);
   an event that finds it empty is dropped (``Correlation.skip``).

``spam_filter=False`` / ``aggregate=False`` turn steps 3 / 1 off (client-go's
``events.k8s.io`` broadcaster, ``tools/events``, only dedupes, into event series).

Each of the three maps is an LRU of at most ``max_keys`` (4096, client-go's
``maxLruCacheEntries``) keys, so memory is constant however many objects or messages
an operator reports; an evicted dedupe key makes its next occurrence a new Event.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

#: Prefix client-go puts on the message of combined (aggregated) events.
COMBINED_PREFIX = "(combined from similar events): "

DEFAULT_MAX_KEYS = 4096
DEFAULT_SPAM_BURST = 25
DEFAULT_SPAM_QPS = 1.0 / 300.0
DEFAULT_MAX_SIMILAR = 10
DEFAULT_INTERVAL = 600.0

K = TypeVar("K")
V = TypeVar("V")

#: Who reported an event about which object: (component, host, object identity).
SourceObject = tuple[str, str, str]


class LRU(Generic[K, V]):
    """A dict of at most ``size`` keys; reads and writes make a key most recent."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recent), or None."""
        value = self.items.get(key)
        if value is not None:
            self.items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Set ``key`` (the most recent); the least recent beyond ``size`` go."""
        self.items[key] = value
        self.items.move_to_end(key)
        while len(self.items) > self.size:
            self.items.popitem(last=False)

    def pop(self, key: K) -> None:
        """Remove ``key`` if present."""
        self.items.pop(key, None)

    def __len__(self) -> int:
        return len(self.items)


class _Bucket:
    """A passive token bucket (tokens are only counted when asked)."""

    __slots__ = ("last", "tokens")

    def __init__(self, tokens: float, last: float) -> None:
        self.tokens = tokens
        self.last = last


class _Group:
    """Distinct messages of one (object, type, reason) group and when it last fired."""

    __slots__ = ("last", "messages")

    def __init__(self, last: float) -> None:
        self.messages: set[str] = set()
        self.last = last


class _Seen:
    """The Event written (or to be written) for one dedupe key."""

    __slots__ = ("count", "name", "namespace")

    def __init__(self, count: int, name: str, namespace: str) -> None:
        self.count = count
        self.name = name
        self.namespace = namespace


@dataclass(frozen=True, slots=True)
class Correlation:
    """The correlator's answer for one event.

    ``skip``: drop it (spam filter). Otherwise write ``message``: ``count == 1`` means
    create a new Event (then call :meth:`EventCorrelator.created` with its name);
    ``count > 1`` means patch the Event ``name`` in ``namespace`` to ``count``.
    ``key`` identifies the Event for :meth:`EventCorrelator.created` /
    :meth:`EventCorrelator.forget`.
    """

    skip: bool
    key: tuple[str, ...]
    message: str
    count: int
    name: str
    namespace: str


class EventCorrelator:
    """Aggregation, dedupe and per-object spam filter of recorded events (module doc)."""

    def __init__(
        self,
        *,
        now: Callable[[], float] = time.monotonic,
        max_keys: int = DEFAULT_MAX_KEYS,
        spam_burst: int = DEFAULT_SPAM_BURST,
        spam_qps: float = DEFAULT_SPAM_QPS,
        max_similar: int = DEFAULT_MAX_SIMILAR,
        interval: float = DEFAULT_INTERVAL,
        spam_filter: bool = True,
        aggregate: bool = True,
    ) -> None:
        if max_keys < 1:
            raise ValueError(f"max_keys must be >= 1, got {max_keys}")
        self._now = now
        self.spam_burst = spam_burst
        self.spam_qps = spam_qps
        self.max_similar = max_similar
        self.interval = interval
        self.spam_filter = spam_filter
        self.aggregate = aggregate
        self.groups: LRU[tuple[str, ...], _Group] = LRU(max_keys)
        self.seen: LRU[tuple[str, ...], _Seen] = LRU(max_keys)
        self.buckets: LRU[SourceObject, _Bucket] = LRU(max_keys)

    def correlate(
        self, source: SourceObject, namespace: str, event_type: str, reason: str, message: str
    ) -> Correlation:
        """Decide what to write for one event about ``source``'s object (module doc)."""
        now = self._now()
        group_key = (*source, event_type, reason)
        key: tuple[str, ...] = (*group_key, message)
        if self.aggregate:
            group = self.groups.get(group_key)
            if group is None or now - group.last > self.interval:
                group = _Group(now)
            group.messages.add(message)
            group.last = now
            self.groups.put(group_key, group)
            if len(group.messages) >= self.max_similar:
                # Keep the set from growing past the threshold; every later message
                # of the group is combined into the group's one Event.
                group.messages.pop()
                message = COMBINED_PREFIX + message
                key = group_key
        seen = self.seen.get(key)
        if seen is None:
            seen = _Seen(1, "", namespace)
        else:
            seen.count += 1
        self.seen.put(key, seen)
        skip = self.spam_filter and not self._allow(source, now)
        return Correlation(skip, key, message, seen.count, seen.name, seen.namespace)

    def created(self, key: tuple[str, ...], name: str) -> None:
        """Remember that the Event for ``key`` was created as ``name``."""
        seen = self.seen.get(key)
        if seen is not None:
            seen.name = name

    def forget(self, key: tuple[str, ...]) -> None:
        """The Event for ``key`` is gone (or was never written): its next occurrence
        creates a new one."""
        self.seen.pop(key)

    def _allow(self, source: SourceObject, now: float) -> bool:
        bucket = self.buckets.get(source)
        if bucket is None:
            bucket = _Bucket(float(self.spam_burst), now)
        else:
            bucket.tokens = min(
                float(self.spam_burst), bucket.tokens + (now - bucket.last) * self.spam_qps
            )
            bucket.last = now
        self.buckets.put(source, bucket)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return True
        return False
