"""The session cache: each session decoded at most once at a time, kept while it fits.

* Lazy: nothing is loaded until a request needs the session.
* One load per session at a time: concurrent requests for a session being loaded await that
  same load (it runs in its own task, so a caller that goes away does not cancel it for the
  others). A load that fails (or exceeds ``load_timeout``) is not cached; every waiter gets
  its error and the next request tries again.
* Bounded: at most ``max_entries`` sessions, and at most ``max_bytes`` of their
  ``approx_bytes`` (``0``: no byte bound), least recently used evicted first; a single
  session bigger than the budget is still kept (alone), as KubeRay does.
* ``ttl`` (seconds, ``0``: none) expires a session that was not used for that long; every
  use renews it (sliding, as KubeRay's ``--session-cache-ttl``).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, Protocol, TypeVar


class Sized(Protocol):
    """What the cache needs of a value: its approximate size in bytes."""

    @property
    def approx_bytes(self) -> int:
        """Approximate bytes held."""
        ...


K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Sized)


class SessionCache(Generic[K, V]):
    """A bounded LRU of loaded sessions with single-flight loading."""

    def __init__(
        self,
        loader: Callable[[K], Awaitable[V]],
        *,
        max_entries: int = 100,
        max_bytes: int = 2 << 30,
        ttl: float = 0.0,
        load_timeout: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("the session cache must hold at least one session")
        self._loader = loader
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.ttl = ttl
        self.load_timeout = load_timeout
        self._clock = clock
        self._entries: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self._loading: dict[K, asyncio.Task[V]] = {}
        self.loads = 0
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    @property
    def total_bytes(self) -> int:
        """The summed ``approx_bytes`` of the cached sessions."""
        return sum(v.approx_bytes for v, _ in self._entries.values())

    def _fresh(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        value, used = entry
        now = self._clock()
        if self.ttl > 0 and now - used > self.ttl:
            del self._entries[key]
            self.evictions += 1
            return None
        self._entries[key] = (value, now)
        self._entries.move_to_end(key)
        return value

    async def get(self, key: K) -> V:
        """The session for ``key``, loading it (once, shared) when it is not cached."""
        value = self._fresh(key)
        if value is not None:
            return value
        task = self._loading.get(key)
        if task is None:
            task = asyncio.create_task(self._load(key))
            self._loading[key] = task
            task.add_done_callback(lambda t: self._done(key, t))
        return await asyncio.shield(task)

    def _done(self, key: K, task: asyncio.Task[V]) -> None:
        self._loading.pop(key, None)
        if not task.cancelled():
            task.exception()  # retrieved: a failed load with no waiter left is not an error

    async def _load(self, key: K) -> V:
        self.loads += 1
        value = await asyncio.wait_for(self._loader(key), self.load_timeout or None)
        self._entries[key] = (value, self._clock())
        self._entries.move_to_end(key)
        self._evict()
        return value

    def _evict(self) -> None:
        while len(self._entries) > self.max_entries or (
            self.max_bytes > 0 and len(self._entries) > 1 and self.total_bytes > self.max_bytes
        ):
            self._entries.popitem(last=False)
            self.evictions += 1

    def refresh(self, key: K) -> None:
        """Load ``key`` again in the background; until that load is done ``get`` keeps
        answering the cached value (nothing starts when a load of ``key`` is running)."""
        if key in self._loading:
            return
        task = asyncio.create_task(self._load(key))
        self._loading[key] = task
        task.add_done_callback(lambda t: self._done(key, t))

    def invalidate(self, key: K) -> None:
        """Forget ``key`` (the next use loads it again)."""
        self._entries.pop(key, None)
