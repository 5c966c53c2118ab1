"""Reading files under a directory a Ray job can write (the trust boundary of the collector).

The collector shares ``/tmp/ray`` with Ray, and whatever a Ray job runs can rename, replace or
link anything there at any moment, including between the collector's scan of a directory and
its read of a file it found. The collector's own process holds secrets (the storage keys in
``collectorOptions.env``, readable at ``/proc/self/environ``), and what it reads is served back
by the history server to anyone. So every read of such a file goes through ``open_regular``:

* **No symlink anywhere in the path.** The path must be absolute; it is walked from ``/`` one
  component at a time with ``openat(O_DIRECTORY | O_NOFOLLOW)`` and the file itself is opened
  with ``O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`` relative to its parent's descriptor.
  A symlink in any position fails the open (``ELOOP``) instead of being followed. Each step
  holds the previous directory open, so there is no gap between checking a component and
  using it (a ``realpath`` check before opening by path would have one). Callers pass paths
  under roots canonicalised once at start-up (operator-configured, before any job runs).
* **A regular file only.** ``O_NONBLOCK`` makes opening a FIFO return at once instead of
  waiting for a writer; ``fstat`` on the descriptor then refuses anything but ``S_ISREG``
  (FIFOs, sockets, devices, directories).
* **The file the scan saw.** When the caller recorded ``(st_dev, st_ino)`` at scan time
  (``FileId``), the descriptor's must be the same, or the file was replaced since the scan.
* **Reads through that descriptor only**, bounded by the caller's size.

A refusal raises ``Refused`` (not an ``OSError``, so no caller mistakes it for a transient
failure and retries); the caller skips the file, logs ``reason`` and carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import attrs

CHUNK = 1 << 20
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

SYMLINK = "symlink"
NOT_REGULAR = "not a regular file"
REPLACED = "replaced since scan"


class Refused(Exception):
    """A file the collector will not read; ``reason`` is one of ``SYMLINK``, ``NOT_REGULAR``
    or ``REPLACED``."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@attrs.frozen
class FileId:
    """Which file a path named when it was scanned (``st_dev``, ``st_ino``)."""

    dev: int
    ino: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileId:
        """The identity in a stat result (``lstat``/``fstat``, never a followed ``stat``)."""
        return cls(st.st_dev, st.st_ino)


def _open_parent(path: Path) -> int:
    """A descriptor of ``path``'s parent directory, walked from ``/`` without following any
    symlink. Raises ``Refused(SYMLINK)`` for a symlinked component, ``OSError`` otherwise."""
    parts = path.parts
    if not path.is_absolute() or any(p in (".", "..") for p in parts[1:]):
        raise ValueError(f"not an absolute, normalised path: {path}")
    return walk_dirs(os.open("/", DIR_FLAGS), parts[1:-1], path)


def walk_dirs(
    fd: int, parts: tuple[str, ...], path: Path, *, create: bool = False, mode: int = 0o755
) -> int:
    """From the directory ``fd`` (taken over: closed on every path), each of ``parts`` opened
    with ``O_DIRECTORY | O_NOFOLLOW`` relative to the previous one (and with ``create``, made
    with ``mode`` when missing); the last one's descriptor, the caller's to close. Raises
    ``Refused(path, SYMLINK)`` for a symlinked component, ``OSError`` otherwise."""
    try:
        for part in parts:
            if create:  # an existing directory is opened below; a link or file refused
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, mode, dir_fd=fd)
            try:
                nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                # Linux answers ENOTDIR (not ELOOP) for O_DIRECTORY | O_NOFOLLOW on a symlink
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_symlink(part, fd):
                    raise Refused(path, SYMLINK) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_symlink(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_regular(path: Path, expect: FileId | None = None) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading under the rule in the module doc: ``(descriptor, fstat)``.

    The caller owns the descriptor and must close it. Raises ``Refused`` when the path has a
    symlink, is not a regular file, or (with ``expect``) is not the file scanned; ``OSError``
    (``FileNotFoundError`` and so on) when it cannot be opened at all. Never blocks on a FIFO.
    """
    parent = _open_parent(path)
    try:
        try:
            fd = os.open(path.name, FILE_FLAGS, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Refused(path, SYMLINK) from None
            if exc.errno == errno.ENXIO:  # a unix socket (or a device with no driver)
                raise Refused(path, NOT_REGULAR) from None
            raise
    finally:
        os.close(parent)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(path, NOT_REGULAR)
        if expect is not None and FileId.of(st) != expect:
            raise Refused(path, REPLACED)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


class SafeFile:
    """A file opened by ``open_regular``; read it with ``chunks``, then ``close`` it (or use
    ``with``). ``size`` is the descriptor's size at open time."""

    def __init__(self, fd: int, st: os.stat_result) -> None:
        self.fd = fd
        self.stat = st
        self.size = st.st_size
        self.id = FileId.of(st)

    @classmethod
    async def open(cls, path: Path, expect: FileId | None = None) -> SafeFile:
        """``open_regular`` off the event loop."""
        fd, st = await asyncio.to_thread(open_regular, path, expect)
        return cls(fd, st)

    async def chunks(self, limit: int | None = None) -> AsyncIterator[bytes]:
        """The file's bytes from the start (at most ``limit``, else at most ``size`` as of the
        open: a file that grows meanwhile is read to the size it had), read off the loop."""
        left = self.size if limit is None else limit
        offset = 0
        while left > 0:
            chunk = await asyncio.to_thread(os.pread, self.fd, min(CHUNK, left), offset)
            if not chunk:
                return
            offset += len(chunk)
            left -= len(chunk)
            yield chunk

    def close(self) -> None:
        """Close the descriptor (idempotent)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> SafeFile:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def read_upto(fd: int, size: int) -> Iterator[bytes]:
    """At most ``size`` bytes of ``fd`` from offset 0, in chunks (blocking; a thread's job)."""
    offset = 0
    while offset < size:
        chunk = os.pread(fd, min(CHUNK, size - offset), offset)
        if not chunk:
            return
        offset += len(chunk)
        yield chunk


def real_subdirs(directory: Path) -> list[Path]:
    """The sub-directories of ``directory`` that are directories themselves, not symlinks to
    one ([] when it cannot be listed)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
