"""Ray's legacy event log files (``<node>/logs/events/event_*.log``) as ``/events`` serves
them.

Each line of such a file is one JSON event (``event_id``, ``source_type``,
``source_hostname``, ``source_pid``, ``severity``, ``label``, ``message``, ``timestamp``,
``custom_fields``). As Ray's event head does: events are grouped by
``custom_fields.job_id`` (``"global"`` when absent or empty), keyed by ``event_id`` (a later
line with the same ID replaces the earlier one, keeping its place), at most
``MAX_EVENTS_PER_JOB`` per job (the oldest dropped), and the ``\\n``/``\\r`` escapes in
``message`` restored as newlines. Lines over ``MAX_LINE_BYTES`` (KubeRay's 2 MB) and lines
that are not JSON objects are skipped. Files are read node by node, file name order.

A file is streamed through the store's ``open`` and split into lines as it comes: at most one
line of ``MAX_LINE_BYTES`` plus one chunk is held at a time, and a longer line is dropped as
soon as it passes the cap (the rest of it up to the next line break is read and thrown away),
so a huge one-line file written by a Ray job never sits in memory whole.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import orjson
import structlog

from kuberay.historyserver.layout import LOGS_DIR, Layout
from kuberay.historyserver.storage.base import ObjectStore, list_all
from kuberay.historyserver.storage.errors import NotFound

log = structlog.get_logger("historyserver.server.legacy_events")

MAX_EVENTS_PER_JOB = 10000
MAX_LINE_BYTES = 2 << 20
#: bytes asked of the store at a time
CHUNK = 1 << 20
EVENT_FILE = re.compile(r"event_[^/]*\.log\Z")


def parse_lines(
    data: bytes,
    into: dict[str, OrderedDict[str, dict[str, Any]]],
    *,
    max_line: int = MAX_LINE_BYTES,
) -> int:
    """Add the events in ``data`` (one JSON object a line) to ``into`` (job -> event ID ->
    event); returns how many lines were skipped (over ``max_line`` bytes, or not a JSON
    object)."""
    skipped = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        if len(line) > max_line:
            skipped += 1
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            skipped += 1
            continue
        if not isinstance(event, dict):
            skipped += 1
            continue
        if isinstance(event.get("message"), str):
            event["message"] = event["message"].replace("\\n", "\n").replace("\\r", "\n")
        fields = event.get("custom_fields")
        job = (fields.get("job_id") if isinstance(fields, dict) else None) or "global"
        events = into.setdefault(str(job), OrderedDict())
        events[str(event.get("event_id", len(events)))] = event
        while len(events) > MAX_EVENTS_PER_JOB:
            events.popitem(last=False)
    return skipped


def _last_break(data: bytes | bytearray) -> int:
    """The index of the last line break (``\\n`` or ``\\r``) in ``data``, -1 when none."""
    return max(data.rfind(b"\n"), data.rfind(b"\r"))


async def parse_stream(
    chunks: AsyncIterator[bytes],
    into: dict[str, OrderedDict[str, dict[str, Any]]],
    *,
    max_line: int = MAX_LINE_BYTES,
) -> int:
    """``parse_lines`` over a streamed file, holding at most ``max_line`` bytes of an unfinished
    line plus one chunk: a line that grows past ``max_line`` is counted as skipped once and the
    rest of it is discarded as it arrives. Returns how many lines were skipped. Errors of
    ``chunks`` (``NotFound`` before the first chunk) propagate; events parsed before a later
    error are already in ``into``."""
    skipped = 0
    pending = bytearray()
    dropping = False  # inside a line already over the cap
    async for chunk in chunks:
        cut = _last_break(chunk)
        if dropping:
            if cut < 0:
                continue
            dropping = False
            first = min(i for i in (chunk.find(b"\n"), chunk.find(b"\r")) if i >= 0)
            chunk = chunk[first + 1 :]
            cut = _last_break(chunk)
        if cut >= 0:
            pending += chunk[: cut + 1]
            skipped += parse_lines(bytes(pending), into, max_line=max_line)
            pending = bytearray(chunk[cut + 1 :])
        else:
            pending += chunk
        if len(pending) > max_line:
            skipped += 1
            pending = bytearray()
            dropping = True
    if pending:
        skipped += parse_lines(bytes(pending), into, max_line=max_line)
    return skipped


async def read_log_events(
    store: ObjectStore, layout: Layout, session: str, nodes: tuple[str, ...]
) -> dict[str, list[dict[str, Any]]]:
    """Every stored legacy event of the session's ``nodes``, by job ID."""
    by_job: dict[str, OrderedDict[str, dict[str, Any]]] = {}
    skipped = 0
    for node in nodes:
        prefix = f"{layout.node_prefix(session, node)}/{LOGS_DIR}/events/"
        listing = await list_all(store, prefix)
        for obj in listing.objects:
            if not EVENT_FILE.fullmatch(obj.key[len(prefix) :]):
                continue
            try:
                skipped += await parse_stream(store.open(obj.key, chunk_size=CHUNK), by_job)
            except NotFound:
                continue
    if skipped:
        log.warning("legacy event lines skipped", session=session, skipped=skipped)
    return {job: list(events.values()) for job, events in by_job.items()}
