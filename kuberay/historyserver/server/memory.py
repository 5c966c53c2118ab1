"""Giving freed memory back to the system after a session is decoded.

Decoding a big session allocates far more (the raw files, every event as a dict) than the
snapshot it keeps; CPython frees it, but glibc's allocator keeps most of those pages, so the
server's RSS would stay at the peak of its biggest decode. ``release_free_memory`` asks glibc
to return them (``malloc_trim(0)``). Elsewhere (another libc, another OS) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> None:
    """Return the allocator's free pages to the system, where glibc allows it."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
