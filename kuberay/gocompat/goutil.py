"""Go/Kubernetes helper semantics KubeRay's validation relies on, with the same messages.

* Kubernetes name/label validators (``k8s.io/apimachinery/pkg/util/validation``);
* Go ``time.ParseDuration``, ``strconv.Atoi``, ``strconv.ParseInt`` and ``strconv.ParseBool``,
  and the kube-apiserver's reading of a boolean query parameter (``watch=``): the project's
  one home of each, nothing else parses these;
* Go's ``%v`` of a string list inside error messages (``%q`` is :func:`.go_text.go_quote`,
  ``version.ParseGeneric`` is :mod:`.versions`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .go_text import go_quote

__all__ = [
    "GoNumError",
    "go_atoi",
    "go_duration_seconds",
    "go_parse_bool",
    "go_parse_int",
    "go_str_list",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "k8s_query_bool",
    "parse_go_duration",
]

# --- Kubernetes validators ------------------------------------------------------------------
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character"
)
_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
_QUALIFIED_NAME_FMT = "(" + _QNAME_CHAR + _QNAME_EXT_CHAR + "*)?" + _QNAME_CHAR
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)

_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1035_LABEL_RE = re.compile(f"^{_DNS1035_LABEL_FMT}$")
_QUALIFIED_NAME_RE = re.compile(f"^{_QUALIFIED_NAME_FMT}$")
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    parts = [f"'{e}', " for e in examples]
    return f"{msg} (e.g. {' or '.join(parts)}regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def _fullmatch(pattern: re.Pattern[str], value: str) -> bool:
    # Go's regexp "$" does not match before a trailing newline; fullmatch mirrors that.
    return pattern.fullmatch(value) is not None


def is_dns1123_label(value: str) -> list[str]:
    """Errors of ``IsDNS1123Label`` (empty list when valid)."""
    errs: list[str] = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _fullmatch(_DNS1123_LABEL_RE, value):
        errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Errors of ``IsDNS1123Subdomain``."""
    errs: list[str] = []
    if len(value) > 253:
        errs.append(_max_len_error(253))
    if not _fullmatch(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """Errors of ``IsDNS1035Label``."""
    errs: list[str] = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _fullmatch(_DNS1035_LABEL_RE, value):
        errs.append(_regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """Errors of ``IsQualifiedName`` (label keys: optional DNS-subdomain prefix + name)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _fullmatch(_QUALIFIED_NAME_RE, name):
        errs.append(
            "name part "
            + _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """Errors of ``IsValidLabelValue``."""
    errs: list[str] = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _fullmatch(_LABEL_VALUE_RE, value):
        errs.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errs


# --- Go formatting --------------------------------------------------------------------------
def go_str_list(values: Sequence[str]) -> str:
    """Go's ``%v`` of a ``[]string``: ``[a b c]``."""
    return "[" + " ".join(values) + "]"


# --- time.ParseDuration / strconv.Atoi ------------------------------------------------------
_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5
    "μs": 1_000,  # U+03BC
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_MAX_DURATION = 2**63 - 1


def parse_go_duration(value: str) -> int:
    """Go ``time.ParseDuration``; returns nanoseconds. Raises ``ValueError`` like Go."""
    original = value
    quoted = go_quote(original)
    s = value
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f"time: invalid duration {quoted}")
    total = 0
    while s:
        if not (s[0] == "." or (s[0].isdigit() and s[0].isascii())):
            raise ValueError(f"time: invalid duration {quoted}")
        i = 0
        while i < len(s) and s[i].isascii() and s[i].isdigit():
            i += 1
        int_part = s[:i]
        s = s[i:]
        frac_part = ""
        if s.startswith("."):
            s = s[1:]
            j = 0
            while j < len(s) and s[j].isascii() and s[j].isdigit():
                j += 1
            frac_part = s[:j]
            s = s[j:]
        if not int_part and not frac_part:
            raise ValueError(f"time: invalid duration {quoted}")
        k = 0
        while k < len(s) and s[k] != "." and not (s[k].isascii() and s[k].isdigit()):
            k += 1
        unit = s[:k]
        s = s[k:]
        if not unit:
            raise ValueError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS_NS:
            raise ValueError(f"time: unknown unit {go_quote(unit)} in duration {quoted}")
        scale = _UNITS_NS[unit]
        whole = int(int_part) if int_part else 0
        amount = whole * scale
        if frac_part:
            amount += int(frac_part) * scale // (10 ** len(frac_part))
        if whole > _MAX_DURATION // scale or amount > _MAX_DURATION:
            raise ValueError(f"time: invalid duration {quoted}")
        total += amount
        if total > _MAX_DURATION + (1 if neg else 0):
            raise ValueError(f"time: invalid duration {quoted}")
    return -total if neg else total


def go_duration_seconds(value: str) -> float:
    """:func:`parse_go_duration` in seconds (``"1m30s"`` -> 90.0); ``ValueError`` like Go."""
    return parse_go_duration(value) / 1e9


_GO_INT = re.compile(r"[+-]?[0-9]+")


class GoNumError(ValueError):
    """``strconv.NumError``: ``problem`` is "invalid syntax" or "value out of range"."""

    def __init__(self, func: str, value: str, problem: str) -> None:
        super().__init__(f"strconv.{func}: parsing {go_quote(value)}: {problem}")
        self.problem = problem


def go_parse_int(value: str, bit_size: int = 64, *, func: str = "ParseInt") -> int:
    """Go ``strconv.ParseInt(value, 10, bit_size)``. Raises :class:`GoNumError`."""
    if not _GO_INT.fullmatch(value):
        raise GoNumError(func, value, "invalid syntax")
    number = int(value)
    if not -(2 ** (bit_size - 1)) <= number < 2 ** (bit_size - 1):
        raise GoNumError(func, value, "value out of range")
    return number


def go_atoi(value: str) -> int:
    """Go ``strconv.Atoi`` (64-bit). Raises :class:`GoNumError` on syntax or range errors."""
    return go_parse_int(value, 64, func="Atoi")


_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def go_parse_bool(value: str) -> bool:
    """Go ``strconv.ParseBool``: 1/t/T/TRUE/true/True and 0/f/F/FALSE/false/False (no
    surrounding space); ``ValueError`` naming the value otherwise."""
    if value in _GO_TRUE:
        return True
    if value in _GO_FALSE:
        return False
    raise ValueError(f"invalid boolean {value!r}: use true or false")


def k8s_query_bool(value: str | None) -> bool:
    """A boolean query parameter as the kube-apiserver reads it (apimachinery's
    ``Convert_Slice_string_To_bool``, e.g. ``?watch=``): absent (None) is false, ``0`` and
    ``false`` in any case are false, anything else -- the empty string and ``yes`` included --
    is true."""
    if value is None:
        return False
    return not (value == "0" or value.lower() == "false")
