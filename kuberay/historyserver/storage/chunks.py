"""Helpers the backends share for ``put``'s ``bytes | AsyncIterator[bytes]`` data and for
``get``'s byte ranges."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from typing import IO

#: spooled uploads stay in memory up to this size, then move to a temporary file
SPOOL_MEMORY_LIMIT = 8 << 20


async def iter_chunks(data: bytes | AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``data`` as a stream of non-empty chunks."""
    if isinstance(data, bytes | bytearray | memoryview):
        if data:
            yield bytes(data)
        return
    async for chunk in data:
        if chunk:
            yield bytes(chunk)


async def read_all(data: bytes | AsyncIterator[bytes]) -> bytes:
    """All of ``data`` in memory."""
    if isinstance(data, bytes):
        return data
    return b"".join([chunk async for chunk in iter_chunks(data)])


async def parts(data: bytes | AsyncIterator[bytes], size: int) -> AsyncIterator[bytes]:
    """``data`` regrouped into parts of exactly ``size`` bytes, the last one shorter (and
    at least one part, empty for empty data): the shape multipart uploads need."""
    buffer = bytearray()
    sent = False
    async for chunk in iter_chunks(data):
        buffer += chunk
        while len(buffer) >= size:
            yield bytes(buffer[:size])
            del buffer[:size]
            sent = True
    if buffer or not sent:
        yield bytes(buffer)


async def spool(data: bytes | AsyncIterator[bytes]) -> tuple[IO[bytes], int]:
    """``data`` written to a rewound file-like object (in memory up to
    :data:`SPOOL_MEMORY_LIMIT`, then a temporary file) and its length; the caller closes it."""
    out: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_LIMIT)  # noqa: SIM115
    size = 0
    try:
        async for chunk in iter_chunks(data):
            out.write(chunk)
            size += len(chunk)
        out.seek(0)
    except BaseException:
        out.close()
        raise
    return out, size


def check_range(byte_range: tuple[int, int] | None) -> tuple[int, int] | None:
    """Validate a ``[start, end)`` range: ``0 <= start <= end``; ``ValueError`` otherwise."""
    if byte_range is None:
        return None
    start, end = byte_range
    if start < 0 or end < start:
        raise ValueError(f"bad byte range [{start}, {end}): need 0 <= start <= end")
    return start, end


def check_chunk_size(chunk_size: int) -> int:
    """``chunk_size`` if positive; ``ValueError`` otherwise."""
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive, not {chunk_size}")
    return chunk_size


def is_dir_marker(key: str, size: int) -> bool:
    """Whether a listed object is a zero-byte ``dir/`` marker (KubeRay's writers create them
    with ``CreateDirectory``); listings leave them out."""
    return size == 0 and key.endswith("/")


def check_limit(limit: int) -> int:
    """``limit`` if within ``1..1000`` (the page size every backend's API allows)."""
    if not 1 <= limit <= 1000:
        raise ValueError(f"list limit must be within 1..1000, not {limit}")
    return limit
