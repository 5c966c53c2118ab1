"""The ``local`` backend: objects as files under one directory (ours; KubeRay has none).

A key ``a/b/c`` is the file ``<root>/a/b/c``. Keys cannot leave the root: an empty key, a
leading ``/``, an empty, ``.`` or ``..`` segment, a NUL, or a segment ending in the reserved
temp-file suffix is a ``StorageError``. Because it is a file system, an object cannot also be
a "directory" of other objects (``a`` and ``a/b`` together): that put is a ``StorageError``.

``put`` writes a temporary file in the target directory, fsyncs it and renames it over the
key, so readers see the old or the new bytes. ``delete`` removes directories left empty, so a
prefix disappears with its last object, as in an object store. Blocking file calls run in
threads (``asyncio.to_thread``).

Configured by ``LOCAL_STORAGE_DIR`` or the JSON key ``localDir`` (the directory is created).
"""

from __future__ import annotations

import asyncio
import errno
import os
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from kuberay.historyserver.storage.base import ListResult, ObjectInfo
from kuberay.historyserver.storage.chunks import (
    check_chunk_size,
    check_limit,
    check_range,
    iter_chunks,
)
from kuberay.historyserver.storage.errors import NotFound, StorageError

#: temporary files of ``put`` end with this; such names are never listed and never keys
TEMP_SUFFIX = ".kuberay-put-tmp"


@attrs.frozen
class LocalConfig:
    """Where the ``local`` backend keeps its files."""

    directory: str

    @classmethod
    def from_sources(cls, env: Mapping[str, str], doc: Mapping[str, Any] | None) -> LocalConfig:
        """``localDir`` from the JSON config when one is given, else ``LOCAL_STORAGE_DIR``;
        ``StorageError`` when neither names a directory."""
        directory = env.get("LOCAL_STORAGE_DIR", "")
        if doc is not None and isinstance(doc.get("localDir"), str):
            directory = doc["localDir"]
        if not directory:
            raise StorageError(
                "the local storage backend needs a directory: set LOCAL_STORAGE_DIR "
                "(or localDir in the storage backend config file)"
            )
        return cls(directory=directory)


def _segments(key: str, *, what: str, allow_trailing_slash: bool = False) -> list[str]:
    """The path segments of ``key``; ``StorageError`` for keys that could escape the root."""
    if "\0" in key:
        raise StorageError(f"{what} {key!r} contains a NUL byte", key=key)
    if key.startswith("/"):
        raise StorageError(f"{what} {key!r} is absolute", key=key)
    parts = key.split("/")
    if allow_trailing_slash and len(parts) > 1 and parts[-1] == "":
        parts = parts[:-1]
    for part in parts:
        if part in ("", ".", ".."):
            raise StorageError(f"{what} {key!r} has an empty, '.' or '..' segment", key=key)
        if part.endswith(TEMP_SUFFIX):
            raise StorageError(f"{what} {key!r} ends in the reserved {TEMP_SUFFIX!r}", key=key)
    return parts


