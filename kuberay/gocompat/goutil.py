"""Go/Kubernetes helper semantics KubeRay's validation relies on, with the same messages.

* Kubernetes name/label validators (``k8s.io/apimachinery/pkg/util/validation``);
* ``version.ParseGeneric`` (``k8s.io/apimachinery/pkg/util/version``);
* Go ``time.ParseDuration`` and ``strconv.Atoi``;
* Go's ``%q`` and ``%v`` renderings used inside error messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "GoVersion",
    "go_atoi",
    "go_quote",
    "go_str_list",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "parse_generic_version",
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
def go_quote(value: str) -> str:
    """Go's ``%q`` of a string (printable characters kept, the rest escaped)."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\a":
            out.append("\\a")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\v":
            out.append("\\v")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable():
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_str_list(values: Sequence[str]) -> str:
    """Go's ``%v`` of a ``[]string``: ``[a b c]``."""
    return "[" + " ".join(values) + "]"


# --- version.ParseGeneric -------------------------------------------------------------------
_VERSION_RE = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$", re.DOTALL)


class GoVersion(tuple[int, ...]):
    """A generic (dotted numeric) version; compares like ``version.Version`` does."""

    __slots__ = ()

    def compare(self, other: Sequence[int]) -> int:
        """-1, 0 or 1; missing trailing components count as zeros."""
        for a, b in zip(self, other, strict=False):
            if a != b:
                return -1 if a < b else 1
        if len(other) < len(self) and any(self[len(other) :]):
            return 1
        if len(self) < len(other) and any(other[len(self) :]):
            return -1
        return 0

    def less_than(self, other: Sequence[int]) -> bool:
        """``v.LessThan(other)``."""
        return self.compare(other) < 0


def parse_generic_version(value: str) -> GoVersion:
    """``version.ParseGeneric``: at least two numeric components, any suffix ignored.

    Raises ``ValueError`` with Go's message on failure.
    """
    match = _VERSION_RE.match(value)
    if match is None:
        raise ValueError(f"could not parse {go_quote(value)} as version")
    components = match.group(1).split(".")
    if len(components) < 2:
        raise ValueError(f"illegal version string {go_quote(value)}")
    numbers: list[int] = []
    for i, comp in enumerate(components):
        if i == 0 and comp.startswith("0") and comp != "0":
            raise ValueError(
                f"illegal zero-prefixed version component {go_quote(comp)} in {go_quote(value)}"
            )
        number = int(comp)
        if number >= 2**64:
            raise ValueError(
                f"illegal non-numeric version component {go_quote(comp)} in {go_quote(value)}: "
                f"strconv.ParseUint: parsing {go_quote(comp)}: value out of range"
            )
        numbers.append(number)
    return GoVersion(numbers)


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


_ATOI_RE = re.compile(r"^[+-]?[0-9]+$")


def go_atoi(value: str) -> int:
    """Go ``strconv.Atoi`` (64-bit). Raises ``ValueError`` on syntax or range errors."""
    if not _ATOI_RE.fullmatch(value):
        raise ValueError(f"strconv.Atoi: parsing {go_quote(value)}: invalid syntax")
    number = int(value)
    if not -(2**63) <= number < 2**63:
        raise ValueError(f"strconv.Atoi: parsing {go_quote(value)}: value out of range")
    return number
