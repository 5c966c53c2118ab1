"""The operator's clock and ``metav1.Time``'s wire form.

Reconcilers read the time through a :class:`Clock` they are given (default :func:`utc_now`,
the real one), so tests drive time by handing them a fake. Times on the wire are RFC 3339 in
UTC with whole seconds, as ``metav1.Time`` serialises: :func:`format_time` writes that form
and :func:`parse_time` reads it (leniently: what a user may have written into a status).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

__all__ = ["Clock", "format_time", "parse_time", "utc_now"]


class Clock(Protocol):
    """A source of the current time: called, it returns an aware datetime."""

    def __call__(self) -> dt.datetime:
        """Now (timezone-aware)."""
        ...


def utc_now() -> dt.datetime:
    """The real clock: the wall-clock time now, aware, in UTC."""
    return dt.datetime.now(dt.UTC)


def format_time(when: dt.datetime) -> str:
    """``metav1.Time`` on the wire: RFC 3339, whole seconds, UTC (``2024-01-02T03:04:05Z``)."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: Any) -> dt.datetime | None:
    """An RFC 3339 timestamp as an aware datetime; ``None`` when ``text`` is absent, not a
    string or malformed. A timestamp without an offset is read as UTC."""
    if not isinstance(text, str) or not text:
        return None
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
