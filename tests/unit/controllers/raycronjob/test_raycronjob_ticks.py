"""When a RayCronJob fires: robfig/cron's ``Next`` as KubeRay calls it, including time
zones, DST transitions, descriptors and ``@every``.

Expected instants are written out by hand (several are robfig's own test vectors,
rewritten for five-field schedules), never computed with the code under test.
"""

from __future__ import annotations

import datetime as dt
import os
import time
import zoneinfo
from collections.abc import Iterator

import pytest

from kuberay.api.v1.schedule import parse_standard
from kuberay.controllers.raycronjob.gotime import go_date
from kuberay.controllers.raycronjob.ticks import next_tick

NY = "America/New_York"
BERLIN = "Europe/Berlin"


def at(text: str) -> dt.datetime:
    """An RFC 3339 instant with its offset, e.g. ``2012-03-11T01:00:00-05:00``."""
    return dt.datetime.fromisoformat(text)


def nxt(schedule: str, after: str, zone: str | None = "UTC") -> dt.datetime | None:
    tz = None if zone is None else zoneinfo.ZoneInfo(zone)
    return next_tick(parse_standard(schedule), at(after), tz)


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        # KubeRay's baseline "C" (CJ-01 .. CJ-03): */5 from creation / lastScheduleTime.
        ("*/5 * * * *", "2024-01-01T00:00:00Z", "2024-01-01T00:05:00Z"),
        ("*/5 * * * *", "2024-01-01T00:00:10Z", "2024-01-01T00:05:00Z"),
        ("*/5 * * * *", "2024-01-01T00:05:00Z", "2024-01-01T00:10:00Z"),
        ("*/5 * * * *", "2024-01-01T00:04:59.999Z", "2024-01-01T00:05:00Z"),
        ("* * * * *", "2024-01-01T00:00:59Z", "2024-01-01T00:01:00Z"),
        # robfig: wrap around hours, days, months, years; leap day.
        ("0/15 * * * *", "2012-07-09T14:45:00Z", "2012-07-09T15:00:00Z"),
        ("20-35/15 * * * *", "2012-07-09T15:45:00Z", "2012-07-09T16:20:00Z"),
        ("*/15 * * * *", "2012-07-09T23:46:00Z", "2012-07-10T00:00:00Z"),
        ("0 0 9 Apr-Oct ?", "2012-07-09T23:35:00Z", "2012-08-09T00:00:00Z"),
        ("0 0 * Feb Mon", "2012-07-09T23:35:00Z", "2013-02-04T00:00:00Z"),
        ("0 0 * Feb Mon/2", "2012-07-09T23:35:00Z", "2013-02-01T00:00:00Z"),
        ("* * * * *", "2012-12-31T23:59:45Z", "2013-01-01T00:00:00Z"),
        ("0 0 29 Feb ?", "2012-07-09T23:35:00Z", "2016-02-29T00:00:00Z"),
        # Day of month and day of week both restricted: either matches ...
        ("0 0 1,15 * Sun", "2012-07-14T12:00:00Z", "2012-07-15T00:00:00Z"),
        ("0 0 */5 Apr,Aug,Oct Mon", "2012-07-09T23:35:00Z", "2012-08-01T00:00:00Z"),
        ("0 0 1 * mon", "2024-01-01T01:00:00Z", "2024-01-08T00:00:00Z"),
        # ... one of them a bare "*": both must.
        ("0 0 * * Mon", "2012-07-15T12:00:00Z", "2012-07-16T00:00:00Z"),
        ("0 0 1,15 * *", "2012-07-02T00:00:00Z", "2012-07-15T00:00:00Z"),
        # Descriptors.
        ("@hourly", "2012-07-09T15:04:00Z", "2012-07-09T16:00:00Z"),
        ("@daily", "2012-07-09T15:00:00Z", "2012-07-10T00:00:00Z"),
        ("@midnight", "2012-07-09T00:00:00Z", "2012-07-10T00:00:00Z"),
        ("@weekly", "2012-07-09T00:00:00Z", "2012-07-15T00:00:00Z"),
        ("@monthly", "2012-07-09T00:00:00Z", "2012-08-01T00:00:00Z"),
        ("@yearly", "2012-07-09T00:00:00Z", "2013-01-01T00:00:00Z"),
        ("@annually", "2012-12-31T23:59:59Z", "2013-01-01T00:00:00Z"),
    ],
)
def test_next_tick_in_utc(schedule: str, after: str, expected: str) -> None:
    assert nxt(schedule, after) == at(expected)


