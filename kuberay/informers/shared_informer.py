"""SharedIndexInformer: one cache of one resource, shared by many handlers.

A Reflector lists and watches into this informer; the informer applies each
change to its :class:`Indexer` first and then tells every registered handler,
in arrival order. Objects are stored as plain dicts after ``transform`` (by
default: strip ``metadata.managedFields``, which is large and never read) and
handed out shared and **read-only**.

On a relist (``replace``) keys already cached arrive as updates (suppressed when
the resourceVersion did not change), new keys as adds, and keys that vanished
as deletes carrying a :class:`DeletedFinalStateUnknown` tombstone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from kuberay.informers.handlers import ResourceEventHandler
from kuberay.informers.listwatch import ListerWatcher
from kuberay.informers.reflector import Reflector
from kuberay.informers.store import (
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    meta_namespace_key,
)
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

Transform = Callable[[Obj], Obj]

log = structlog.get_logger("kuberay.informers")


def strip_managed_fields(obj: Obj) -> Obj:
    """Default transform: drop ``metadata.managedFields`` (in place) and return ``obj``."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)
    return obj


def _rv(obj: Obj) -> str | None:
    rv = k8s.meta(obj).get("resourceVersion")
    return str(rv) if rv is not None else None


class HandlerRegistration:
    """A handler added to an informer; ``has_synced`` once its initial adds were delivered."""

    def __init__(self, handler: ResourceEventHandler, resync_period: float) -> None:
        self.handler = handler
        self.resync_period = resync_period
        self.next_resync = time.monotonic() + resync_period if resync_period else float("inf")
        self.synced = False

    def has_synced(self) -> bool:
        """True when this handler has seen every object of the first list."""
        return self.synced


class SharedIndexInformer:
    """Cache + event fan-out for one resource. Start with :meth:`start`, stop with :meth:`stop`.

    ``on_task``, if given, is called with each background task (reflector, resync
    loop) right after it is created, e.g. a supervisor's ``watch``: those tasks
    are meant to run until :meth:`stop`, and the cache goes stale if one dies.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        *,
        indexers: Mapping[str, IndexFunc] | None = None,
        resync_period: float = 0.0,
        transform: Transform | None = strip_managed_fields,
        inactivity_timeout: float | None = None,
        on_task: Callable[[asyncio.Task[Any]], None] | None = None,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.on_task = on_task
        self.indexer = Indexer(indexers)
        self.default_resync_period = resync_period
        self.transform = transform
        self.reflector = Reflector(lister_watcher, self, inactivity_timeout=inactivity_timeout)
        self._registrations: list[HandlerRegistration] = []
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._resync_task: asyncio.Task[None] | None = None

    # ----- public API -----------------------------------------------------
    @property
    def description(self) -> str:
        """Which resource this informer caches."""
        return self.lister_watcher.description

    def add_event_handler(
        self, handler: ResourceEventHandler, resync_period: float | None = None
    ) -> HandlerRegistration:
        """Register ``handler``; if the cache is already filled it gets an add per object."""
        period = self.default_resync_period if resync_period is None else resync_period
        if period:
            period = max(1.0, period)
        reg = HandlerRegistration(handler, period)
        self._registrations.append(reg)
        if self._synced.is_set():
            for obj in self.indexer.list():
                self._safe(handler.on_add, obj, True)
            reg.synced = True
        if period and self._task is not None and self._resync_task is None:
            self._start_resync()
        return reg

    def remove_event_handler(self, registration: HandlerRegistration) -> None:
        """Stop notifying the handler of ``registration``."""
        self._registrations.remove(registration)

    def has_synced(self) -> bool:
        """True once the first list has been stored and delivered."""
        return self._synced.is_set()

    async def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Wait until :meth:`has_synced`; False if ``timeout`` passed first."""
        try:
            async with asyncio.timeout(timeout):
                await self._synced.wait()
        except TimeoutError:
            return False
        return True

    def start(self) -> None:
        """Begin listing and watching in a background task (idempotent)."""
        if self._task is not None:
            return
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self.reflector.run(), name=f"reflector {self.description}")
        if self.on_task is not None:
            self.on_task(self._task)
        if any(r.resync_period for r in self._registrations):
            self._start_resync()

    def _start_resync(self) -> None:
        self._resync_task = asyncio.get_running_loop().create_task(
            self._resync_loop(), name=f"resync {self.description}"
        )
        if self.on_task is not None:
            self.on_task(self._resync_task)

    async def stop(self) -> None:
        """Cancel the reflector and resync tasks and wait for them. A task that had
        already died is not re-raised here (report it through ``on_task``)."""
        tasks = [t for t in (self._task, self._resync_task) if t is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        self._task = None
        self._resync_task = None

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion the cache reflects."""
        return self.reflector.last_sync_resource_version

    # ----- ReflectorSink --------------------------------------------------
    def replace(self, objs: list[Obj], resource_version: str) -> None:
        """Make the cache hold exactly ``objs`` and tell handlers what changed."""
        initial = not self._synced.is_set()
        fresh: dict[str, Obj] = {}
        for obj in objs:
            obj = self._transform(obj)
            fresh[meta_namespace_key(obj)] = obj
        gone: list[DeletedFinalStateUnknown] = []
        for key in self.indexer.list_keys():
            if key not in fresh:
                old = self.indexer.get_by_key(key)
                assert old is not None
                gone.append(DeletedFinalStateUnknown(key, old))
                self.indexer.delete(old)
        changes: list[tuple[Obj | None, Obj]] = []
        for key, obj in fresh.items():
            old = self.indexer.get_by_key(key)
            self.indexer.add(obj)
            if old is None or _rv(old) != _rv(obj):
                changes.append((old, obj))
        for reg in list(self._registrations):
            h = reg.handler
            for tomb in gone:
                self._safe(h.on_delete, tomb)
            for old, obj in changes:
                if old is None:
                    self._safe(h.on_add, obj, initial)
                else:
                    self._safe(h.on_update, old, obj)
            reg.synced = True
        self._synced.set()

    def add(self, obj: Obj) -> None:
        """A watch ADDED event."""
        self._upsert(obj)

    def update(self, obj: Obj) -> None:
        """A watch MODIFIED event."""
        self._upsert(obj)

    def delete(self, obj: Obj) -> None:
        """A watch DELETED event."""
        obj = self._transform(obj)
        key = meta_namespace_key(obj)
        if key not in self.indexer:
            return
        self.indexer.delete(obj)
        for reg in list(self._registrations):
            self._safe(reg.handler.on_delete, obj)

    # ----- internals ------------------------------------------------------
    def _transform(self, obj: Obj) -> Obj:
        return self.transform(obj) if self.transform is not None else obj

    def _upsert(self, obj: Obj) -> None:
        obj = self._transform(obj)
        old = self.indexer.get_by_key(meta_namespace_key(obj))
        self.indexer.add(obj)
        for reg in list(self._registrations):
            if old is None:
                self._safe(reg.handler.on_add, obj, False)
            else:
                self._safe(reg.handler.on_update, old, obj)

    def _safe(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("event handler failed", source=self.description)

    async def _resync_loop(self) -> None:
        while True:
            periods = [r.resync_period for r in self._registrations if r.resync_period]
            await asyncio.sleep(min(periods) if periods else 1.0)
            if not self._synced.is_set():
                continue
            now = time.monotonic()
            for reg in list(self._registrations):
                if reg.resync_period and now >= reg.next_resync:
                    reg.next_resync = now + reg.resync_period
                    for obj in self.indexer.list():
                        self._safe(reg.handler.on_update, obj, obj)
