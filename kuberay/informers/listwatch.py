"""The list/watch source a Reflector reads, and its implementation over the client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from kuberay.kube import Client, WatchEvent
from kuberay.kube.objects import Object as Obj


class ListerWatcher(Protocol):
    """Lists every object (paged) and watches changes from a resourceVersion."""

    description: str

    async def list(self, resource_version: str | None) -> tuple[list[Obj], str]:
        """All objects and the list's resourceVersion."""
        ...

    def watch(
        self, resource_version: str, timeout_seconds: int, inactivity_timeout: float
    ) -> AsyncIterator[WatchEvent]:
        """Events after ``resource_version`` until the server ends the watch."""
        ...


class ClientListerWatcher:
    """A ListerWatcher for one kind, optionally one namespace and label/field selector.

    ``metadata_only`` lists and watches ``PartialObjectMetadata``: objects carry
    ``apiVersion``, ``kind`` and ``metadata`` only (e.g. to cache Secrets without
    their data)."""

    def __init__(
        self,
        client: Client,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        metadata_only: bool = False,
    ) -> None:
        self.client = client
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.metadata_only = metadata_only
        where = f" in {namespace}" if namespace else ""
        sel = f" [{label_selector}]" if label_selector else ""
        meta = " (metadata only)" if metadata_only else ""
        self.description = f"{kind}.{api_version}{where}{sel}{meta}"

    async def list(self, resource_version: str | None) -> tuple[list[Obj], str]:
        return await self.client.list_all(
            self.api_version,
            self.kind,
            self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            page_size=self.page_size,
            resource_version=resource_version,
            metadata_only=self.metadata_only,
        )

    def watch(
        self, resource_version: str, timeout_seconds: int, inactivity_timeout: float
    ) -> AsyncIterator[WatchEvent]:
        return self.client.watch(
            self.api_version,
            self.kind,
            self.namespace,
            resource_version=resource_version,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=timeout_seconds,
            inactivity_timeout=inactivity_timeout,
            metadata_only=self.metadata_only,
        )
