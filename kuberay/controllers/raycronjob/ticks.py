"""When a RayCronJob fires next: robfig/cron ``Schedule.Next`` as KubeRay uses it.

KubeRay parses ``"TZ=<timeZone> <schedule>"`` (just ``<schedule>`` without a time zone,
meaning the operator's local zone) with ``cron.ParseStandard`` and asks ``Next(t)``:
the first fire time strictly after ``t``, at whole seconds. For a five-field schedule
robfig searches forward field by field (month, day, hour, minute, second) on the
zone's wall clock, using Go's time arithmetic, so:

* a wall time skipped by a spring-forward transition does not fire that day
  (``30 2 * * *`` in New York fires on the day before and the day after the
  spring-forward day, not on it); hourly schedules simply have no 02:00 that day;
* a wall time repeated by a fall-back transition fires twice, once per occurrence
  (``0 1 * * *`` in New York on the fall-back day: 01:00 EDT and 01:00 EST);
* day-of-month and day-of-week both restricted (neither written as ``*``): a day
  matching either fires (``0 0 1 * mon``: the 1st and every Monday); otherwise both;
* no fire time within five years of ``t`` (``0 0 30 2 *``): ``None``.

``@every <d>`` fires ``d`` (whole seconds, at least one) after ``t`` truncated to the
second, in any zone.
"""

from __future__ import annotations

import datetime as dt
import math

import attrs

from kuberay.api.v1.schedule import CronSchedule
from kuberay.controllers.raycronjob.gotime import Wall, Zone, go_date, wall

__all__ = ["CronFields", "cron_fields", "next_tick", "next_tick_unix"]

_SECOND_NS = 1_000_000_000
#: (min, max) of minute, hour, day of month, month, day of week.
_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
#: robfig gives up when no match is found within this many years.
_YEAR_LIMIT = 5


@attrs.frozen
class CronFields:
    """The allowed values of each field, and whether day-of-month / day-of-week were
    written as a bare ``*`` (robfig's star bit, which decides AND versus OR)."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    day_star: bool
    weekday_star: bool

    def day_matches(self, day: int, weekday: int) -> bool:
        """robfig ``dayMatches``: both must match when either field is ``*``."""
        dom = day in self.days
        dow = weekday in self.weekdays
        if self.day_star or self.weekday_star:
            return dom and dow
        return dom or dow


def _field(text: str, low: int, high: int) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in (p for p in text.split(",") if p):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span == "*":
            start, end = low, high
            star = star or step == 1
        elif "-" in span:
            first, last = span.split("-", 1)
            start, end = int(first), int(last)
        else:
            start = int(span)
            end = high if step_text else start
        values.update(range(start, end + 1, step))
    return frozenset(values), star


def cron_fields(schedule: CronSchedule) -> CronFields:
    """The fields of a five-field (or descriptor) schedule; ``ValueError`` for ``@every``."""
    if schedule.expression is None:
        raise ValueError(f"{schedule.spec!r} is an @every schedule")
    parsed = [
        _field(text, low, high)
        for text, (low, high) in zip(schedule.expression.split(), _BOUNDS, strict=True)
    ]
    return CronFields(
        minutes=parsed[0][0],
        hours=parsed[1][0],
        days=parsed[2][0],
        months=parsed[3][0],
        weekdays=parsed[4][0],
        day_star=parsed[2][1],
        weekday_star=parsed[4][1],
    )


def _add_date(t: int, months: int, days: int, zone: Zone) -> int:
    """Go ``t.AddDate(0, months, days)``: the same wall time, that much later."""
    w = wall(t, zone)
    return go_date(w.year, w.month + months, w.day + days, w.hour, w.minute, w.second, zone)


class _Search:
    """robfig ``SpecSchedule.Next``: each field's step returns False when it rolled
    over into the next larger unit, and the search starts again from the month."""

    def __init__(self, fields: CronFields, start: int, zone: Zone) -> None:
        self.f = fields
        self.t = start
        self.zone = zone
        # Set once the time was first moved: from then on it sits at the start of a unit.
        self.added = False

    def _wall(self) -> Wall:
        return wall(self.t, self.zone)

    def _start_unit(self, unix: int) -> None:
        if not self.added:
            self.added = True
            self.t = unix

    def month(self) -> bool:
        w = self._wall()
        while w.month not in self.f.months:
            self._start_unit(go_date(w.year, w.month, 1, 0, 0, 0, self.zone))
            self.t = _add_date(self.t, 1, 0, self.zone)
            w = self._wall()
            if w.month == 1:
                return False
        return True

    def day(self) -> bool:
        w = self._wall()
        while not self.f.day_matches(w.day, w.weekday):
            self._start_unit(go_date(w.year, w.month, w.day, 0, 0, 0, self.zone))
            self.t = _add_date(self.t, 0, 1, self.zone)
            w = self._wall()
            # Midnight may not exist (or exist twice): get back to hour 0.
            if w.hour != 0:
                self.t += (24 - w.hour) * 3600 if w.hour > 12 else -w.hour * 3600
                w = self._wall()
            if w.day == 1:
                return False
        return True

    def hour(self) -> bool:
        w = self._wall()
        while w.hour not in self.f.hours:
            self._start_unit(go_date(w.year, w.month, w.day, w.hour, 0, 0, self.zone))
            self.t += 3600
            w = self._wall()
            if w.hour == 0:
                return False
        return True

    def minute(self) -> bool:
        w = self._wall()
        while w.minute not in self.f.minutes:
            self._start_unit(self.t - self.t % 60)
            self.t += 60
            w = self._wall()
            if w.minute == 0:
                return False
        return True

    def second(self) -> bool:
        # ParseStandard fixes the seconds field at 0.
        w = self._wall()
        while w.second != 0:
            self._start_unit(self.t)
            self.t += 1
            w = self._wall()
            if w.second == 0:
                return False
        return True

    def run(self) -> int | None:
        year_limit = self._wall().year + _YEAR_LIMIT
        while self._wall().year <= year_limit:
            if self.month() and self.day() and self.hour() and self.minute() and self.second():
                return self.t
        return None


def next_tick_unix(schedule: CronSchedule, after: float, zone: Zone) -> int | None:
    """``Next`` on Unix seconds: the first fire time strictly after ``after``
    (``None``: none within robfig's five-year search)."""
    start = math.floor(after)
    if schedule.every_ns is not None:
        period = schedule.every_ns - schedule.every_ns % _SECOND_NS
        return start + period // _SECOND_NS
    return _Search(cron_fields(schedule), start + 1, zone).run()


def next_tick(schedule: CronSchedule, after: dt.datetime, zone: Zone) -> dt.datetime | None:
    """The first fire time strictly after ``after`` (an aware datetime), in UTC;
    ``None`` when the schedule has none within five years. ``zone`` is the schedule's
    time zone (``None``: the operator's local zone)."""
    unix = next_tick_unix(schedule, after.timestamp(), zone)
    if unix is None:
        return None
    return dt.datetime.fromtimestamp(unix, dt.UTC)
