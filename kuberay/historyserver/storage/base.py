"""The async object-store interface the collector writes through and the server reads through.

Keys are ``/``-separated strings without a leading ``/`` (the layout builds them; a backend's
root dir or bucket prefix is the backend's business, never part of a key). Every backend passes
the shared contract suite (``tests/integration/historyserver/storage``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

import attrs


@attrs.frozen
class ObjectInfo:
    """One listed object: its full key and size in bytes."""

    key: str
    size: int


@attrs.frozen
class ListResult:
    """One page of a listing.

    ``objects``: the objects directly under the prefix (with ``delimiter``) or all objects
    under it (``delimiter=None``), sorted by key; zero-byte ``dir/`` marker objects that other
    writers (KubeRay's S3/GCS/Azure writers) create are left out.
    ``prefixes``: with a delimiter, the "sub-directories" (each ending in the delimiter),
    sorted. ``next_token``: pass it back as ``token`` for the next page; ``None`` on the last.
    """

    objects: tuple[ObjectInfo, ...] = ()
    prefixes: tuple[str, ...] = ()
    next_token: str | None = None


class ObjectStore(Protocol):
    """An async object store. Implementations are safe to share between tasks.

    Contract:
    * ``put`` replaces the whole object atomically: a reader sees the old or the new bytes,
      never a part. ``data`` may be bytes or an async iterator of chunks (streamed, for big
      files).
    * ``get`` returns the bytes, or the ``[start, end)`` slice with ``byte_range`` (``end`` past
      the size is clipped; ``start`` at or past the size gives ``b""``); raises ``NotFound``.
    * ``open`` streams the object in chunks; raises ``NotFound`` before the first chunk.
    * ``list`` pages (at most ``limit`` entries, objects and prefixes together) in key order.
    * ``exists`` is ``True`` only for an object (not for a prefix).
    * ``delete`` removes one object; a missing key is not an error.
    * ``close`` releases connections; the store is unusable after it.
    Any other failure raises ``StorageError``.
    """

    async def put(
        self,
        key: str,
        data: bytes | AsyncIterator[bytes],
        *,
        content_type: str | None = None,
    ) -> None:
        """Write ``data`` at ``key`` (creating or replacing it)."""
        ...

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        """The object's bytes (or a ``[start, end)`` slice of them)."""
        ...

    def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """Stream the object's bytes in chunks of at most ``chunk_size``."""
        ...

    async def list(
        self,
        prefix: str,
        *,
        delimiter: str | None = "/",
        token: str | None = None,
        limit: int = 1000,
    ) -> ListResult:
        """One page of the keys under ``prefix``."""
        ...

    async def exists(self, key: str) -> bool:
        """Whether an object is stored at ``key``."""
        ...

    async def delete(self, key: str) -> None:
        """Remove the object at ``key`` if there is one."""
        ...

    async def close(self) -> None:
        """Release the backend's connections."""
        ...


async def list_all(store: ObjectStore, prefix: str, *, delimiter: str | None = "/") -> ListResult:
    """Every page of ``store.list(prefix, delimiter=...)`` joined into one result (no token)."""
    objects: list[ObjectInfo] = []
    prefixes: list[str] = []
    token: str | None = None
    while True:
        page = await store.list(prefix, delimiter=delimiter, token=token)
        objects.extend(page.objects)
        prefixes.extend(page.prefixes)
        token = page.next_token
        if token is None:
            return ListResult(objects=tuple(objects), prefixes=tuple(prefixes))
