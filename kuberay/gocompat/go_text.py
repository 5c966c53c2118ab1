"""Go's text formatting where KubeRay puts it into commands: ``strconv.Quote``, ``%f``, float32.

* :func:`go_quote` is ``strconv.Quote``: printable runes (Unicode L, M, N, P, S and the ASCII
  space) stay as they are, ``"`` and ``\\`` are backslashed, ``\\a \\b \\f \\n \\r \\t \\v``
  use their short escapes, other control characters ``\\xNN`` and every other rune
  ``\\uNNNN`` / ``\\UNNNNNNNN``.
* :func:`to_float32` rounds a number to the nearest float32 (how a RayJob's
  ``entrypointNumCpus`` arrives in Go), :func:`format_go_percent_f` is ``fmt.Sprintf("%f", x)``
  of that float32 and :func:`float32_json_value` the number Go's ``encoding/json`` writes for it
  (shortest float32 digits), as a Python int when integral so ``json.dumps`` prints it alike.
"""

from __future__ import annotations

import math
import struct
import unicodedata
from typing import Final

__all__ = ["float32_json_value", "format_go_percent_f", "go_quote", "to_float32"]

_SHORT_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}
#: Go ``encoding/json`` switches to exponent notation outside [1e-6, 1e21).
_JSON_EXPONENT_LIMIT: Final = 1e21


def _is_print(ch: str) -> bool:
    """Go ``unicode.IsPrint``."""
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def go_quote(text: str) -> str:
    """Go ``strconv.Quote(text)``."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif _is_print(ch):
            out.append(ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")  # not valid UTF-8: Go sees the replacement rune
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest IEEE float32 (returned as a Python float).

    Raises :class:`OverflowError` when it is outside the float32 range (Go's JSON decoder
    rejects such a number).
    """
    result: float = struct.unpack("<f", struct.pack("<f", float(value)))[0]
    return result


def format_go_percent_f(value: float) -> str:
    """``fmt.Sprintf("%f", float32(value))``: six decimals of the exact float32 value."""
    return f"{to_float32(value):f}"


def _shortest_float32_digits(value: float) -> str:
    """The fewest significant digits that read back as the same float32."""
    for precision in range(1, 10):
        text = f"{value:.{precision}g}"
        if to_float32(float(text)) == value:
            return text
    return repr(value)


def float32_json_value(value: float) -> int | float:
    """The number ``encoding/json`` writes for a Go float32, as the JSON value it reads back as.

    Integral values below 1e21 come back as ``int`` (Go prints them without a fraction);
    everything else as the float of Go's shortest float32 digits.
    """
    f32 = to_float32(value)
    if math.isnan(f32) or math.isinf(f32):
        raise ValueError(f"json: unsupported value: {f32}")
    digits = float(_shortest_float32_digits(f32))
    if f32.is_integer() and abs(f32) < _JSON_EXPONENT_LIMIT:
        return int(digits)  # Go prints float32(123456789) as 123456790
    return digits
