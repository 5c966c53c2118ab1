"""RayCronJob schedules and time zones, accepted exactly as KubeRay accepts them.

KubeRay parses ``spec.schedule`` with robfig/cron's ``ParseStandard``: five fields (minute,
hour, day of month, month, day of week; names such as ``jan``/``mon`` allowed, ``?`` equal to
``*``, ``N/step`` meaning ``N-max/step``) or a descriptor (``@yearly``, ``@annually``,
``@monthly``, ``@weekly``, ``@daily``, ``@midnight``, ``@hourly``, ``@every <duration>``).
:func:`parse_standard` applies that grammar (same bounds, same error texts) and hands the
normalized numeric expression to :mod:`cron_converter`, whose :class:`~cron_converter.Cron`
object is returned for computing fire times. ``@every`` schedules carry a period instead.
"""

from __future__ import annotations

import zoneinfo
from datetime import tzinfo

import attrs
from cron_converter import Cron

from kuberay.gocompat.goutil import go_atoi, go_str_list, parse_go_duration

__all__ = ["CronSchedule", "load_go_location", "parse_standard"]

_MONTH_NAMES = {
    name: i + 1
    for i, name in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DOW_NAMES = {name: i for i, name in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}


@attrs.frozen
class _Bounds:
    min: int
    max: int
    names: dict[str, int] | None = None


_FIELDS = (
    _Bounds(0, 59),  # minute
    _Bounds(0, 23),  # hour
    _Bounds(1, 31),  # day of month
    _Bounds(1, 12, _MONTH_NAMES),  # month
    _Bounds(0, 6, _DOW_NAMES),  # day of week
)

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_SECOND_NS = 1_000_000_000


@attrs.frozen
class CronSchedule:
    """A parsed schedule: either a 5-field ``cron`` expression or an ``@every`` period."""

    spec: str
    #: Normalized numeric 5-field expression (``None`` for ``@every``).
    expression: str | None
    #: ``@every`` period in nanoseconds (robfig rounds anything below 1 s up to 1 s).
    every_ns: int | None

    def cron(self) -> Cron:
        """The :class:`cron_converter.Cron` for a 5-field schedule."""
        if self.expression is None:
            raise ValueError(f"{self.spec!r} is an @every schedule, not a cron expression")
        return Cron(self.expression)


def _must_parse_int(expr: str) -> int:
    try:
        number = go_atoi(expr)
    except ValueError as exc:
        raise ValueError(f"failed to parse int from {expr}: {exc}") from None
    if number < 0:
        raise ValueError(f"negative number ({number}) not allowed: {expr}")
    return number


def _parse_int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _must_parse_int(expr)


def _normalize_range(expr: str, bounds: _Bounds) -> str:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    star = low_and_high[0] in ("*", "?")
    if star:
        start, end = bounds.min, bounds.max
    else:
        start = _parse_int_or_name(low_and_high[0], bounds.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _parse_int_or_name(low_and_high[1], bounds.names)
        else:
            raise ValueError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:
            end = bounds.max
    else:
        raise ValueError(f"too many slashes: {expr}")
    if start < bounds.min:
        raise ValueError(f"beginning of range ({start}) below minimum ({bounds.min}): {expr}")
    if end > bounds.max:
        raise ValueError(f"end of range ({end}) above maximum ({bounds.max}): {expr}")
    if start > end:
        raise ValueError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ValueError(f"step of range should be a positive number: {expr}")
    text = "*" if star else (str(start) if start == end else f"{start}-{end}")
    return text if step == 1 else f"{text}/{step}"


def _normalize_field(field: str, bounds: _Bounds) -> str:
    parts = [p for p in field.split(",") if p]
    return ",".join(_normalize_range(p, bounds) for p in parts)


def parse_standard(spec: str) -> CronSchedule:
    """Parse like robfig/cron ``ParseStandard``; ``ValueError`` carries robfig's message."""
    if not spec:
        raise ValueError("empty spec string")
    if spec.startswith("@"):
        if spec in _DESCRIPTORS:
            expression = _DESCRIPTORS[spec]
            return CronSchedule(spec=spec, expression=expression, every_ns=None)
        if spec.startswith("@every "):
            try:
                period = parse_go_duration(spec[len("@every ") :])
            except ValueError as exc:
                raise ValueError(f"failed to parse duration {spec}: {exc}") from None
            return CronSchedule(spec=spec, expression=None, every_ns=max(period, _SECOND_NS))
        raise ValueError(f"unrecognized descriptor: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise ValueError(f"expected exactly 5 fields, found {len(fields)}: {go_str_list(fields)}")
    normalized = [_normalize_field(f, b) for f, b in zip(fields, _FIELDS, strict=True)]
    expression = " ".join(normalized)
    try:
        Cron(expression)
    except ValueError as exc:
        # Only reachable for a field made of commas alone (robfig accepts it as "never").
        raise ValueError(str(exc)) from None
    return CronSchedule(spec=spec, expression=expression, every_ns=None)


def load_go_location(name: str) -> tzinfo | None:
    """Go ``time.LoadLocation``: ``""``/``UTC`` -> UTC, ``Local`` -> ``None`` (local time).

    Raises ``ValueError("unknown time zone <name>")`` (or Go's invalid-name message).
    """
    if name in ("", "UTC"):
        return zoneinfo.ZoneInfo("UTC")
    if name == "Local":
        return None
    if ".." in name or name[0] in "/\\":
        raise ValueError("time: invalid location name")
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"unknown time zone {name}") from None
