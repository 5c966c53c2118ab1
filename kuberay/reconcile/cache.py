"""The manager's read cache: informers per kind, scoped by namespaces and selectors.

Controllers read from here instead of the apiserver. Reading a kind nobody
registered raises :class:`NotRegistered` rather than silently starting an
informer (an empty, unsynced cache would look like "no objects" and make a
controller create duplicates).

A kind the apiserver does not serve yet (its CRD applied a moment ago, or not yet)
is waited for, as controller-runtime's ``Kind`` source does: :meth:`Cache.register`
polls discovery until the kind is served or its ``timeout`` ends (then
:class:`KindNotServed`), logging which kind it waits for.

Scope: ``namespaces`` (None = all) applies to namespaced kinds; ``by_object``
narrows one kind with a label/field selector, e.g. only pods labelled
``app.kubernetes.io/created-by=kuberay-operator``, and can make its cache
metadata-only (e.g. Secrets: names, labels and owners without the data).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import attrs
import structlog

from kuberay.informers import SharedIndexInformer, SharedInformerFactory
from kuberay.informers.store import IndexFunc
from kuberay.kube import Client, NotFound, ResourceInfo
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

log = structlog.get_logger("kuberay.cache")

GVK = tuple[str, str]

#: Discovery is asked again after this long at first, then less and less often.
SERVED_POLL_FIRST = 0.5
SERVED_POLL_MAX = 5.0
#: While waiting for a kind, "still waiting" is logged at most this often.
SERVED_LOG_EVERY = 30.0


class KindNotServed(LookupError):
    """The apiserver did not serve the kind within the wait (its CRD is not
    installed, or not established yet). The message is one line naming the kind."""


class NotRegistered(LookupError):
    """The cache has no informer for this kind; register it (for_/owns/watches or
    :meth:`Cache.register`) before the manager starts."""


@attrs.frozen
class ByObject:
    """Cache scope for one kind: ``label_selector`` / ``field_selector`` strings, and
    ``metadata_only`` to cache ``PartialObjectMetadata`` (objects keep
    ``apiVersion``, ``kind`` and ``metadata``; spec, data and status are never
    fetched). ``namespaces`` (controller-runtime's ``ByObject.Namespaces``) caches a
    namespaced kind in these namespaces only, whatever the cache's own. Default: full
    objects, no selectors, the cache's namespaces."""

    label_selector: str | None = None
    field_selector: str | None = None
    metadata_only: bool = False
    namespaces: tuple[str, ...] | None = None


def label_selector_from(labels: Mapping[str, str]) -> str:
    """``{"a": "b", "c": "d"}`` -> ``"a=b,c=d"``."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


class Cache:
    """Registers informers by kind, reads across them; shares the informer factory."""

    def __init__(
        self,
        client: Client,
        factory: SharedInformerFactory,
        *,
        namespaces: list[str] | None = None,
        by_object: Mapping[GVK, ByObject] | None = None,
    ) -> None:
        self.client = client
        self.factory = factory
        self.namespaces = list(namespaces) if namespaces else None
        self.by_object = dict(by_object or {})
        self._informers: dict[GVK, list[SharedIndexInformer]] = {}
        self._indexers: dict[GVK, dict[str, IndexFunc]] = {}

    async def register(
        self, api_version: str, kind: str, *, timeout: float = 0.0
    ) -> list[SharedIndexInformer]:
        """The informers backing ``kind`` (one per watched namespace), created if needed.

        A kind the apiserver does not serve is waited for up to ``timeout`` seconds
        (0: not at all), then :class:`KindNotServed`."""
        key = (api_version, kind)
        found = self._informers.get(key)
        if found is not None:
            return found
        info = await self._served(api_version, kind, timeout)
        scope = self.by_object.get(key, ByObject())
        watched = scope.namespaces if scope.namespaces is not None else self.namespaces
        namespaces: list[str | None] = list(watched) if (watched and info.namespaced) else [None]
        informers = [
            self.factory.informer_for(
                api_version,
                kind,
                namespace=ns,
                label_selector=scope.label_selector,
                field_selector=scope.field_selector,
                indexers=self._indexers.get(key),
                metadata_only=scope.metadata_only,
            )
            for ns in namespaces
        ]
        self._informers[key] = informers
        return informers

    async def _served(self, api_version: str, kind: str, timeout: float) -> ResourceInfo:
        """Where ``kind`` is served, waiting for discovery to show it (see register)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        interval = SERVED_POLL_FIRST
        logged_at: float | None = None
        while True:
            try:
                return await self.client.resource(api_version, kind)
            except NotFound:
                now = loop.time()
                if now >= deadline:
                    raise KindNotServed(
                        f"the API server does not serve kind {kind} of {api_version} "
                        "(is its CRD installed?)"
                    ) from None
                if logged_at is None or now - logged_at >= SERVED_LOG_EVERY:
                    log.info(
                        "waiting for the API server to serve a kind (is its CRD installed?)",
                        kind=kind,
                        api_version=api_version,
                        gives_up_in=f"{deadline - now:.0f}s",
                    )
                    logged_at = now
                await asyncio.sleep(min(interval, deadline - now))
                interval = min(interval * 2, SERVED_POLL_MAX)

    def add_index(self, api_version: str, kind: str, name: str, fn: IndexFunc) -> None:
        """Add a named index to ``kind``'s informers (now, or when they are created)."""
        key = (api_version, kind)
        self._indexers.setdefault(key, {})[name] = fn
        for informer in self._informers.get(key, []):
            if name not in informer.indexer._indexers:
                informer.indexer.add_indexers({name: fn})

    def _for(self, api_version: str, kind: str) -> list[SharedIndexInformer]:
        found = self._informers.get((api_version, kind))
        if found is None:
            raise NotRegistered(f"no informer registered for {kind}.{api_version}")
        return found

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Obj | None:
        """The cached object, or None. Shared and read-only: copy before changing."""
        for informer in self._for(api_version, kind):
            obj = informer.indexer.get(namespace, name)
            if obj is not None:
                return obj
        return None

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        labels: Mapping[str, str] | None = None,
        index: tuple[str, str] | None = None,
        where: Callable[[Obj], bool] | None = None,
    ) -> list[Obj]:
        """Cached objects of ``kind``, optionally in ``namespace``, matching every label in
        ``labels``, filed under ``index=(name, value)`` and passing ``where``."""
        out: list[Obj] = []
        for informer in self._for(api_version, kind):
            if index is not None:
                objs = informer.indexer.by_index(*index)
            elif namespace:
                objs = informer.indexer.by_index("namespace", namespace)
            else:
                objs = informer.indexer.list()
            for obj in objs:
                meta = k8s.meta(obj)
                if namespace and meta.get("namespace") != namespace:
                    continue
                if labels:
                    have = meta.get("labels") or {}
                    if any(have.get(k) != v for k, v in labels.items()):
                        continue
                if where is not None and not where(obj):
                    continue
                out.append(obj)
        return out

    def has_synced(self) -> bool:
        """True when every registered informer has synced."""
        return all(i.has_synced() for group in self._informers.values() for i in group)
