"""Go/Kubernetes helper semantics: name validators, versions, durations, cron, time zones."""

from __future__ import annotations

import pytest

from kuberay.api.v1.schedule import load_go_location, parse_standard
from kuberay.gocompat.go_text import go_quote
from kuberay.gocompat.goutil import (
    go_atoi,
    go_duration_seconds,
    go_parse_bool,
    go_str_list,
    is_dns1035_label,
    is_dns1123_label,
    is_qualified_name,
    is_valid_label_value,
    parse_go_duration,
)
from kuberay.gocompat.versions import parse_generic


@pytest.mark.parametrize("name", ["a", "my-name", "abc-123", "a" * 63])
def test_dns1035_valid(name: str) -> None:
    assert is_dns1035_label(name) == []


@pytest.mark.parametrize("name", ["1abc", "My-Name", "my.name", "-a", "a-", "", "a\n"])
def test_dns1035_invalid(name: str) -> None:
    assert is_dns1035_label(name) == [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_dns_length_limits() -> None:
    assert is_dns1035_label("a" * 64)[0] == "must be no more than 63 characters"
    assert is_dns1123_label("1" * 63) == []
    assert len(is_dns1123_label("Big_Group")) == 1


@pytest.mark.parametrize("key", ["a", "A.b-c_d", "example.com/name", "ray.io/market-type"])
def test_qualified_names(key: str) -> None:
    assert is_qualified_name(key) == []


def test_qualified_name_errors() -> None:
    assert is_qualified_name("/name") == ["prefix part must be non-empty"]
    assert is_qualified_name("a/b/c")[0].startswith("a qualified name must consist of")
    assert is_qualified_name("Bad_Prefix/name")[0].startswith(
        "prefix part a lowercase RFC 1123 subdomain"
    )
    assert is_qualified_name("x" * 64)[0] == "name part must be no more than 63 characters"
    assert is_qualified_name("")[0] == "name part must be non-empty"


def test_label_values() -> None:
    assert is_valid_label_value("") == []
    assert is_valid_label_value("my_value.1") == []
    assert len(is_valid_label_value("bad value")) == 1
    assert is_valid_label_value("v" * 64)[0] == "must be no more than 63 characters"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2.52.0", (2, 52, 0)), ("v2.9", (2, 9)), (" 2.56.0rc1", (2, 56, 0)), ("0.1", (0, 1))],
)
def test_generic_versions(text: str, expected: tuple[int, ...]) -> None:
    assert parse_generic(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", 'could not parse "abc" as version'),
        ("2", 'illegal version string "2"'),
        ("02.1", 'illegal zero-prefixed version component "02" in "02.1"'),
    ],
)
def test_generic_version_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_generic(text)


def test_version_comparison() -> None:
    assert parse_generic("2.52").compare((2, 52, 0)) == 0
    assert parse_generic("2.51.9").less_than((2, 52, 0))
    assert not parse_generic("2.52.0.1").less_than((2, 52, 0))
    assert parse_generic("2.52.0.1").compare((2, 52, 0)) == 1


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("0", 0),
        ("5m", 300 * 10**9),
        ("1h30m", 5400 * 10**9),
        ("-5m", -300 * 10**9),
        ("+1.5s", 1_500_000_000),
        (".5ms", 500_000),
        ("1µs", 1000),
        ("2h45m30.5s", (2 * 3600 + 45 * 60 + 30) * 10**9 + 500_000_000),
    ],
)
def test_go_durations(text: str, nanoseconds: int) -> None:
    assert parse_go_duration(text) == nanoseconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5", 'time: missing unit in duration "5"'),
        ("abc", 'time: invalid duration "abc"'),
        ("5x", 'time: unknown unit "x" in duration "5x"'),
        ("", 'time: invalid duration ""'),
        (".s", 'time: invalid duration ".s"'),
    ],
)
def test_go_duration_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_go_duration(text)


def test_go_duration_in_seconds() -> None:
    assert go_duration_seconds("1m30s") == 90.0
    assert go_duration_seconds("300ms") == 0.3
    with pytest.raises(ValueError, match="missing unit"):
        go_duration_seconds("30")


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", True), ("t", True), ("TRUE", True), ("True", True), ("0", False), ("F", False)],
)
def test_go_parse_bool(text: str, value: bool) -> None:
    assert go_parse_bool(text) is value


@pytest.mark.parametrize("text", ["yes", "tRUE", " true", "", "2"])
def test_go_parse_bool_rejects_other_spellings(text: str) -> None:
    with pytest.raises(ValueError, match="invalid boolean"):
        go_parse_bool(text)


def test_go_atoi_and_formatting() -> None:
    assert go_atoi("+42") == 42
    assert go_atoi("-3") == -3
    with pytest.raises(ValueError, match="invalid syntax"):
        go_atoi("4.2")
    with pytest.raises(ValueError, match="value out of range"):
        go_atoi("9" * 30)
    assert go_quote('a"b\n\x01é') == '"a\\"b\\n\\x01é"'
    assert go_str_list(["a", "b"]) == "[a b]"


@pytest.mark.parametrize(
    ("spec", "expression"),
    [
        ("*/5 * * * *", "*/5 * * * *"),
        ("0 9 * * mon-fri", "0 9 * * 1-5"),
        ("0 0 ? JAN,jun *", "0 0 * 1,6 *"),
        ("5/10 * * * *", "5-59/10 * * * *"),
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
        ("  30   2 * * *  ", "30 2 * * *"),
    ],
)
def test_cron_accepts_like_robfig(spec: str, expression: str) -> None:
    schedule = parse_standard(spec)
    assert schedule.expression == expression
    assert schedule.cron().to_string()  # cron_converter accepts the normalized form


def test_cron_every() -> None:
    schedule = parse_standard("@every 1h30m")
    assert schedule.expression is None
    assert schedule.every_ns == 5400 * 10**9
    assert parse_standard("@every 10ms").every_ns == 10**9  # rounded up to one second
    with pytest.raises(ValueError, match="@every"):
        schedule.cron()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty spec string"),
        ("invalid", "expected exactly 5 fields, found 1: [invalid]"),
        ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("0 0 * * 7", "end of range (7) above maximum (6): 7"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("*/2/3 * * * *", "too many slashes: */2/3"),
        ("L * * * *", 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax'),
        ("@foo", "unrecognized descriptor: @foo"),
        ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
    ],
)
def test_cron_rejects_like_robfig(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_standard(spec)
    assert str(info.value) == message


def test_time_zones() -> None:
    assert load_go_location("Asia/Taipei") is not None
    assert load_go_location("Local") is None
    assert str(load_go_location("UTC")) == "UTC"
    with pytest.raises(ValueError, match="unknown time zone Mars/Base"):
        load_go_location("Mars/Base")
    with pytest.raises(ValueError, match="time: invalid location name"):
        load_go_location("../etc/passwd")
