"""SharedInformerFactory: at most one informer per (resource, namespace, selectors).

Every controller that asks for the same resource with the same scope gets the same
informer, so a Pod cache is filled once no matter how many controllers read it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from kuberay.informers.listwatch import ClientListerWatcher
from kuberay.informers.shared_informer import SharedIndexInformer, Transform, strip_managed_fields
from kuberay.informers.store import IndexFunc
from kuberay.kube import Client

InformerKey = tuple[str, str, str | None, str | None, str | None, bool]


class SharedInformerFactory:
    """Creates and shares informers; informers made after :meth:`start` start at once.

    ``on_task`` is handed to every informer (see :class:`SharedIndexInformer`).
    """

    def __init__(
        self,
        client: Client,
        *,
        resync_period: float = 0.0,
        transform: Transform | None = strip_managed_fields,
        inactivity_timeout: float | None = None,
        on_task: Callable[[asyncio.Task[Any]], None] | None = None,
    ) -> None:
        self.client = client
        self.on_task = on_task
        self.resync_period = resync_period
        self.transform = transform
        self.inactivity_timeout = inactivity_timeout
        self._informers: dict[InformerKey, SharedIndexInformer] = {}
        self._started = False

    def informer_for(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        metadata_only: bool = False,
    ) -> SharedIndexInformer:
        """The shared informer for this scope (created on first request).

        ``metadata_only`` informers cache ``PartialObjectMetadata`` (only
        ``metadata``); they are distinct from full informers of the same scope.

        ``indexers`` are added to the informer if it has none of those names yet.
        """
        key: InformerKey = (
            api_version,
            kind,
            namespace,
            label_selector,
            field_selector,
            metadata_only,
        )
        informer = self._informers.get(key)
        if informer is None:
            lw = ClientListerWatcher(
                self.client,
                api_version,
                kind,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                metadata_only=metadata_only,
            )
            informer = SharedIndexInformer(
                lw,
                resync_period=self.resync_period,
                transform=self.transform,
                inactivity_timeout=self.inactivity_timeout,
                on_task=self.on_task,
            )
            self._informers[key] = informer
            if self._started:
                informer.start()
        if indexers:
            missing = {n: f for n, f in indexers.items() if n not in informer.indexer._indexers}
            if missing:
                informer.indexer.add_indexers(missing)
        return informer

    def informers(self) -> list[SharedIndexInformer]:
        """Every informer created so far."""
        return list(self._informers.values())

    def start(self) -> None:
        """Start every informer (and any created later)."""
        self._started = True
        for informer in self._informers.values():
            informer.start()

    async def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """True when every informer has synced within ``timeout`` seconds."""
        results = await asyncio.gather(
            *(i.wait_for_sync(timeout) for i in self._informers.values())
        )
        return all(results)

    async def shutdown(self) -> None:
        """Stop every informer."""
        self._started = False
        await asyncio.gather(*(i.stop() for i in self._informers.values()))
