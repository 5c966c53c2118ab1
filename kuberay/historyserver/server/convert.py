"""Value helpers for turning Ray's exported events into dashboard shapes.

Events carry IDs as base64 (proto3 JSON ``bytes``), int64 as strings and timestamps as
RFC 3339 with up to nanosecond precision; the dashboard answers hex IDs, integers and Unix
milliseconds. Every helper here is total: a malformed value gives ``None``/``""``, never an
exception, because one odd event must not make a whole session unreadable.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from kuberay.historyserver.ids import InvalidID, to_hex

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$"
)


def hex_id(value: object) -> str:
    """``value`` (base64 or hex) as lowercase hex; ``""`` for an empty or undecodable one."""
    if not isinstance(value, str) or not value:
        return ""
    try:
        return to_hex(value)
    except InvalidID:
        return ""


def is_nil(hex_value: str) -> bool:
    """Whether a hex ID is Ray's nil ID (all ``ff`` bytes) or empty."""
    return not hex_value or set(hex_value) == {"f"}


def opt_id(value: object) -> str | None:
    """A hex ID, or ``None`` when it is missing or nil (as the dashboard shows absent IDs)."""
    h = hex_id(value)
    return None if is_nil(h) else h


def timestamp_ns(value: object) -> int | None:
    """Unix nanoseconds of an RFC 3339 timestamp (``...T21:06:27.629449481Z``); ``None`` when
    it does not parse."""
    if not isinstance(value, str):
        return None
    m = _RFC3339.fullmatch(value)
    if m is None:
        return None
    try:
        zone = "+00:00" if m[8] == "Z" else m[8]
        base = datetime.fromisoformat(
            f"{m[1]}-{m[2]}-{m[3]}T{m[4]}:{m[5]}:{m[6]}{zone}"
        ).astimezone(UTC)
    except ValueError:
        return None
    frac = int((m[7] or "0").ljust(9, "0"))
    return int(base.timestamp()) * 1_000_000_000 + frac


def timestamp_ms(value: object) -> int | None:
    """Unix milliseconds of an RFC 3339 timestamp, ``None`` when it does not parse."""
    ns = timestamp_ns(value)
    return None if ns is None else ns // 1_000_000


def to_int(value: object, default: int = 0) -> int:
    """An int64 that proto3 JSON may have written as a string; ``default`` otherwise."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return default
    return default


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}``."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` when it is a JSON array, else ``[]``."""
    return value if isinstance(value, list) else []


def as_str(value: object) -> str:
    """``value`` when it is a string, else ``""``."""
    return value if isinstance(value, str) else ""


def event_order(event: dict[str, Any]) -> tuple[int, str, str]:
    """A total order over events that does not depend on arrival: the event's timestamp,
    then its ``eventId``, then its type (so sorting by it makes every fold deterministic)."""
    return (
        timestamp_ns(event.get("timestamp")) or 0,
        as_str(event.get("eventId")),
        as_str(event.get("eventType")),
    )


def transition_key(transition: dict[str, Any]) -> tuple[int, str]:
    """The order of a state transition: its time, then its state name."""
    return (timestamp_ns(transition.get("timestamp")) or 0, as_str(transition.get("state")))


def merge_transitions(existing: list[dict[str, Any]], new: list[Any]) -> list[dict[str, Any]]:
    """``existing`` plus the transitions of ``new`` not already in it (same state and
    timestamp), sorted by time then state."""
    seen = {(t.get("state"), t.get("timestamp")) for t in existing}
    out = list(existing)
    for t in new:
        if not isinstance(t, dict):
            continue
        key = (t.get("state"), t.get("timestamp"))
        if key not in seen:
            seen.add(key)
            out.append(t)
    out.sort(key=transition_key)
    return out