class LocalStore:
    """An ``ObjectStore`` on a local directory (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """Use (and create) the directory ``root``."""
        self._root = Path(root).resolve()
        self._root.mkdir(parents=True, exist_ok=True)

    @property
    def root(self) -> Path:
        """The directory holding the objects."""
        return self._root

    def _path(self, key: str) -> Path:
        if key == "":
            raise StorageError("empty key", key=key)
        return self._root.joinpath(*_segments(key, what="key"))

    # --- writes -------------------------------------------------------------------------

    async def put(
        self,
        key: str,
        data: bytes | AsyncIterator[bytes],
        *,
        content_type: str | None = None,
    ) -> None:
        """Write ``data`` atomically at ``key`` (``content_type`` is not kept)."""
        path = self._path(key)
        temp = path.with_name(f".{uuid.uuid4().hex}{TEMP_SUFFIX}")
        handle = await asyncio.to_thread(self._open_temp, path, temp, key)
        try:
            try:
                async for chunk in iter_chunks(data):
                    await asyncio.to_thread(handle.write, chunk)
                await asyncio.to_thread(self._finish, handle, temp, path, key)
            finally:
                handle.close()
        except BaseException:
            await asyncio.to_thread(temp.unlink, missing_ok=True)
            raise

    def _open_temp(self, path: Path, temp: Path, key: str) -> Any:
        # a concurrent delete may prune the (then empty) directory between mkdir and open
        for _ in range(10):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                return open(temp, "xb")
            except FileNotFoundError:
                continue
            except (FileExistsError, NotADirectoryError) as exc:
                # mkdir(exist_ok) also raises when a delete prunes the directory between its
                # own mkdir and is_dir check: only an object on the way is a real conflict
                if self._object_above(path):
                    raise StorageError(
                        f"cannot put {key!r}: a parent of it is an object", key=key
                    ) from exc
                continue
            except OSError as exc:
                raise StorageError(f"cannot put {key!r}: {exc}", key=key) from exc
        raise StorageError(f"cannot put {key!r}: its directory keeps disappearing", key=key)

    def _object_above(self, path: Path) -> bool:
        """Whether a directory on ``path``'s way down from the root is a stored object."""
        parent = path.parent
        while parent != self._root and parent != parent.parent:
            if parent.exists() and not parent.is_dir():
                return True
            parent = parent.parent
        return False

    @staticmethod
    def _finish(handle: Any, temp: Path, path: Path, key: str) -> None:
        try:
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            os.replace(temp, path)
        except IsADirectoryError as exc:
            raise StorageError(
                f"cannot put {key!r}: other objects are stored under it", key=key
            ) from exc
        except OSError as exc:
            if exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                raise StorageError(
                    f"cannot put {key!r}: other objects are stored under it", key=key
                ) from exc
            raise StorageError(f"cannot put {key!r}: {exc}", key=key) from exc

    async def delete(self, key: str) -> None:
        """Remove ``key`` if it is an object, then the directories it leaves empty."""
        path = self._path(key)
        await asyncio.to_thread(self._delete, path, key)

    def _delete(self, path: Path, key: str) -> None:
        try:
            if path.is_dir():
                return
            path.unlink()
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise StorageError(f"cannot delete {key!r}: {exc}", key=key) from exc
        parent = path.parent
        while parent != self._root:
            try:
                parent.rmdir()
            except OSError:
                return
            parent = parent.parent

    # --- reads --------------------------------------------------------------------------

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        """The object's bytes, or the ``[start, end)`` slice; ``NotFound`` when missing."""
        path = self._path(key)
        wanted = check_range(byte_range)
        return await asyncio.to_thread(self._read, path, key, wanted)

    @staticmethod
    def _read(path: Path, key: str, byte_range: tuple[int, int] | None) -> bytes:
        try:
            with open(path, "rb") as handle:
                if byte_range is None:
                    return handle.read()
                start, end = byte_range
                handle.seek(start)
                return handle.read(end - start)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
            raise NotFound(f"no object {key!r}", key=key) from exc
        except OSError as exc:
            raise StorageError(f"cannot read {key!r}: {exc}", key=key) from exc

    async def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """Stream the object in chunks of at most ``chunk_size``; ``NotFound`` when missing."""
        path = self._path(key)
        check_chunk_size(chunk_size)
        try:
            handle = await asyncio.to_thread(open, path, "rb")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
            raise NotFound(f"no object {key!r}", key=key) from exc
        except OSError as exc:
            raise StorageError(f"cannot read {key!r}: {exc}", key=key) from exc
        try:
            while chunk := await asyncio.to_thread(handle.read, chunk_size):
                yield chunk
        finally:
            handle.close()

    async def exists(self, key: str) -> bool:
        """Whether a file is stored at ``key`` (a directory is a prefix, not an object)."""
        path = self._path(key)
        return await asyncio.to_thread(path.is_file)

    async def list(
        self,
        prefix: str,
        *,
        delimiter: str | None = "/",
        token: str | None = None,
        limit: int = 1000,
    ) -> ListResult:
        """One page of keys under ``prefix`` in key order (the token is the last key or
        prefix of the previous page)."""
        if delimiter not in ("/", None):
            raise StorageError(
                f"the local backend lists with '/' or no delimiter, not {delimiter!r}"
            )
        check_limit(limit)
        if prefix:
            _segments(prefix, what="prefix", allow_trailing_slash=True)
        return await asyncio.to_thread(self._list, prefix, delimiter, token, limit)

    def _list(
        self, prefix: str, delimiter: str | None, token: str | None, limit: int
    ) -> ListResult:
        head, _, name_start = prefix.rpartition("/")
        base = self._root.joinpath(*head.split("/")) if head else self._root
        key_base = f"{head}/" if head else ""
        entries = (
            _one_level(base, key_base, name_start, token)
            if delimiter
            else _walk(base, key_base, name_start, token)
        )
        objects: list[ObjectInfo] = []
        prefixes: list[str] = []
        last = None
        for key, size in entries:
            if len(objects) + len(prefixes) == limit:
                return ListResult(tuple(objects), tuple(prefixes), next_token=last)
            if size is None:
                prefixes.append(key)
            else:
                objects.append(ObjectInfo(key=key, size=size))
            last = key
        return ListResult(tuple(objects), tuple(prefixes))

    async def close(self) -> None:
        """Nothing to release."""


def _scan(directory: Path, key_base: str, name_start: str) -> list[tuple[str, os.DirEntry[str]]]:
    """The entries of ``directory`` whose names start with ``name_start``, as
    ``(key, entry)`` in key order (a directory's key ends with ``/``)."""
    try:
        with os.scandir(directory) as it:
            found = []
            for entry in it:
                if not entry.name.startswith(name_start) or entry.name.endswith(TEMP_SUFFIX):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    found.append((f"{key_base}{entry.name}/", entry))
                elif entry.is_file(follow_symlinks=False):
                    found.append((f"{key_base}{entry.name}", entry))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise StorageError(f"cannot list {key_base!r}: {exc}", key=key_base) from exc
    found.sort(key=lambda pair: pair[0])
    return found


def _one_level(
    base: Path, key_base: str, name_start: str, token: str | None
) -> Iterator[tuple[str, int | None]]:
    for key, entry in _scan(base, key_base, name_start):
        if token is not None and key <= token:
            continue
        if key.endswith("/"):
            if _has_files(Path(entry.path)):
                yield key, None
        else:
            yield key, _size(entry)


def _walk(
    base: Path, key_base: str, name_start: str, token: str | None
) -> Iterator[tuple[str, int | None]]:
    for key, entry in _scan(base, key_base, name_start):
        if key.endswith("/"):
            # every key under this directory starts with ``key``: skip it when the token
            # is past all of them
            if token is not None and token > key and not token.startswith(key):
                continue
            yield from _walk(Path(entry.path), key, "", token)
        elif token is None or key > token:
            yield key, _size(entry)


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except FileNotFoundError:
        return 0


def _has_files(directory: Path) -> bool:
    for _key, entry in _scan(directory, "", ""):
        if entry.is_file(follow_symlinks=False) or _has_files(Path(entry.path)):
            return True
    return False


async def open_local(config: LocalConfig) -> LocalStore:
    """A ``LocalStore`` on ``config.directory`` (created if missing)."""
    try:
        return await asyncio.to_thread(LocalStore, config.directory)
    except OSError as exc:
        raise StorageError(f"cannot use {config.directory!r} for local storage: {exc}") from exc
