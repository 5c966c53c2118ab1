"""The most recent missed tick and the number of missed ticks, computed without walking
every tick: checked against robfig's own walk (``Next`` chained from the base), across
DST transitions, and on gaps too long to walk."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest

from kuberay.api.v1.schedule import parse_standard
from kuberay.controllers.raycronjob.gotime import Zone
from kuberay.controllers.raycronjob.missed import count_ticks, latest_tick_unix
from kuberay.controllers.raycronjob.ticks import next_tick_unix

T0 = int(dt.datetime(2024, 1, 1, tzinfo=dt.UTC).timestamp())
NY = zoneinfo.ZoneInfo("America/New_York")
BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")
UTC = zoneinfo.ZoneInfo("UTC")
# A few days each side of 2024's transitions (New York 03-10 and 11-03, Berlin 03-31
# and 10-27), and a quiet week.
SPANS = [
    (NY, "2024-03-08T13:17:00Z", "2024-03-12T02:00:00Z"),
    (NY, "2024-11-01T00:00:00Z", "2024-11-05T07:31:00Z"),
    (BERLIN, "2024-03-29T22:00:00Z", "2024-04-01T11:00:00Z"),
    (BERLIN, "2024-10-25T00:00:10Z", "2024-10-28T23:59:59Z"),
    (UTC, "2024-02-26T00:00:00Z", "2024-03-04T00:00:00Z"),
]
SCHEDULES = [
    "*/5 * * * *",
    "0 * * * *",
    "30 2 * * *",
    "0 1 * * *",
    "30 1 * * *",
    "*/7 1-3 * * *",
    "15,45 0-5 * * *",
    "0 0 29 2 *",
    "0 9 * * 1-5",
    "@every 1h30m",
]


def unix(text: str) -> int:
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def walk(schedule: str, base: int, until: int, zone: Zone) -> list[int]:
    """Every tick robfig reaches from ``base`` up to ``until``, one ``Next`` at a time."""
    sched = parse_standard(schedule)
    ticks: list[int] = []
    t: int | None = base
    while (t := next_tick_unix(sched, t, zone)) is not None and t <= until:
        ticks.append(t)
    return ticks


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize(("zone", "start", "end"), SPANS)
def test_latest_and_count_match_robfigs_walk(
    schedule: str, zone: Zone, start: str, end: str
) -> None:
    base, until = unix(start), unix(end)
    ticks = walk(schedule, base, until, zone)
    sched = parse_standard(schedule)
    assert count_ticks(sched, base, until, zone) == len(ticks)
    assert latest_tick_unix(sched, base, until + 0.5, zone) == (ticks[-1] if ticks else None)


def test_a_week_of_every_five_minutes() -> None:
    sched = parse_standard("*/5 * * * *")
    now = T0 + 7 * 86400 + 60
    latest = latest_tick_unix(sched, T0, now, UTC)
    assert latest == T0 + 7 * 86400
    assert count_ticks(sched, T0, now, UTC) == 7 * 288


def test_years_of_every_minute_need_no_walk() -> None:
    # 525,600 ticks in 2025 (no leap day); walking them would take minutes.
    sched = parse_standard("* * * * *")
    start, end = unix("2025-01-01T00:00:00Z"), unix("2026-01-01T00:00:00Z")
    assert count_ticks(sched, start - 1, end - 1, UTC) == 525_600
    assert latest_tick_unix(sched, start, end + 30.5, UTC) == end
    # New York's 2025: the same number of minutes, shifted (one hour skipped in
    # March, one repeated in November).
    ny_start = unix("2025-01-01T05:00:00Z")
    assert count_ticks(sched, ny_start - 1, ny_start + 365 * 86400 - 1, NY) == 525_600


def test_nothing_due_is_none_and_zero() -> None:
    sched = parse_standard("0 0 * * *")
    assert latest_tick_unix(sched, T0, T0 + 3600, UTC) is None
    assert count_ticks(sched, T0, T0 + 3600, UTC) == 0
    assert count_ticks(sched, T0, T0, UTC) == 0
