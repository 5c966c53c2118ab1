"""An in-memory ``ObjectStore`` for unit tests (the real local backend is elsewhere)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from kuberay.historyserver.storage.base import ListResult, ObjectInfo
from kuberay.historyserver.storage.errors import NotFound, StorageError


class MemoryStore:
    """Objects in a dict; ``fail_puts`` makes the next N puts raise ``StorageError``."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.puts: list[str] = []
        self.fail_puts = 0
        self.closed = False

    async def put(
        self, key: str, data: bytes | AsyncIterator[bytes], *, content_type: str | None = None
    ) -> None:
        assert not key.startswith("/") and not key.endswith("/"), key
        if isinstance(data, bytes):
            body = data
        else:
            parts = [chunk async for chunk in data]
            body = b"".join(parts)
        if self.fail_puts > 0:
            self.fail_puts -= 1
            raise StorageError("injected failure", key=key)
        self.objects[key] = body
        self.puts.append(key)

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        if key not in self.objects:
            raise NotFound(key, key=key)
        body = self.objects[key]
        return body if byte_range is None else body[byte_range[0] : byte_range[1]]

    async def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        body = await self.get(key)
        for i in range(0, len(body), chunk_size):
            yield body[i : i + chunk_size]

    async def list(
        self,
        prefix: str,
        *,
        delimiter: str | None = "/",
        token: str | None = None,
        limit: int = 1000,
    ) -> ListResult:
        objects: list[ObjectInfo] = []
        prefixes: set[str] = set()
        for key in sorted(self.objects):
            if not key.startswith(prefix):
                continue
            rest = key[len(prefix) :]
            if delimiter and delimiter in rest:
                prefixes.add(prefix + rest.split(delimiter, 1)[0] + delimiter)
            else:
                objects.append(ObjectInfo(key, len(self.objects[key])))
        return ListResult(objects=tuple(objects), prefixes=tuple(sorted(prefixes)))

    async def exists(self, key: str) -> bool:
        return key in self.objects

    async def delete(self, key: str) -> None:
        self.objects.pop(key, None)

    async def close(self) -> None:
        self.closed = True
