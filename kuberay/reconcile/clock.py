"""The operator's clock and ``metav1.Time``'s wire form.

Reconcilers read the time through a :class:`Clock` they are given (default :func:`utc_now`,
the real one), so tests drive time by handing them a fake. Times on the wire are RFC 3339 in
UTC with whole seconds, as ``metav1.Time`` serialises: :func:`format_time` writes that form
and :func:`parse_time` reads it (leniently: what a user may have written into a status); both
are :mod:`kuberay.gocompat.gotime`'s, the one home of timestamp text.
"""

from __future__ import annotations

import datetime as dt
from typing import Protocol

from kuberay.gocompat.gotime import format_rfc3339 as format_time
from kuberay.gocompat.gotime import parse_rfc3339_or_none as parse_time

__all__ = ["Clock", "format_time", "parse_time", "utc_now"]


class Clock(Protocol):
    """A source of the current time: called, it returns an aware datetime."""

    def __call__(self) -> dt.datetime:
        """Now (timezone-aware)."""
        ...


def utc_now() -> dt.datetime:
    """The real clock: the wall-clock time now, aware, in UTC."""
    return dt.datetime.now(dt.UTC)
