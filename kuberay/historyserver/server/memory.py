"""Memory around decoding a session: giving freed memory back, and pausing the cyclic GC.

Decoding a big session allocates far more (the raw files, every event as a dict) than the
snapshot it keeps; CPython frees it, but glibc's allocator keeps most of those pages, so the
server's RSS would stay at the peak of its biggest decode. ``release_free_memory`` asks glibc
to return them (``malloc_trim(0)``). Elsewhere (another libc, another OS) it does nothing.

Decoding allocates millions of objects (JSON values, which hold no reference cycles), and
each 700 allocations the cyclic collector runs, every so often over everything alive:
``gc_paused`` holds it off while a decode runs (about a third of a big session's decode
time), and collects once at the end.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_paused = 0
_was_enabled = True


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


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (nested and concurrent blocks: until
    the last one ends); it was on before, it is on again after, having run once."""
    global _paused, _was_enabled
    if _paused == 0:
        _was_enabled = gc.isenabled()
    _paused += 1
    gc.disable()
    try:
        yield
    finally:
        _paused -= 1
        if _paused == 0 and _was_enabled:
            gc.enable()
            gc.collect(1)
