"""Reproduce Go ``encoding/json`` output for a plain-dict Kubernetes object.

KubeRay hashes Go structs that it decoded from the API server, so the bytes it feeds to SHA-1
depend on the Go type layout, not on the JSON we received: fields come out in struct
declaration order, unknown keys vanish, absent fields without ``omitempty`` appear as their zero
value (``null``, ``""``, ``0``, ``false``, ``{}``), map keys are sorted, quantities are
re-canonicalised, and strings are escaped with Go's HTML-safe rules (``<`` -> ``\\u003c``).
:func:`marshal` walks a dict against the layout table in :mod:`.go_struct_schema` and emits the
same bytes.

Decoding follows the API machinery: ``null`` is the same as an absent key, a present (even
empty) object for a pointer field makes a non-nil pointer, and an empty list/map is "empty" for
``omitempty`` just like a missing one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import cache

from .go_struct_schema import GO_STRUCTS, OMITEMPTY, OMITZERO
from .gotime import format_rfc3339, parse_rfc3339
from .quantity import Quantity

__all__ = ["GoJSONError", "format_go_float", "go_string", "marshal", "marshal_value"]

_HEX = "0123456789abcdef"
_SHORT_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


class GoJSONError(ValueError):
    """The dict cannot be decoded into the Go type (Go would fail to unmarshal it)."""


def go_string(text: str) -> str:
    """Quote ``text`` exactly like Go ``json.Marshal`` (HTML-escaping on)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif code < 0x20 or ch in "<>&":
            out.append("\\u00" + _HEX[code >> 4] + _HEX[code & 0xF])
        elif ch in "\u2028\u2029":
            out.append("\\u202" + _HEX[code & 0xF])
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")  # a lone surrogate is invalid UTF-8 for Go
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def format_go_float(value: float) -> str:
    """Format a float64 like Go ``json.Marshal`` (shortest round-trip digits)."""
    if math.isnan(value) or math.isinf(value):
        raise GoJSONError(f"unsupported float value: {value!r}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    magnitude = abs(value)
    dec = Decimal(repr(value))
    if 1e-6 <= magnitude < 1e21:
        text = format(dec.normalize(), "f")
        return text
    sign, digits, exponent = dec.normalize().as_tuple()
    assert isinstance(exponent, int)
    digit_text = "".join(str(d) for d in digits)
    exp10 = exponent + len(digit_text) - 1
    mantissa = digit_text[0] + ("." + digit_text[1:] if len(digit_text) > 1 else "")
    exp_sign = "-" if exp10 < 0 else "+"
    exp_digits = f"{abs(exp10):02d}"
    if exp_sign == "-" and len(exp_digits) == 2 and exp_digits[0] == "0":
        exp_digits = exp_digits[1:]
    return f"{'-' if sign else ''}{mantissa}e{exp_sign}{exp_digits}"


def marshal_value(value: object) -> str:
    """Marshal an untyped JSON value (``map[string]any``-like, insertion order kept)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_go_float(value)
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, Mapping):
        items = ",".join(f"{go_string(str(k))}:{marshal_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, Sequence):
        return "[" + ",".join(marshal_value(v) for v in value) + "]"
    raise GoJSONError(f"cannot marshal {type(value).__name__}")


@cache
def _split(type_str: str) -> tuple[str, str]:
    head, _, rest = type_str.partition(":")
    return head, rest


def _is_empty(raw: object, type_str: str) -> bool:
    """Go ``isEmptyValue`` of the decoded value (``omitempty``)."""
    kind, _ = _split(type_str)
    if kind in ("struct", "quantity", "intorstring", "time"):
        return False
    if raw is None:
        return True
    if kind == "ptr" or kind == "custom":
        return False
    if kind in ("slice", "map"):
        return len(raw) == 0  # type: ignore[arg-type]
    if kind == "string":
        return raw == ""
    if kind == "bool":
        return not raw
    if kind == "int":
        return _to_int(raw) == 0
    raise GoJSONError(f"unknown Go type {type_str!r}")


def _is_zero(raw: object, type_str: str) -> bool:
    """Go ``omitzero`` test (``IsZero()`` for times, reflect zero value otherwise)."""
    kind, rest = _split(type_str)
    if raw is None:
        return True
    if kind == "time":
        return raw == ""
    if kind == "struct":
        if not isinstance(raw, Mapping):
            return True
        return all(_is_zero(raw.get(name), field_type) for name, field_type, _ in GO_STRUCTS[rest])
    if kind in ("slice", "map", "ptr", "custom"):
        return False
    return _is_empty(raw, type_str)


def _to_int(raw: object) -> int:
    if isinstance(raw, bool):
        raise GoJSONError(f"cannot decode {raw!r} as a Go integer")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    raise GoJSONError(f"cannot decode {raw!r} as a Go integer")


def _format_time(raw: object) -> str:
    if not isinstance(raw, str):
        raise GoJSONError(f"cannot decode {raw!r} as a time")
    try:
        parsed = parse_rfc3339(raw)
    except ValueError as err:
        raise GoJSONError(f"cannot decode {raw!r} as an RFC 3339 time") from err
    return '"' + format_rfc3339(parsed) + '"'


def _encode(raw: object, type_str: str, out: list[str]) -> None:
    kind, rest = _split(type_str)
    if kind == "ptr":
        if raw is None:
            out.append("null")
        else:
            _encode(raw, rest, out)
        return
    if kind == "struct":
        _encode_struct(raw, rest, out)
        return
    if kind == "string":
        if raw is None:
            out.append('""')
        elif isinstance(raw, str):
            out.append(go_string(raw))
        else:
            raise GoJSONError(f"cannot decode {raw!r} as a Go string")
        return
    if kind == "int":
        out.append("0" if raw is None else str(_to_int(raw)))
        return
    if kind == "bool":
        if raw is None:
            out.append("false")
        elif isinstance(raw, bool):
            out.append("true" if raw else "false")
        else:
            raise GoJSONError(f"cannot decode {raw!r} as a Go bool")
        return
    if kind == "slice":
        if raw is None:
            out.append("null")
            return
        if not isinstance(raw, Sequence) or isinstance(raw, str):
            raise GoJSONError(f"cannot decode {raw!r} as a Go slice")
        out.append("[")
        for i, item in enumerate(raw):
            if i:
                out.append(",")
            _encode(item, rest, out)
        out.append("]")
        return
    if kind == "map":
        if raw is None:
            out.append("null")
            return
        if not isinstance(raw, Mapping):
            raise GoJSONError(f"cannot decode {raw!r} as a Go map")
        out.append("{")
        for i, key in enumerate(sorted(str(k) for k in raw)):
            if i:
                out.append(",")
            out.append(go_string(key))
            out.append(":")
            _encode(raw[key], rest, out)
        out.append("}")
        return
    if kind == "quantity":
        # A missing quantity is the zero Quantity, which marshals as "0".
        out.append('"0"' if raw is None else go_string(str(Quantity.from_json(raw))))
        return
    if kind == "intorstring":
        if raw is None:
            out.append("0")
        elif isinstance(raw, str):
            out.append(go_string(raw))
        else:
            out.append(str(_to_int(raw)))
        return
    if kind == "time":
        out.append("null" if raw is None or raw == "" else _format_time(raw))
        return
    if kind == "custom":
        out.append(marshal_value(raw))
        return
    raise GoJSONError(f"unknown Go type {type_str!r}")


def _encode_struct(raw: object, struct_name: str, out: list[str]) -> None:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise GoJSONError(f"cannot decode {type(raw).__name__} as Go struct {struct_name}")
    out.append("{")
    first = True
    for name, field_type, flags in GO_STRUCTS[struct_name]:
        value = raw.get(name)
        if flags & OMITEMPTY and _is_empty(value, field_type):
            continue
        if flags & OMITZERO and _is_zero(value, field_type):
            continue
        if not first:
            out.append(",")
        first = False
        out.append(go_string(name))
        out.append(":")
        _encode(value, field_type, out)
    out.append("}")


def marshal(raw: Mapping[str, object], struct_name: str) -> bytes:
    """``json.Marshal`` of ``raw`` decoded into the Go struct ``struct_name``."""
    out: list[str] = []
    _encode_struct(raw, struct_name, out)
    return "".join(out).encode("utf-8")
