"""Go's wall-clock arithmetic in a time zone, on whole Unix seconds.

robfig/cron walks a schedule with Go ``time`` calls (``time.Date``, ``AddDate``,
``Hour()``...). Around DST transitions Go resolves a wall-clock time that does not
exist (spring forward) or exists twice (fall back) in its own way, which is not
Python's ``fold`` rule: ``time.Date`` looks up the zone offset at the wall time read
as if it were UTC, and when that offset is not zero looks the offset up again at
the instant it implies. :func:`go_date` reproduces exactly that, so the ticks we
compute are the instants KubeRay computes.

A zone is a :class:`datetime.tzinfo` or ``None`` for the process's local zone (Go's
``time.Local``; both follow ``TZ`` and ``/etc/localtime``).
"""

from __future__ import annotations

import datetime as dt
import time
from datetime import tzinfo

import attrs

__all__ = ["Wall", "Zone", "go_date", "offset_at", "wall"]

Zone = tzinfo | None

_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_DAY = 86400


def offset_at(unix: int, zone: Zone) -> int:
    """The UTC offset (seconds east) of ``zone`` at the instant ``unix``."""
    if zone is None:
        return time.localtime(unix).tm_gmtoff
    delta = dt.datetime.fromtimestamp(unix, zone).utcoffset()
    return int(delta.total_seconds()) if delta is not None else 0


@attrs.frozen
class Wall:
    """The wall-clock fields of an instant in a zone (``weekday``: Sunday = 0, as Go)."""

    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    weekday: int


def wall(unix: int, zone: Zone) -> Wall:
    """What a clock in ``zone`` shows at the instant ``unix``."""
    local = unix + offset_at(unix, zone)
    days, secs = divmod(local, _DAY)
    date = dt.date.fromordinal(_EPOCH_ORDINAL + days)
    return Wall(
        year=date.year,
        month=date.month,
        day=date.day,
        hour=secs // 3600,
        minute=secs % 3600 // 60,
        second=secs % 60,
        weekday=(date.weekday() + 1) % 7,
    )


def go_date(
    year: int, month: int, day: int, hour: int, minute: int, second: int, zone: Zone
) -> int:
    """Go ``time.Date(year, month, day, hour, min, sec, 0, zone).Unix()``.

    Out-of-range fields are normalised (month 13 is January of the next year, day 32
    of a 31-day month is the 1st of the next one). A wall time in a DST gap or
    overlap resolves as Go resolves it (see the module docstring).
    """
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    days = dt.date(year, month, 1).toordinal() - _EPOCH_ORDINAL + day - 1
    naive = days * _DAY + hour * 3600 + minute * 60 + second
    offset = offset_at(naive, zone)
    if offset != 0:
        # The offset found for the wrong instant; the one in force at the instant it
        # implies is Go's answer (the same one when no transition lies in between).
        offset = offset_at(naive - offset, zone)
    return naive - offset
