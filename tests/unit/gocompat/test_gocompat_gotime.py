"""Go's ``time`` text: RFC 3339 timestamps read and written as the apiserver and Go's
``time.Parse(RFC3339Nano)`` do, ``time.Time.String`` and ``time.Duration.String`` as KubeRay's
messages print them."""

from __future__ import annotations

import datetime as dt

import pytest

from kuberay.gocompat.gotime import (
    format_go_date_time,
    format_go_duration,
    format_rfc3339,
    format_rfc3339_micro,
    go_duration_of_seconds,
    go_time_string,
    parse_rfc3339,
    parse_rfc3339_or_none,
    rfc3339_nanos,
)

UTC = dt.UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-02T03:04:05Z", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05.250Z", dt.datetime(2024, 1, 2, 3, 4, 5, 250000, tzinfo=UTC)),
        ("2024-01-02T05:04:05+02:00", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),  # no offset: UTC
    ],
)
def test_api_timestamps_read_as_aware_datetimes(text: str, expected: dt.datetime) -> None:
    parsed = parse_rfc3339(text)
    assert parsed == expected and parsed.tzinfo is not None
    assert parse_rfc3339_or_none(text) == expected


@pytest.mark.parametrize("text", [None, "", "yesterday", 42, "2024-13-01T00:00:00Z"])
def test_unset_or_malformed_times_read_as_none(text: object) -> None:
    assert parse_rfc3339_or_none(text) is None


def test_malformed_time_raises_for_the_strict_reader() -> None:
    with pytest.raises(ValueError):
        parse_rfc3339("2024-01-02 at noon")


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("2024-01-02T03:04:05Z", 1704164645 * 10**9),
        ("2024-01-02T03:04:05.629449481Z", 1704164645 * 10**9 + 629449481),
        ("2024-01-02T03:04:05.5Z", 1704164645 * 10**9 + 500_000_000),
        ("2024-01-02T08:34:05+05:30", 1704164645 * 10**9),
        ("2024-01-01T23:04:05-04:00", 1704164645 * 10**9),
    ],
)
def test_rfc3339_nano_to_unix_nanoseconds(text: str, nanos: int) -> None:
    assert rfc3339_nanos(text) == nanos


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-02T03:04:05",  # Go's RFC3339 requires the zone
        "2024-01-02T03:04:05.1234567891Z",  # ten fraction digits
        "2024-02-30T03:04:05Z",  # no such day
        "2024-01-02T03:04:60Z",
        "2024-01-02T03:04:05+24:00",
        "2024-01-02T03:04:05+01:60",
        "2024-01-02 03:04:05Z",
        "2024-01-02T03:04:05z",
    ],
)
def test_rfc3339_nano_rejects_what_go_rejects(text: str) -> None:
    assert rfc3339_nanos(text) is None


def test_wire_formats_of_metav1_times() -> None:
    when = dt.datetime(2024, 1, 2, 5, 4, 5, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert format_rfc3339(when) == "2024-01-02T03:04:05Z"
    assert format_rfc3339_micro(when) == "2024-01-02T03:04:05.123456Z"


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        (None, "0001-01-01 00:00:00 +0000 UTC"),
        ("", "0001-01-01 00:00:00 +0000 UTC"),
        ("2024-01-02T03:04:05Z", "2024-01-02 03:04:05 +0000 UTC"),
        ("2024-01-02T03:04:05.500Z", "2024-01-02 03:04:05.5 +0000 UTC"),
        ("2024-01-02T05:04:05+02:00", "2024-01-02 03:04:05 +0000 UTC"),
        ("not a time", "not a time"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "2024-01-02 03:04:05 +0000 UTC"),
    ],
)
def test_go_time_string(text: dt.datetime | str | None, printed: str) -> None:
    assert go_time_string(text) == printed


def test_go_date_time_layout() -> None:
    when = dt.datetime(2024, 1, 2, 5, 4, 5, 999, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert format_go_date_time(when) == "2024-01-02 03:04:05"


@pytest.mark.parametrize(
    ("nanos", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1_500, "1.5µs"),
        (1_500_000, "1.5ms"),
        (500_000_000, "500ms"),
        (5 * 10**9, "5s"),
        (45 * 10**9, "45s"),
        (2_500_000_000, "2.5s"),
        (90 * 10**9, "1m30s"),
        (303 * 10**9, "5m3s"),
        (3600 * 10**9, "1h0m0s"),
        (3607 * 10**9 + 250_000_000, "1h0m7.25s"),
        (-3 * 10**9, "-3s"),
        (2**63 - 1, "2562047h47m16.854775807s"),
    ],
)
def test_duration_string_as_go_prints_it(nanos: int, text: str) -> None:
    assert format_go_duration(nanos) == text


@pytest.mark.parametrize(
    ("seconds", "text"), [(5, "5s"), (90, "1m30s"), (2.5, "2.5s"), (12.345678, "12.345678s")]
)
def test_duration_of_float_seconds(seconds: float, text: str) -> None:
    assert go_duration_of_seconds(seconds) == text
