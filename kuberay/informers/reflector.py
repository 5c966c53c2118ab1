"""Reflector: keeps a sink in step with the apiserver by listing, then watching.

Failure modes it defends against, and how:

* **Compacted resourceVersion** (410 Gone / Expired, on list or watch): relist
  with ``resourceVersion=""`` (a consistent read); deletions missed meanwhile
  reach handlers as tombstones through the sink's ``replace``.
* **Watch closed by the server** (its ``timeoutSeconds``, randomised in
  [300, 600) s like client-go's reflector, or EOF): re-watch from the last
  resourceVersion (kept fresh by bookmarks, which every watch asks for), no relist.
* **Silently dead connection**: TCP keepalive ends it (see :mod:`kuberay.kube.transport`);
  as a backstop, no event or bookmark within ``inactivity_timeout`` ends the watch
  and a new one starts. By default that is the watch's ``timeoutSeconds`` plus
  :data:`~kuberay.kube.client.WATCH_TIMEOUT_GRACE`: the apiserver sends bookmarks
  only for resources that had an event since it started, so a quiet watch may be
  silent until the server closes it, and must not be re-opened before.
* **Errors** (apiserver down, 5xx, 429, refused): jittered exponential backoff
  (0.8 s doubling to 30 s, x1-2 jitter, reset after 2 healthy minutes); a watch
  that ends in under a second without events counts as an error.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Protocol

import structlog

from kuberay.informers.backoff import Backoff
from kuberay.informers.listwatch import ListerWatcher
from kuberay.kube import Gone, KubeError
from kuberay.kube import objects as k8s
from kuberay.kube.client import WATCH_TIMEOUT_GRACE
from kuberay.kube.objects import Object as Obj

log = structlog.get_logger("kuberay.informers.reflector")


class ReflectorSink(Protocol):
    """What a Reflector feeds: a full replacement or single changes."""

    def replace(self, objs: list[Obj], resource_version: str) -> None: ...

    def add(self, obj: Obj) -> None: ...

    def update(self, obj: Obj) -> None: ...

    def delete(self, obj: Obj) -> None: ...


class Reflector:
    """Runs list-then-watch against ``lister_watcher`` into ``sink`` until cancelled."""

    MIN_WATCH_TIMEOUT = 300

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        sink: ReflectorSink,
        *,
        inactivity_timeout: float | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.sink = sink
        self.inactivity_timeout = inactivity_timeout
        self.backoff = backoff or Backoff()
        self.last_sync_resource_version = ""
        # Set after a 410: the next list must be a consistent read (RV "").
        self._rv_unavailable = False
        self.relists = 0
        self.watches = 0

    def _list_rv(self) -> str:
        if self._rv_unavailable:
            return ""
        return self.last_sync_resource_version or "0"

    async def list_once(self) -> None:
        """One list into the sink (retrying at once with RV "" if the RV is gone)."""
        try:
            items, rv = await self.lister_watcher.list(self._list_rv())
        except Gone:
            self._rv_unavailable = True
            items, rv = await self.lister_watcher.list("")
        self.relists += 1
        self._rv_unavailable = False
        self.sink.replace(items, rv)
        self.last_sync_resource_version = rv

    async def watch_once(self) -> int:
        """One watch from the last RV until it ends; returns the number of events."""
        timeout = int(self.MIN_WATCH_TIMEOUT * (1 + random.random()))
        inactivity = self.inactivity_timeout
        if inactivity is None:
            inactivity = timeout + WATCH_TIMEOUT_GRACE
        events = 0
        self.watches += 1
        async for event in self.lister_watcher.watch(
            self.last_sync_resource_version, timeout, inactivity
        ):
            events += 1
            obj = event.object
            rv = k8s.meta(obj).get("resourceVersion")
            if event.type == "ADDED":
                self.sink.add(obj)
            elif event.type == "MODIFIED":
                self.sink.update(obj)
            elif event.type == "DELETED":
                self.sink.delete(obj)
            elif event.type != "BOOKMARK":
                log.warning("unexpected watch event", type=event.type, source=self.describe())
                continue
            if rv:
                self.last_sync_resource_version = rv
        return events

    def describe(self) -> str:
        """Which resource this reflector follows."""
        return self.lister_watcher.description

    async def run(self) -> None:
        """List and watch forever (until the task is cancelled)."""
        need_list = True
        while True:
            try:
                if need_list:
                    await self.list_once()
                    need_list = False
                started = time.monotonic()
                events = await self.watch_once()
                if events == 0 and time.monotonic() - started < 1.0:
                    raise KubeError("watch closed immediately with no events")
                continue
            except asyncio.CancelledError:
                raise
            except Gone as exc:
                log.info(
                    "resource version expired; relisting", source=self.describe(), error=str(exc)
                )
                self._rv_unavailable = True
                need_list = True
                await asyncio.sleep(0.05 * (1 + random.random()))
                continue
            except Exception as exc:
                delay = self.backoff.next()
                log.warning(
                    "list/watch failed; backing off",
                    source=self.describe(),
                    error=str(exc) or repr(exc),
                    delay=round(delay, 2),
                )
                await asyncio.sleep(delay)
