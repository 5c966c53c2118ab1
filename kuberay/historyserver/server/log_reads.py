"""Reading parts of stored log files without fetching whole objects.

What Ray jobs write is untrusted (a log may be one 64 MiB line), and so is what a browser
asks for: no read here holds more than :data:`TAIL_WINDOW_CAP` (a tail) or
:data:`STREAM_CHUNK` (a streamed whole log) of an object in memory.

* ``object_size``: an object's size from a one-entry listing (the store has no HEAD).
* ``read_tail``/``tail_chunks``: the last N lines of ``[start, end)`` of an object by ranged
  GETs from the end, growing the window (64 KiB, doubling) until it holds N complete lines,
  reaches ``start`` or reaches the cap. Within the cap the answer equals ``tail_lines`` over
  the whole slice; past it, it is the slice's last ``cap`` bytes (``Tail.truncated``).
* ``stream_range``: bytes ``[lo, hi)`` of an object as a stream of chunks (``open`` for a
  whole object, ranged GETs of :data:`STREAM_CHUNK` for a slice).
* ``parse_range``: one HTTP ``Range: bytes=...`` spec against a size (RFC 9110 §14.1.2):
  ``a-b``, ``a-`` and ``-n``; several ranges or another unit are ignored (``None``: serve
  it whole); an unsatisfiable one raises ``RangeNotSatisfiable``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import attrs

from kuberay.historyserver.storage.base import ObjectStore

FIRST_WINDOW = 64 << 10
#: The most bytes a ``lines=N`` answer reads from the end of a log (8 MiB). A tail whose N
#: lines do not fit (a log of one 64 MiB line, say) is answered with the slice's last
#: ``TAIL_WINDOW_CAP`` bytes, its first line cut, and marked truncated.
TAIL_WINDOW_CAP = 8 << 20
#: The size of each piece a streamed log answer reads from the store (1 MiB).
STREAM_CHUNK = 1 << 20
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$")


class RangeNotSatisfiable(ValueError):
    """The requested range starts at or past the end (answered 416)."""


@attrs.frozen
class Tail:
    """A tail read: its bytes as consecutive ``chunks`` (join them for the answer) and
    whether the window cap cut it short (``truncated``: the lines asked for did not fit)."""

    chunks: tuple[bytes, ...]
    truncated: bool

    @property
    def size(self) -> int:
        """The answer's length in bytes."""
        return sum(len(c) for c in self.chunks)


async def object_size(store: ObjectStore, key: str) -> int | None:
    """The size of the object at ``key``; ``None`` when there is none."""
    page = await store.list(key, delimiter=None, limit=1)
    if page.objects and page.objects[0].key == key:
        return page.objects[0].size
    return None


def _tail_start(pieces: list[bytes], lines: int) -> tuple[int, int]:
    """Where the last ``lines`` (> 0) lines of ``b"".join(pieces)`` start: (piece index,
    offset in it); ``(0, 0)`` when there are no more lines than that."""
    newlines = 0
    last = len(pieces) - 1
    for i in range(last, -1, -1):
        piece = pieces[i]
        stop = len(piece) - 1 if i == last and piece.endswith(b"\n") else len(piece)
        while True:
            at = piece.rfind(b"\n", 0, stop)
            if at < 0:
                break
            newlines += 1
            if newlines == lines:
                return i, at + 1
            stop = at
    return 0, 0


async def tail_chunks(
    store: ObjectStore,
    key: str,
    lines: int,
    start: int,
    end: int,
    *,
    window: int = FIRST_WINDOW,
    cap: int = TAIL_WINDOW_CAP,
) -> Tail:
    """The last ``lines`` (>= 0) lines of bytes ``[start, end)`` of ``key``, reading at most
    ``cap`` bytes from the end (in ranges growing from ``window``); raises ``NotFound``."""
    if lines == 0 or end <= start:
        return Tail((), False)
    floor = max(start, end - cap)
    lo = max(floor, end - window)
    pieces = [await store.get(key, byte_range=(lo, end))]
    newlines = pieces[0].count(b"\n") - (1 if pieces[0].endswith(b"\n") else 0)
    while lo > floor and newlines < lines:
        window *= 2
        new_lo = max(floor, end - window)
        piece = await store.get(key, byte_range=(new_lo, lo))
        newlines += piece.count(b"\n")
        pieces.insert(0, piece)
        lo = new_lo
    truncated = lo > start and newlines < lines
    index, offset = _tail_start(pieces, lines)
    kept = pieces[index:]
    if offset:
        kept[0] = kept[0][offset:]
    return Tail(tuple(k for k in kept if k), truncated)


async def read_tail(
    store: ObjectStore,
    key: str,
    lines: int,
    start: int,
    end: int,
    *,
    window: int = FIRST_WINDOW,
    cap: int = TAIL_WINDOW_CAP,
) -> bytes:
    """``tail_chunks`` joined: the last ``lines`` lines of ``[start, end)`` (at most ``cap``
    bytes of them)."""
    tail = await tail_chunks(store, key, lines, start, end, window=window, cap=cap)
    return b"".join(tail.chunks)


async def stream_range(
    store: ObjectStore, key: str, lo: int, hi: int, size: int, *, chunk: int = STREAM_CHUNK
) -> AsyncIterator[bytes]:
    """Bytes ``[lo, hi)`` of the ``size``-byte object at ``key`` in chunks of at most
    ``chunk``: the store's ``open`` when that is the whole object, ranged GETs otherwise.
    Never yields more than ``hi - lo`` bytes; raises ``NotFound`` (before the first chunk)
    or ``StorageError``."""
    left = hi - lo
    if left <= 0:
        return
    if lo == 0 and hi == size:
        async for piece in store.open(key, chunk_size=chunk):
            piece = piece[:left]
            left -= len(piece)
            if piece:
                yield piece
            if left <= 0:
                return
        return
    while lo < hi:
        piece = await store.get(key, byte_range=(lo, min(hi, lo + chunk)))
        if not piece:
            return
        lo += len(piece)
        yield piece


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """``[start, end)`` for a single-range ``Range`` header over ``size`` bytes."""
    m = _RANGE.match(header)
    if m is None or (not m[1] and not m[2]):
        return None
    if not m[1]:
        suffix = int(m[2])
        if suffix == 0:
            raise RangeNotSatisfiable(header)
        return max(0, size - suffix), size
    first = int(m[1])
    if m[2] and int(m[2]) < first:
        return None
    if first >= size:
        raise RangeNotSatisfiable(header)
    last = int(m[2]) if m[2] else size - 1
    return first, min(last, size - 1) + 1
