"""Go's ``time`` package where KubeRay's wire text depends on it: RFC 3339 timestamps
(``metav1.Time``, ``metav1.MicroTime``, ``time.RFC3339Nano``), ``time.Time.String`` and
``time.Duration.String``.

The one home of timestamp parsing and formatting in this project: the runtime (events,
leases, exec credentials), the controllers, the plugin and the history server call these
instead of ``datetime.fromisoformat`` / ``strftime`` of their own. ``time.ParseDuration`` is
:func:`.goutil.parse_go_duration`.
"""

from __future__ import annotations

import datetime as dt
import re

__all__ = [
    "format_go_date_time",
    "format_go_duration",
    "format_rfc3339",
    "format_rfc3339_micro",
    "go_duration_of_seconds",
    "go_time_string",
    "parse_rfc3339",
    "parse_rfc3339_or_none",
    "rfc3339_nanos",
]

_RFC3339_NANO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))"
)
_NANOS_PER_SECOND = 1_000_000_000


def parse_rfc3339(text: str) -> dt.datetime:
    """An API timestamp (``2024-01-02T03:04:05Z``, with or without a fraction or an offset)
    as an aware datetime; ``ValueError`` when it does not parse. Read as leniently as
    ``datetime.fromisoformat`` reads ISO 8601; a timestamp without an offset is UTC. The
    offset is kept (``astimezone(UTC)`` for UTC)."""
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def parse_rfc3339_or_none(text: object) -> dt.datetime | None:
    """:func:`parse_rfc3339`, or ``None`` when ``text`` is absent, empty, not a string or
    malformed (a ``metav1.Time`` field that is unset reads as no time)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return parse_rfc3339(text)
    except ValueError:
        return None


def rfc3339_nanos(text: str) -> int | None:
    """Unix nanoseconds of ``text`` parsed strictly as Go's ``time.Parse(time.RFC3339Nano)``
    does (``2024-01-02T03:04:05.123456789Z``, ``...+05:30``; up to nine fraction digits, a
    real calendar date, an offset under 24h); ``None`` when Go would reject it."""
    m = _RFC3339_NANO.fullmatch(text)
    if m is None:
        return None
    try:
        base = dt.datetime(
            int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), tzinfo=dt.UTC
        )
    except ValueError:
        return None
    offset = 0
    if m[8] is not None:
        hours, minutes = int(m[9]), int(m[10])
        if hours >= 24 or minutes >= 60:
            return None
        offset = (hours * 3600 + minutes * 60) * (1 if m[8] == "+" else -1)
    seconds = int(base.timestamp()) - offset
    return seconds * _NANOS_PER_SECOND + int((m[7] or "0").ljust(9, "0"))


def format_rfc3339(when: dt.datetime) -> str:
    """``metav1.Time`` on the wire: RFC 3339 in UTC, whole seconds (``2024-01-02T03:04:05Z``)."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_rfc3339_micro(when: dt.datetime) -> str:
    """``metav1.MicroTime`` on the wire: RFC 3339 in UTC with six fraction digits
    (``2024-01-02T03:04:05.123456Z``)."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def go_time_string(when: dt.datetime | str | None) -> str:
    """Go's ``time.Time.String()`` (``%v``) of a ``metav1.Time`` in UTC
    (``2024-01-02 03:04:05.5 +0000 UTC``), given as a datetime or as its wire text; the zero
    time when unset, the text itself when it does not parse."""
    if isinstance(when, str) and when:
        parsed = parse_rfc3339_or_none(when)
        if parsed is None:
            return when
        when = parsed
    if not isinstance(when, dt.datetime):
        return "0001-01-01 00:00:00 +0000 UTC"
    when = when.astimezone(dt.UTC)
    out = format_go_date_time(when)
    if when.microsecond:
        out += f".{when.microsecond:06d}".rstrip("0")
    return f"{out} +0000 UTC"


def format_go_date_time(when: dt.datetime) -> str:
    """Go's ``time.DateTime`` layout in UTC (``2006-01-02 15:04:05``)."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _fraction(value: int, digits: int) -> str:
    """``value / 10**digits`` as Go's ``fmtFrac`` + ``fmtInt`` write it (no trailing zeros,
    no point for a whole number)."""
    whole, frac = divmod(value, 10**digits)
    if not frac:
        return str(whole)
    return f"{whole}." + f"{frac:0{digits}d}".rstrip("0")


def format_go_duration(nanoseconds: int) -> str:
    """Go's ``time.Duration.String()``: ``0s``, ``1.5ms``, ``2µs``, ``45s``, ``5m3s``,
    ``1h0m7.25s``, ``-3s``."""
    if nanoseconds == 0:
        return "0s"
    value = abs(nanoseconds)
    if value < _NANOS_PER_SECOND:
        if value < 1_000:
            text = f"{value}ns"
        elif value < 1_000_000:
            text = _fraction(value, 3) + "µs"
        else:
            text = _fraction(value, 6) + "ms"
    else:
        seconds, frac = divmod(value, _NANOS_PER_SECOND)
        minutes, secs = divmod(seconds, 60)
        text = _fraction(secs * _NANOS_PER_SECOND + frac, 9) + "s"
        if minutes:
            hours, mins = divmod(minutes, 60)
            text = f"{mins}m{text}"
            if hours:
                text = f"{hours}h{text}"
    return "-" + text if nanoseconds < 0 else text


def go_duration_of_seconds(seconds: float) -> str:
    """:func:`format_go_duration` of ``seconds`` (rounded to whole nanoseconds), as Go prints
    a ``time.Since(...)`` in a message."""
    return format_go_duration(round(seconds * _NANOS_PER_SECOND))
