"""Value helpers for turning Ray's exported events into dashboard shapes.

Events carry IDs as base64 (proto3 JSON ``bytes``), int64 as strings and timestamps as
RFC 3339 with up to nanosecond precision; the dashboard answers hex IDs, integers and Unix
milliseconds. Every helper here is total: a malformed value gives ``None``/``""``, never an
exception, because one odd event must not make a whole session unreadable.
"""

from __future__ import annotations

from typing import Any

from kuberay.gocompat.gotime import rfc3339_nanos
from kuberay.historyserver.ids import InvalidID, to_hex

#: Decoded IDs and timestamp seconds, reused: a task's ID is in each of its ~5 events and
#: many events share a second. Bounded: cleared when full.
_CACHE_LIMIT = 1 << 18
_HEX_CACHE: dict[str, str] = {}
_SECONDS_CACHE: dict[str, int | None] = {}
_NS_CACHE: dict[str, int | None] = {}
_MISSING = object()


def hex_id(value: object) -> str:
    """``value`` (base64 or hex) as lowercase hex; ``""`` for an empty or undecodable one."""
    if not isinstance(value, str) or not value:
        return ""
    cached = _HEX_CACHE.get(value)
    if cached is not None:
        return cached
    try:
        decoded = to_hex(value)
    except InvalidID:
        decoded = ""
    if len(_HEX_CACHE) >= _CACHE_LIMIT:
        _HEX_CACHE.clear()
    _HEX_CACHE[value] = decoded
    return decoded


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
    cached = _NS_CACHE.get(value, _MISSING)
    if cached is not _MISSING:
        return cached  # type: ignore[return-value]
    ns = _timestamp_ns(value)
    if len(_NS_CACHE) >= _CACHE_LIMIT:
        _NS_CACHE.clear()
    _NS_CACHE[value] = ns
    return ns


def _timestamp_ns(value: str) -> int | None:
    if len(value) >= 20 and value[-1] == "Z" and value[10] == "T":
        # the common UTC form: the seconds part parsed once, the fraction here
        seconds = _utc_seconds(value[:19])
        frac = value[19:-1]
        if seconds is None:
            return None
        if not frac:
            return seconds * 1_000_000_000
        digits = frac[1:]
        if (
            frac[0] != "."
            or not 1 <= len(digits) <= 9
            or not (digits.isascii() and digits.isdigit())
        ):
            return None
        return seconds * 1_000_000_000 + int(digits.ljust(9, "0"))
    return rfc3339_nanos(value)


def _utc_seconds(head: str) -> int | None:
    if head in _SECONDS_CACHE:
        return _SECONDS_CACHE[head]
    ns = rfc3339_nanos(head + "Z")
    seconds = None if ns is None else ns // 1_000_000_000
    if len(_SECONDS_CACHE) >= _CACHE_LIMIT:
        _SECONDS_CACHE.clear()
    _SECONDS_CACHE[head] = seconds
    return seconds


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


class EventsById:
    """Events of the types in ``payloads`` (event type -> payload key), grouped by the hex ID
    in each payload's ``id_field``; :meth:`add` ignores every other event type."""

    def __init__(self, payloads: dict[str, str], id_field: str) -> None:
        self._payloads = payloads
        self._id_field = id_field
        self._events: dict[str, list[dict[str, Any]]] = {}

    def add(self, event: dict[str, Any]) -> bool:
        """Keep ``event`` under its ID if its type is one of ours; whether it was."""
        kind = as_str(event.get("eventType"))
        if kind not in self._payloads:
            return False
        ident = hex_id(as_dict(event.get(self._payloads[kind])).get(self._id_field))
        if ident:
            self._events.setdefault(ident, []).append(event)
        return True

    def __bool__(self) -> bool:
        return bool(self._events)

    def by_id(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """``(id, events)`` for every ID seen, sorted by ID, events in arrival order."""
        return [(i, self._events[i]) for i in sorted(self._events)]