@pytest.mark.parametrize("schedule", ["0 0 30 Feb ?", "0 0 31 Apr *", "0 0 31 2,4,6,9,11 *"])
def test_a_schedule_that_never_fires_has_no_next_tick(schedule: str) -> None:
    assert nxt(schedule, "2012-07-09T23:35:00Z") is None


def test_time_zone_shifts_the_tick_but_not_the_instant_format() -> None:
    # CJ-07: 09:00 in Taipei is 01:00 UTC.
    assert nxt("0 9 * * *", "2024-01-01T00:00:00Z", "Asia/Taipei") == at("2024-01-01T01:00:00Z")
    assert nxt("0 9 * * *", "2024-01-01T01:00:00Z", "Asia/Taipei") == at("2024-01-02T01:00:00Z")
    # The sample: 21:45 Taiwan time is 13:45 UTC.
    tick = nxt("45 21 * * *", "2024-06-01T14:00:00Z", "Asia/Taipei")
    assert tick == at("2024-06-02T13:45:00Z")
    assert tick is not None and tick.utcoffset() == dt.timedelta(0)


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        # Spring forward (02:00 EST -> 03:00 EDT on 2012-03-11), robfig's vectors.
        ("30 2 11 Mar ?", "2012-03-11T00:00:00-05:00", "2013-03-11T02:30:00-04:00"),
        ("0 * * * ?", "2012-03-11T00:00:00-05:00", "2012-03-11T01:00:00-05:00"),
        ("0 * * * ?", "2012-03-11T01:00:00-05:00", "2012-03-11T03:00:00-04:00"),
        ("0 * * * ?", "2012-03-11T03:00:00-04:00", "2012-03-11T04:00:00-04:00"),
        ("0 1 * * ?", "2012-03-11T00:00:00-05:00", "2012-03-11T01:00:00-05:00"),
        ("0 1 * * ?", "2012-03-11T01:00:00-05:00", "2012-03-12T01:00:00-04:00"),
        ("0 2 * * ?", "2012-03-11T00:00:00-05:00", "2012-03-12T02:00:00-04:00"),  # skipped
        ("30 2 * * *", "2024-03-09T12:00:00Z", "2024-03-11T02:30:00-04:00"),  # skipped
        # Fall back (02:00 EDT -> 01:00 EST on 2012-11-04).
        ("30 2 04 Nov ?", "2012-11-04T00:00:00-04:00", "2012-11-04T02:30:00-05:00"),
        ("30 1 04 Nov ?", "2012-11-04T01:45:00-04:00", "2012-11-04T01:30:00-05:00"),
        ("0 * * * ?", "2012-11-04T00:00:00-04:00", "2012-11-04T01:00:00-04:00"),
        ("0 * * * ?", "2012-11-04T01:00:00-04:00", "2012-11-04T01:00:00-05:00"),
        ("0 * * * ?", "2012-11-04T01:00:00-05:00", "2012-11-04T02:00:00-05:00"),
        ("0 1 * * ?", "2012-11-04T00:00:00-04:00", "2012-11-04T01:00:00-04:00"),  # runs ...
        ("0 1 * * ?", "2012-11-04T01:00:00-04:00", "2012-11-04T01:00:00-05:00"),  # ... twice
        ("0 1 * * ?", "2012-11-04T01:00:00-05:00", "2012-11-05T01:00:00-05:00"),
        ("0 2 * * ?", "2012-11-04T00:00:00-04:00", "2012-11-04T02:00:00-05:00"),
        ("0 3 * * ?", "2012-11-04T00:00:00-04:00", "2012-11-04T03:00:00-05:00"),
        ("*/30 * * * *", "2024-11-03T01:30:00-04:00", "2024-11-03T01:00:00-05:00"),
    ],
)
def test_dst_in_new_york(schedule: str, after: str, expected: str) -> None:
    assert nxt(schedule, after, NY) == at(expected)


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        # Spring forward: 02:00 CET -> 03:00 CEST on 2024-03-31; 02:30 does not exist.
        ("30 2 * * *", "2024-03-30T12:00:00Z", "2024-04-01T02:30:00+02:00"),
        ("0 * * * *", "2024-03-31T01:00:00+01:00", "2024-03-31T03:00:00+02:00"),
        ("0 3 * * *", "2024-03-31T00:00:00+01:00", "2024-03-31T03:00:00+02:00"),
        # Fall back: 03:00 CEST -> 02:00 CET on 2024-10-27; 02:30 happens twice.
        ("30 2 * * *", "2024-10-26T12:00:00Z", "2024-10-27T02:30:00+02:00"),
        ("30 2 * * *", "2024-10-27T02:30:00+02:00", "2024-10-27T02:30:00+01:00"),
        ("30 2 * * *", "2024-10-27T02:30:00+01:00", "2024-10-28T02:30:00+01:00"),
        ("0 * * * *", "2024-10-27T02:00:00+02:00", "2024-10-27T02:00:00+01:00"),
        ("@daily", "2024-10-26T12:00:00Z", "2024-10-27T00:00:00+02:00"),
        ("@daily", "2024-10-27T00:00:00+02:00", "2024-10-28T00:00:00+01:00"),
    ],
)
def test_dst_in_berlin(schedule: str, after: str, expected: str) -> None:
    assert nxt(schedule, after, BERLIN) == at(expected)


