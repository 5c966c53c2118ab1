"""Finding and decoding one session's event files.

Where they are (``layout``): ``<session>/<node>/node_events/<file>`` and
``<session>/<node>/job_events/<job>/<file>``; a file counts when its name matches KubeRay's
``EVENT_FILE_RE`` (``-YYYY-MM-DD-HH[-n][.jsonl][.gz]``). Every other session-level entry
(``fetched_endpoints/``, our own ``*.json`` files) and the ``logs/`` trees are not read.

What is in them: JSON Lines (our collector and KubeRay's) or one JSON array (KubeRay's legacy
format), gzipped or not (detected by the gzip magic, whatever the name says). Events written
in snake_case are renamed to camelCase. A line that is not a JSON object is skipped and
counted, never fatal.

What a Ray job writes is untrusted: a file stored larger than :data:`EVENT_FILE_MAX_BYTES`,
or one that decompresses to more (a gzip bomb), is not decoded. It is skipped, logged and
counted (``DecodeStats.too_large`` and the metric
``kuberay_history_server_event_files_skipped_total{reason="too_large"}``); the session loads
without it. Decompression stops as soon as the output passes the cap.

Reads run ``READ_CONCURRENCY`` at a time, and together they hold at most
:data:`EVENT_BYTES_IN_FLIGHT` stored bytes: each read first takes its file's stored size from
a shared ``ByteBudget`` and gives it back once the file is decoded, so sixteen files near the
per-file cap are read a few at a time instead of all at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncIterator
from typing import Any

import attrs
import orjson
import structlog

from kuberay.historyserver.layout import (
    JOB_EVENTS_DIR,
    NODE_EVENTS_DIR,
    Layout,
    is_event_file,
    is_safe_segment,
    to_camel,
)
from kuberay.historyserver.server.metrics import EVENT_FILES_SKIPPED, TOO_LARGE
from kuberay.historyserver.storage.base import ObjectStore, list_all
from kuberay.historyserver.storage.errors import NotFound

log = structlog.get_logger("historyserver.server.events")

GZIP_MAGIC = b"\x1f\x8b"
READ_CONCURRENCY = 16
#: The largest event file decoded, stored or decompressed (128 MiB): above the 100 MB at
#: which KubeRay's and our collector rotate a file (plus one request's events), so no
#: file a collector writes is refused, yet a gzip bomb stops after 128 MiB of output.
EVENT_FILE_MAX_BYTES = 128 << 20
#: The most stored event-file bytes one session load fetches and decodes at once (256 MiB),
#: shared by its ``READ_CONCURRENCY`` concurrent reads: two files at the per-file cap, where
#: sixteen of them could otherwise hold 2 GiB together. A file larger than the whole budget
#: waits until no other read holds any, then takes all of it (its own size is the per-file
#: cap's business).
EVENT_BYTES_IN_FLIGHT = 256 << 20
#: compressed bytes fed to the decompressor at a time
_FEED = 64 << 10
#: the most bytes one decompression step yields
_PIECE = 1 << 20


class EventFileTooLarge(ValueError):
    """An event file is, or decompresses to, more than its byte limit."""


@attrs.frozen
class EventFile:
    """One stored event file: its key, size, node dir and (for job files) job dir."""

    key: str
    size: int
    node_id: str
    job_id: str = ""


@attrs.define
class DecodeStats:
    """What decoding a session met: files and bytes read, events kept, lines skipped, files
    left out for their size."""

    files: int = 0
    bytes: int = 0
    events: int = 0
    skipped: int = 0
    too_large: int = 0


class ByteBudget:
    """A semaphore counted in bytes, shared by concurrent tasks of one event loop.

    ``hold(n)`` waits until ``n`` bytes fit next to what the other holders hold, keeps them
    for the ``async with`` body and gives them back on exit (also on error or cancellation).
    A request over ``total`` is clamped to ``total`` (it runs alone). ``used`` never exceeds
    ``total``."""

    def __init__(self, total: int) -> None:
        if total <= 0:
            raise ValueError(f"byte budget must be positive, got {total}")
        self.total = total
        self.used = 0
        self._cond = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def hold(self, nbytes: int) -> AsyncIterator[None]:
        """Hold ``nbytes`` (clamped to ``0..total``) of the budget for the body."""
        n = max(0, min(nbytes, self.total))
        async with self._cond:
            await self._cond.wait_for(lambda: self.used + n <= self.total)
            self.used += n
        try:
            yield
        finally:
            async with self._cond:
                self.used -= n
                self._cond.notify_all()


def _basename(key: str) -> str:
    return key.rsplit("/", 1)[-1]


async def session_nodes(store: ObjectStore, layout: Layout, session: str) -> list[str]:
    """The node directories of a stored session (every safe sub-directory except
    ``fetched_endpoints``), sorted."""
    prefix = layout.session_prefix(session) + "/"
    listing = await list_all(store, prefix)
    nodes = []
    for p in listing.prefixes:
        name = p[len(prefix) :].rstrip("/")
        if name != "fetched_endpoints" and is_safe_segment(name):
            nodes.append(name)
    return sorted(nodes)


async def find_event_files(store: ObjectStore, layout: Layout, session: str) -> list[EventFile]:
    """Every event file of ``session`` (node and job files of every node), in key order."""
    found: list[EventFile] = []
    for node in await session_nodes(store, layout, session):
        node_prefix = layout.node_prefix(session, node) + "/"
        listing = await list_all(store, node_prefix + NODE_EVENTS_DIR + "/", delimiter=None)
        for obj in listing.objects:
            if is_event_file(_basename(obj.key)):
                found.append(EventFile(obj.key, obj.size, node))
        job_prefix = node_prefix + JOB_EVENTS_DIR + "/"
        listing = await list_all(store, job_prefix, delimiter=None)
        for obj in listing.objects:
            parts = obj.key[len(job_prefix) :].split("/")
            if len(parts) == 2 and is_safe_segment(parts[0]) and is_event_file(parts[1]):
                found.append(EventFile(obj.key, obj.size, node, parts[0]))
    found.sort(key=lambda f: f.key)
    return found


def decompress(data: bytes, *, limit: int = EVENT_FILE_MAX_BYTES) -> bytes:
    """``data`` un-gzipped when it starts with the gzip magic (several members allowed),
    else as it is. A truncated or corrupt gzip stream gives what could be decoded (bytes
    after the last member that are not another member are ignored). Raises
    ``EventFileTooLarge`` when the result would pass ``limit`` bytes, having decompressed
    at most ``limit`` + 1 MiB."""
    if not data.startswith(GZIP_MAGIC):
        if len(data) > limit:
            raise EventFileTooLarge(f"{len(data)} bytes, over the {limit}-byte limit")
        return data
    out = bytearray()
    view = memoryview(data)
    pos = 0
    inflater = None
    try:
        while pos < len(data):
            if inflater is None:
                if bytes(view[pos : pos + 2]) != GZIP_MAGIC:
                    break
                inflater = zlib.decompressobj(31)
            buf: bytes | memoryview = view[pos : pos + _FEED]
            pos += len(buf)
            while True:
                piece = inflater.decompress(buf, _PIECE)
                out += piece
                if len(out) > limit:
                    raise EventFileTooLarge(f"decompresses past the {limit}-byte limit")
                if inflater.eof:
                    pos -= len(inflater.unused_data)
                    inflater = None
                    break
                buf = inflater.unconsumed_tail
                if not buf and len(piece) < _PIECE:
                    break
    except zlib.error:
        pass
    return bytes(out)


def parse_events(
    data: bytes, stats: DecodeStats | None = None, *, limit: int = EVENT_FILE_MAX_BYTES
) -> list[dict[str, Any]]:
    """The events in one file's bytes: a JSON array, or JSON Lines (a line may itself hold
    an array). Events come back camelCase; anything that is not an object is skipped.
    Raises ``EventFileTooLarge`` past ``limit`` bytes (``decompress``)."""
    stats = stats if stats is not None else DecodeStats()
    text = decompress(data, limit=limit).strip()
    if not text:
        return []
    decoded: list[Any] = []
    if text.startswith(b"["):
        try:
            decoded = [orjson.loads(text)]
        except orjson.JSONDecodeError:
            decoded = []  # not one array: JSON Lines whose lines are arrays
    if not decoded:
        lines = [s for s in (line.strip() for line in text.splitlines()) if s]
        try:  # every line valid: one decode of them all
            decoded = orjson.loads(b"[" + b",".join(lines) + b"]")
        except orjson.JSONDecodeError:
            decoded = []
            for line in lines:
                try:
                    decoded.append(orjson.loads(line))
                except orjson.JSONDecodeError:
                    stats.skipped += 1
    out: list[dict[str, Any]] = []
    for item in decoded:
        for event in item if isinstance(item, list) else [item]:
            if isinstance(event, dict):
                out.append(to_camel(event))
            else:
                stats.skipped += 1
    stats.events += len(out)
    return out


async def read_session_events(
    store: ObjectStore,
    files: list[EventFile],
    stats: DecodeStats | None = None,
    *,
    limit: int = EVENT_FILE_MAX_BYTES,
    budget: int | None = None,
) -> list[dict[str, Any]]:
    """Every event in ``files``, read at most ``READ_CONCURRENCY`` at a time and with at most
    ``budget`` stored bytes (default :data:`EVENT_BYTES_IN_FLIGHT`) fetched and decoded at
    once. A file that vanished meanwhile is skipped; one stored or decompressing larger than
    ``limit`` is skipped, logged and counted. The list's order is the files' order (but
    nothing built from it may depend on that)."""
    stats = stats if stats is not None else DecodeStats()
    gate = asyncio.Semaphore(READ_CONCURRENCY)
    in_flight = ByteBudget(EVENT_BYTES_IN_FLIGHT if budget is None else budget)

    async def one(f: EventFile) -> list[dict[str, Any]]:
        if f.size > limit:
            return _too_large(f, stats, f"stored size {f.size} is over the {limit}-byte limit")
        async with in_flight.hold(f.size), gate:
            try:
                data = await store.get(f.key, byte_range=(0, limit + 1))
            except NotFound:
                log.warning("event file vanished while loading", key=f.key)
                return []
            stats.files += 1
            stats.bytes += len(data)
            try:
                return parse_events(data, stats, limit=limit)
            except EventFileTooLarge as exc:
                return _too_large(f, stats, str(exc))

    results = await asyncio.gather(*(one(f) for f in files))
    return [e for batch in results for e in batch]


def _too_large(f: EventFile, stats: DecodeStats, why: str) -> list[dict[str, Any]]:
    """Skip ``f``: log it, count it (``stats`` and the metric); no events."""
    log.warning("event file too large; skipped", key=f.key, size=f.size, reason=why)
    stats.too_large += 1
    EVENT_FILES_SKIPPED.labels(TOO_LARGE).inc()
    return []
