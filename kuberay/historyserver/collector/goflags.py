"""Go-style value parsing for flags and env vars (``time.ParseDuration``, ``strconv.ParseBool``),
so values written for KubeRay's Go collector mean the same here."""

from __future__ import annotations

import re

_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,
    "\u03bcs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration (``"5m"``, ``"1h30m"``, ``"300ms"``, ``"1.5h"``, ``"0"``).
    Raises ``ValueError`` for anything Go's ``time.ParseDuration`` rejects."""
    s = text.strip()
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f"invalid duration {text!r}")
    pos, total = 0, 0.0
    while pos < len(s):
        m = _PART.match(s, pos)
        if m is None:
            raise ValueError(f"invalid duration {text!r}: use e.g. 30s, 5m, 1h30m")
        total += float(m[1]) * _UNITS[m[2]]
        pos = m.end()
    return sign * total


def parse_bool(text: str) -> bool:
    """Go's ``strconv.ParseBool``: 1/t/T/TRUE/true/True and 0/f/F/FALSE/false/False."""
    s = text.strip()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise ValueError(f"invalid boolean {text!r}: use true or false")


def format_duration(seconds: float) -> str:
    """A short Go-like rendering of ``seconds`` for log lines (``"5m0s"`` style is not
    needed; ``"300s"`` reads as well)."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{seconds:g}s"
