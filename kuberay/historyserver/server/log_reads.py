"""Reading parts of stored log files without fetching whole objects.

* ``object_size``: an object's size from a one-entry listing (the store has no HEAD).
* ``read_tail``: the last N lines of ``[start, end)`` of an object by ranged GETs from the
  end, growing the window (64 KiB, doubling) until it holds N complete lines or reaches
  ``start``. The answer equals ``tail_lines`` over the whole slice.
* ``parse_range``: one HTTP ``Range: bytes=...`` spec against a size (RFC 9110 §14.1.2):
  ``a-b``, ``a-`` and ``-n``; several ranges or another unit are ignored (``None``: serve
  it whole); an unsatisfiable one raises ``RangeNotSatisfiable``.
"""

from __future__ import annotations

import re

from kuberay.historyserver.server.logs import tail_lines
from kuberay.historyserver.storage.base import ObjectStore

FIRST_WINDOW = 64 << 10
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$")


class RangeNotSatisfiable(ValueError):
    """The requested range starts at or past the end (answered 416)."""


async def object_size(store: ObjectStore, key: str) -> int | None:
    """The size of the object at ``key``; ``None`` when there is none."""
    page = await store.list(key, delimiter=None, limit=1)
    if page.objects and page.objects[0].key == key:
        return page.objects[0].size
    return None


async def read_tail(
    store: ObjectStore, key: str, lines: int, start: int, end: int, *, window: int = FIRST_WINDOW
) -> bytes:
    """The last ``lines`` (>= 0) lines of bytes ``[start, end)`` of ``key``."""
    if lines == 0 or end <= start:
        return b""
    lo = max(start, end - window)
    data = await store.get(key, byte_range=(lo, end))
    while lo > start:
        body = data[:-1] if data.endswith(b"\n") else data
        if body.count(b"\n") >= lines:
            break
        window *= 2
        new_lo = max(start, end - window)
        data = await store.get(key, byte_range=(new_lo, lo)) + data
        lo = new_lo
    return tail_lines(data, lines)


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
