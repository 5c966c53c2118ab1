"""Missed ticks: which one to start and how many there were, in bounded time.

A RayCronJob suspended for a week (or an operator down that long) finds many ticks
due at once. Kubernetes' CronJob starts only the most recent one; so do we (KubeRay
backfills every one of them, see ``docs/raycronjob.md``). Both answers must be cheap
however long the gap is, because a reconcile must not hold the event loop: walking
robfig's ``Next`` tick by tick costs about half a millisecond per tick, so a year of
``* * * * *`` would take minutes.

* :func:`latest_tick_unix` finds the most recent tick at or before ``now`` with about
  ``log2(now - base)`` calls of ``Next`` (a bisection on its argument), so the tick is
  exactly the instant robfig would have reached by backfilling.
* :func:`count_ticks` counts the ticks in an interval arithmetically: within a span
  of constant UTC offset, the instants whose wall clock matches the fields are the
  matching wall-clock minutes, counted a day at a time. A wall time skipped by a
  spring-forward transition is not counted and one repeated by a fall-back
  transition is counted twice, as robfig fires it (the unit tests compare the count
  with robfig's walk across DST transitions). Only around Lord Howe's half-hour
  transitions, where robfig's walk has quirks of its own, can it be one off.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math

from kuberay.api.v1.schedule import CronSchedule
from kuberay.controllers.raycronjob.gotime import Zone, offset_at
from kuberay.controllers.raycronjob.ticks import CronFields, cron_fields, next_tick_unix

__all__ = ["count_ticks", "latest_tick_unix"]

_DAY = 86400
_SECOND_NS = 1_000_000_000
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()


def _period(schedule: CronSchedule) -> int | None:
    """The whole-second period of an ``@every`` schedule (``None`` for cron)."""
    if schedule.every_ns is None:
        return None
    return (schedule.every_ns - schedule.every_ns % _SECOND_NS) // _SECOND_NS


def latest_tick_unix(schedule: CronSchedule, base: int, now: float, zone: Zone) -> int | None:
    """The most recent tick ``t`` with ``base < t <= now``, as robfig's ``Next``
    chained from ``base`` would reach it; ``None`` when there is none."""
    period = _period(schedule)
    if period is not None:
        steps = math.floor((now - base) / period)
        return base + steps * period if steps >= 1 else None
    first = next_tick_unix(schedule, base, zone)
    if first is None or first > now:
        return None

    # Largest x in [base, floor(now)) whose next tick is still <= now: its next tick
    # is the latest one (Next is monotonic in its argument).
    def due(x: int) -> bool:
        tick = next_tick_unix(schedule, x, zone)
        return tick is not None and tick <= now

    lo, hi = base, math.floor(now)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if due(mid):
            lo = mid
        else:
            hi = mid
    return next_tick_unix(schedule, lo, zone)


def count_ticks(schedule: CronSchedule, after: int, until: int, zone: Zone) -> int:
    """How many ticks ``t`` the schedule has with ``after < t <= until`` (Unix
    seconds; the ticks of ``@every`` are counted from ``after``)."""
    if until <= after:
        return 0
    period = _period(schedule)
    if period is not None:
        return (until - after) // period
    fields = cron_fields(schedule)
    seconds = sorted(h * 3600 + m * 60 for h in fields.hours for m in fields.minutes)
    total = 0
    start, end = after + 1, until + 1  # [start, end)
    while start < end:
        stop = min(end, start + _DAY)
        offset = offset_at(start, zone)
        if offset_at(stop - 1, zone) != offset:
            # The first second at a different offset (at most one transition a day).
            lo, hi = start, stop - 1
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if offset_at(mid, zone) == offset:
                    lo = mid
                else:
                    hi = mid
            stop = hi
        total += _count_wall(fields, seconds, start + offset, stop + offset)
        start = stop
    return total


def _count_wall(fields: CronFields, seconds: list[int], w0: int, w1: int) -> int:
    """Matching wall-clock minutes in ``[w0, w1)`` (wall seconds since 1970-01-01),
    ``seconds`` being the matching times of day (seconds after midnight), sorted."""
    total = 0
    day = w0 // _DAY
    while day * _DAY < w1:
        date = dt.date.fromordinal(_EPOCH_ORDINAL + day)
        if date.month in fields.months and fields.day_matches(date.day, (date.weekday() + 1) % 7):
            lo = max(w0 - day * _DAY, 0)
            hi = min(w1 - day * _DAY, _DAY)
            total += bisect.bisect_left(seconds, hi) - bisect.bisect_left(seconds, lo)
        day += 1
    return total
