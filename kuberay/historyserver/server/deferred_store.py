"""An ``ObjectStore`` that is opened in the background: the server listens (and ``/readz``
answers) at once, while the backend's client library is imported and its client made (for
S3 that is botocore, about half a second). A call made before the store is open waits for
it; a store that cannot be opened fails every call with the opening error (``main`` also
stops the server on it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

from kuberay.historyserver.storage.base import ListResult, ObjectStore


class DeferredStore:
    """Delegates to the store ``opener`` gives, once it has given it."""

    def __init__(self, opener: Callable[[], Awaitable[ObjectStore]]) -> None:
        self._task: asyncio.Task[ObjectStore] = asyncio.ensure_future(opener())

    async def ready(self) -> ObjectStore:
        """The opened store (raises what opening it raised)."""
        return await asyncio.shield(self._task)

    async def put(
        self, key: str, data: bytes | AsyncIterator[bytes], *, content_type: str | None = None
    ) -> None:
        """``ObjectStore.put``."""
        await (await self.ready()).put(key, data, content_type=content_type)

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        """``ObjectStore.get``."""
        return await (await self.ready()).get(key, byte_range=byte_range)

    async def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """``ObjectStore.open``."""
        store = await self.ready()
        async for chunk in store.open(key, chunk_size=chunk_size):
            yield chunk

    async def list(
        self,
        prefix: str,
        *,
        delimiter: str | None = "/",
        token: str | None = None,
        limit: int = 1000,
    ) -> ListResult:
        """``ObjectStore.list``."""
        store = await self.ready()
        return await store.list(prefix, delimiter=delimiter, token=token, limit=limit)

    async def exists(self, key: str) -> bool:
        """``ObjectStore.exists``."""
        return await (await self.ready()).exists(key)

    async def delete(self, key: str) -> None:
        """``ObjectStore.delete``."""
        await (await self.ready()).delete(key)

    async def close(self) -> None:
        """Close the store once it is open (cancel the opening otherwise)."""
        if not self._task.done():
            self._task.cancel()
        try:
            store = await self._task
        except (asyncio.CancelledError, Exception):
            return
        await store.close()
