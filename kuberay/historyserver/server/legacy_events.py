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
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

import orjson
import structlog

from kuberay.historyserver.layout import LOGS_DIR, Layout
from kuberay.historyserver.storage.base import ObjectStore, list_all
from kuberay.historyserver.storage.errors import NotFound

log = structlog.get_logger("historyserver.server.legacy_events")

MAX_EVENTS_PER_JOB = 10000
MAX_LINE_BYTES = 2 << 20
EVENT_FILE = re.compile(r"event_[^/]*\.log\Z")


def parse_lines(data: bytes, into: dict[str, OrderedDict[str, dict[str, Any]]]) -> int:
    """Add the events in ``data`` (one JSON object a line) to ``into`` (job -> event ID ->
    event); returns how many lines were skipped."""
    skipped = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
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
                data = await store.get(obj.key)
            except NotFound:
                continue
            skipped += parse_lines(data, by_job)
    if skipped:
        log.warning("legacy event lines skipped", session=session, skipped=skipped)
    return {job: list(events.values()) for job, events in by_job.items()}