def test_a_day_without_midnight() -> None:
    # Sao Paulo, 2018-11-04: 00:00 -03 jumped to 01:00 -02, so that day has no 00:00.
    sao_paulo = "America/Sao_Paulo"
    # A daily midnight job skips it (robfig steps hour by hour past the gap) ...
    assert nxt("0 0 * * *", "2018-11-03T12:00:00-03:00", sao_paulo) == at(
        "2018-11-05T00:00:00-02:00"
    )
    # ... and the day search, which lands on 23:00 of the day before, moves forward to
    # the day's first hour, so a 01:00 job on exactly that date still fires.
    assert nxt("0 1 4 11 *", "2018-11-03T12:00:00-03:00", sao_paulo) == at(
        "2018-11-04T01:00:00-02:00"
    )


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        ("@every 90s", "2024-01-01T00:00:00.5Z", "2024-01-01T00:01:30Z"),
        ("@every 1h30m", "2024-01-01T00:00:10Z", "2024-01-01T01:30:10Z"),
        ("@every 1500ms", "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"),  # whole seconds
        ("@every 10ms", "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"),  # at least 1 s
    ],
)
def test_every_adds_whole_seconds_to_the_truncated_base(
    schedule: str, after: str, expected: str
) -> None:
    assert nxt(schedule, after) == at(expected)
    # A time zone changes nothing for a fixed period.
    assert nxt(schedule, after, NY) == at(expected)


@pytest.fixture
def local_zone_berlin() -> Iterator[None]:
    saved = os.environ.get("TZ")
    os.environ["TZ"] = BERLIN
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()


@pytest.mark.usefixtures("local_zone_berlin")
def test_no_time_zone_means_the_operators_local_zone() -> None:
    assert nxt("0 9 * * *", "2024-01-01T00:00:00Z", None) == at("2024-01-01T09:00:00+01:00")
    assert nxt("30 2 * * *", "2024-03-30T12:00:00Z", None) == at("2024-04-01T02:30:00+02:00")


def test_go_date_resolves_gaps_and_overlaps_as_go_does() -> None:
    ny, berlin, london = (zoneinfo.ZoneInfo(z) for z in (NY, BERLIN, "Europe/London"))

    def utc(unix: int) -> str:
        return dt.datetime.fromtimestamp(unix, dt.UTC).strftime("%H:%M")

    # A wall time in a gap: west of UTC Go applies the offset after the jump, east of
    # it the offset before; London's winter offset is 0, so the time is read as UTC.
    assert utc(go_date(2024, 3, 10, 2, 30, 0, ny)) == "06:30"
    assert utc(go_date(2024, 3, 31, 2, 30, 0, berlin)) == "01:30"
    assert utc(go_date(2024, 3, 31, 1, 30, 0, london)) == "01:30"
    # A repeated wall time: west of UTC the first occurrence, east of it (and where the
    # later offset is 0) the second.
    assert utc(go_date(2024, 11, 3, 1, 30, 0, ny)) == "05:30"
    assert utc(go_date(2024, 10, 27, 2, 30, 0, berlin)) == "01:30"
    assert utc(go_date(2024, 10, 27, 1, 30, 0, london)) == "01:30"
    # Out-of-range fields roll over.
    assert go_date(2023, 13, 32, 0, 0, 0, zoneinfo.ZoneInfo("UTC")) == int(
        at("2024-02-01T00:00:00Z").timestamp()
    )
