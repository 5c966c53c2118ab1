"""What the node event forwarder decides about one Node Event (KubeRay v1.8, #4978): pure
functions over core/v1 Event dicts.

* :func:`forwardable`: the Event is about a Node and passes the filter (an empty set allows
  all; sources match ``source.component`` or ``reportingComponent``);
* :func:`forwarded_reason` / :func:`forwarded_note`: KubeRay's ``<reason>/<source>`` reason
  (``NodeEvent`` for an empty reason, at most 128 bytes) and note ``Node event observed on
  Node "<node>" (reason: <reason>, source: <source>): <message>`` (at most 1024 bytes, cut at
  a character and ended with ``...``);
* :func:`last_observed` and :func:`occurrences`: when the Event last happened and how many
  times, legacy (``lastTimestamp``/``count``) and new-style (``eventTime``/``series``) alike:
  an Event last seen before the forwarder started leading is skipped, one whose count rose
  since it was forwarded is forwarded again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Final

from kuberay.controllers.config import NodeEventFilter
from kuberay.reconcile.clock import parse_time

__all__ = [
    "FALLBACK_REASON",
    "MAX_NOTE_BYTES",
    "MAX_REASON_BYTES",
    "event_source",
    "forwardable",
    "forwarded_note",
    "forwarded_reason",
    "last_observed",
    "occurrences",
]

NODE_KIND: Final = "Node"
FALLBACK_REASON: Final = "NodeEvent"
MAX_NOTE_BYTES: Final = 1024
MAX_REASON_BYTES: Final = 128


def event_source(event: Mapping[str, Any]) -> str:
    """Who emitted the Event: ``source.component``, else ``reportingComponent``."""
    component = (event.get("source") or {}).get("component")
    if isinstance(component, str) and component:
        return component
    reporter = event.get("reportingComponent")
    return reporter if isinstance(reporter, str) else ""


def forwardable(event: Mapping[str, Any], only: NodeEventFilter) -> bool:
    """The Event is about a Node and every non-empty filter set admits it."""
    if (event.get("involvedObject") or {}).get("kind") != NODE_KIND:
        return False
    if only.types and event.get("type") not in only.types:
        return False
    if only.reasons and event.get("reason") not in only.reasons:
        return False
    if only.sources:
        component = (event.get("source") or {}).get("component")
        if component not in only.sources and event.get("reportingComponent") not in only.sources:
            return False
    return True


def _truncate(text: str, max_bytes: int, suffix: str) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes at a character boundary, ``suffix``
    ending it when cut."""
    raw = text.encode()
    if len(raw) <= max_bytes:
        return text
    return raw[: max_bytes - len(suffix)].decode(errors="ignore") + suffix


def _reason(event: Mapping[str, Any]) -> str:
    reason = event.get("reason")
    return reason if isinstance(reason, str) and reason else FALLBACK_REASON


def forwarded_reason(event: Mapping[str, Any]) -> str:
    """The reason of the forwarded Event: ``<reason>/<source>``."""
    source = event_source(event)
    reason = f"{_reason(event)}/{source}" if source else _reason(event)
    return _truncate(reason, MAX_REASON_BYTES, "")


def forwarded_note(node: str, event: Mapping[str, Any]) -> str:
    """The note of the forwarded Event."""
    message = event.get("message") or ""
    note = (
        f'Node event observed on Node "{node}" (reason: {_reason(event)}, source: '
        f"{event_source(event)}): {message}"
    )
    return _truncate(note, MAX_NOTE_BYTES, "...")


def last_observed(event: Mapping[str, Any]) -> dt.datetime | None:
    """The latest of ``lastTimestamp``, ``series.lastObservedTime`` and ``eventTime``; else
    ``firstTimestamp``, else the object's creation."""
    candidates = [
        parse_time(event.get("lastTimestamp")),
        parse_time((event.get("series") or {}).get("lastObservedTime")),
        parse_time(event.get("eventTime")),
    ]
    found = [t for t in candidates if t is not None]
    if found:
        return max(found)
    return parse_time(event.get("firstTimestamp")) or parse_time(
        (event.get("metadata") or {}).get("creationTimestamp")
    )


def occurrences(event: Mapping[str, Any]) -> int:
    """How many times the Event happened: ``series.count``, else ``count``, else 1."""
    for value in ((event.get("series") or {}).get("count"), event.get("count")):
        if isinstance(value, int) and value > 0:
            return value
    return 1
