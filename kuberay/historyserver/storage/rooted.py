"""``STORAGE_ROOT_DIR``: every key of a store under one root "directory".

KubeRay joins its root dir onto every key with Go's ``path.Join`` (``<root>/cluster-metadata/
...``), so :func:`root_head` cleans the root the same way: ``""`` or ``.`` mean no root,
``a//b/`` is ``a/b``, and a leading ``/`` is kept (it is part of KubeRay's keys then).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from kuberay.historyserver.storage.base import ListResult, ObjectInfo, ObjectStore


def go_clean(path: str) -> str:
    """Go's ``path.Clean``: the shortest equivalent slash path (``"."`` for empty)."""
    rooted = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(part)
    cleaned = "/".join(parts)
    if rooted:
        return "/" + cleaned
    return cleaned or "."


def root_head(root_dir: str) -> str:
    """What goes before every key for ``root_dir``: ``""``, ``"/"`` or ``"<clean root>/"``."""
    cleaned = go_clean(root_dir) if root_dir else "."
    if cleaned == ".":
        return ""
    if cleaned == "/":
        return "/"
    return cleaned + "/"


class RootedStore:
    """An ``ObjectStore`` that keeps every key of ``inner`` under ``head`` (a
    :func:`root_head`); listed keys and prefixes come back without it."""

    def __init__(self, inner: ObjectStore, head: str) -> None:
        """Wrap ``inner``; closing this store closes it."""
        self._inner = inner
        self._head = head

    @property
    def inner(self) -> ObjectStore:
        """The wrapped store."""
        return self._inner

    async def put(
        self,
        key: str,
        data: bytes | AsyncIterator[bytes],
        *,
        content_type: str | None = None,
    ) -> None:
        """``inner.put`` under the root."""
        await self._inner.put(self._head + key, data, content_type=content_type)

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        """``inner.get`` under the root."""
        return await self._inner.get(self._head + key, byte_range=byte_range)

    def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """``inner.open`` under the root."""
        return self._inner.open(self._head + key, chunk_size=chunk_size)

    async def list(
        self,
        prefix: str,
        *,
        delimiter: str | None = "/",
        token: str | None = None,
        limit: int = 1000,
    ) -> ListResult:
        """``inner.list`` under the root, the root cut off the answer."""
        page = await self._inner.list(
            self._head + prefix, delimiter=delimiter, token=token, limit=limit
        )
        cut = len(self._head)
        return ListResult(
            objects=tuple(ObjectInfo(key=o.key[cut:], size=o.size) for o in page.objects),
            prefixes=tuple(p[cut:] for p in page.prefixes),
            next_token=page.next_token,
        )

    async def exists(self, key: str) -> bool:
        """``inner.exists`` under the root."""
        return await self._inner.exists(self._head + key)

    async def delete(self, key: str) -> None:
        """``inner.delete`` under the root."""
        await self._inner.delete(self._head + key)

    async def close(self) -> None:
        """Close the wrapped store."""
        await self._inner.close()
