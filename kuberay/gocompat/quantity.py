"""Kubernetes ``resource.Quantity`` with the exact parsing, rounding and printing rules of Go.

KubeRay derives ``ray start`` flags (``--num-cpus``, ``--memory``, ``--resources``), status
totals (``desiredCPU`` ...) and its spec hash from quantities, so the Python side must agree
with apimachinery bit for bit:

* parsing accepts ``<sign><digits>[.<digits>]<suffix>`` with decimal SI (``n u m "" k M G T P E``),
  binary SI (``Ki`` ... ``Ei``) and decimal exponent (``e3``/``E-3``) suffixes; values are rounded
  up (away from zero) to nano precision;
* printing uses the canonical form (``1000m`` -> ``1``, ``1024Mi`` -> ``1Gi``, ``0.5`` -> ``500m``),
  except that a string which was already canonical when parsed is echoed verbatim (Go caches it),
  which is why ``+1`` or ``01`` survive a round trip;
* ``value()`` rounds up to an integer; ``approximate_float()`` reproduces Go's
  ``AsApproximateFloat64`` (``unscaled * 10**scale`` in float64 arithmetic, so ``1.5`` becomes
  ``1.5000000000000002``);
* ``plus``/``times`` follow ``Add``/``Mul`` (the receiver keeps its format unless it is zero).

Known difference: a quantity written as a JSON *number* in exponent form (``1e3``) reaches Python
as a float and is re-rendered from that float, while Go re-parses the original text.
"""

from __future__ import annotations

import math
from enum import StrEnum
from fractions import Fraction
from typing import Final

__all__ = ["Quantity", "QuantityError", "QuantityFormat", "go_pow10", "parse_quantity"]

_DIGITS: Final = "0123456789"
_SUFFIX_CHARS: Final = "eEinumkKMGTP"
_MAX_INT64: Final = (1 << 63) - 1
_NANO_SCALE: Final = 9  # Go rounds parsed values up to 10^-9.

_DECIMAL_SUFFIXES: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL_SUFFIX_BY_EXPONENT: Final[dict[int, str]] = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIXES: Final[dict[str, int]] = {
    "Ki": 10,
    "Mi": 20,
    "Gi": 30,
    "Ti": 40,
    "Pi": 50,
    "Ei": 60,
}
_BINARY_SUFFIX_BY_EXPONENT: Final[dict[int, str]] = {e: s for s, e in _BINARY_SUFFIXES.items()}


class QuantityError(ValueError):
    """The string is not a Kubernetes quantity."""


class QuantityFormat(StrEnum):
    """How a quantity prefers to be printed (Go ``resource.Format``)."""

    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"
    UNSET = ""


# Go's math.Pow10 tables: exact small powers times correctly rounded powers of 10^32.
_POW10_SMALL: Final = tuple(float(f"1e{i}") for i in range(32))
_POW10_POS32: Final = tuple(float(f"1e{32 * i}") for i in range(10))
_POW10_NEG32: Final = tuple(float(f"1e-{32 * i}") for i in range(11))


def go_pow10(n: int) -> float:
    """``math.Pow10`` of Go (same float64 result for every ``n``)."""
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10_SMALL[n % 32]
    if -323 <= n <= 0:
        return _POW10_NEG32[(-n) // 32] / _POW10_SMALL[(-n) % 32]
    return float("inf") if n > 0 else 0.0


def _round_away(numerator: int, denominator: int) -> tuple[int, bool]:
    """Integer quotient rounded away from zero, and whether it was exact."""
    q, r = divmod(abs(numerator), denominator)
    if r:
        q += 1
    return (q if numerator >= 0 else -q), r == 0


def _strip_factors(value: int, base: int) -> tuple[int, int]:
    """Remove factors of ``base`` while ``|value| >= base`` (Go ``removeInt64Factors``)."""
    negative = value < 0
    v = -value if negative else value
    times = 0
    while v >= base and v % base == 0:
        v //= base
        times += 1
    return (-v if negative else v), times


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """Split ``text`` like Go ``parseQuantityString``: (positive, value, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if pos < end:
        if text[0] == "-":
            positive = False
            pos += 1
        elif text[0] == "+":
            pos += 1
    # strip leading zeros
    i = pos
    while True:
        if i >= end:
            return positive, "0", "0", "", ""
        if text[i] != "0":
            break
        pos += 1
        i += 1
    # numerator
    i = pos
    while True:
        if i >= end:
            return positive, text[:end], text[pos:end], "", ""
        if text[i] not in _DIGITS:
            num = text[pos:i]
            pos = i
            break
        i += 1
    if not num:
        num = "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        i = pos
        while True:
            if i >= end:
                return positive, text[:end], num, text[pos:end], ""
            if text[i] not in _DIGITS:
                denom = text[pos:i]
                pos = i
                break
            i += 1
    value = text[:pos]
    suffix_start = pos
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, text[suffix_start:end]
        if text[i] not in _SUFFIX_CHARS:
            pos = i
            break
        i += 1
    if pos < end and text[pos] in "-+":
        pos += 1
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, text[suffix_start:end]
        if text[i] not in _DIGITS:
            raise QuantityError(
                f"quantities must match '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}"
            )
        i += 1


def _interpret_suffix(suffix: str) -> tuple[int, int, QuantityFormat]:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], QuantityFormat.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], QuantityFormat.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in ("+", "-") else digits
        if body and all(c in _DIGITS for c in body):
            exponent = int(digits)
            if -(1 << 63) <= exponent <= _MAX_INT64:
                # Go truncates the parsed int64 to int32.
                exponent = ((exponent + (1 << 31)) % (1 << 32)) - (1 << 31)
                return 10, exponent, QuantityFormat.DECIMAL_EXPONENT
    raise QuantityError(f"unable to parse quantity's suffix: {suffix!r}")


def _decimal_digits(value: str) -> tuple[int, int]:
    """``inf.Dec.SetString`` of ``[+-]digits[.digits]``: (unscaled, scale)."""
    sign = -1 if value.startswith("-") else 1
    body = value.lstrip("+-")
    whole, _, frac = body.partition(".")
    digits = (whole + frac) or "0"
    if not all(c in _DIGITS for c in digits):
        raise QuantityError(f"unable to parse numeric part of quantity: {value!r}")
    return sign * int(digits), len(frac)


class Quantity:
    """An immutable Kubernetes quantity (value = ``unscaled * 10**exp10``)."""

    __slots__ = ("_cached", "_exp10", "_format", "_unscaled")

    def __init__(
        self,
        unscaled: int = 0,
        exp10: int = 0,
        fmt: QuantityFormat = QuantityFormat.UNSET,
        cached: str = "",
    ) -> None:
        self._unscaled = unscaled
        self._exp10 = exp10
        self._format = fmt
        self._cached = cached

    # ----- construction -------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Go ``resource.ParseQuantity``."""
        if not text:
            raise QuantityError("quantities must not be empty")
        if text == "0":
            return cls(0, 0, QuantityFormat.DECIMAL_SI, "0")
        positive, value, num, denom, suffix = _scan(text)
        base, exponent, fmt = _interpret_suffix(suffix)

        precision = 0
        scale = 0
        mantissa = 1
        if fmt is QuantityFormat.BINARY_SI:
            if exponent >= 0 and not denom:
                mantissa = 1 << exponent
                precision = 15 - len(num) - int(exponent * 3 / 10) - 1
            else:
                precision = -1
        else:
            scale = exponent
            precision = 18 - (len(num) + len(denom))

        if precision >= 0:
            scale -= len(denom)
            if scale >= -_NANO_SCALE:
                shifted = num + denom
                result = int(shifted) * mantissa
                if result <= _MAX_INT64:
                    if not positive:
                        result = -result
                    cached = ""
                    if fmt is QuantityFormat.BINARY_SI:
                        if exponent % 10 == 0 and int(shifted) & 0x07 != 0:
                            cached = text
                    elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                        cached = text
                    return cls(result, scale, fmt, cached)

        unscaled, dec_scale = _decimal_digits(value)
        if base == 10:
            dec_scale -= exponent
        else:
            unscaled *= 1 << exponent
        negative = unscaled < 0
        unscaled = abs(unscaled)
        if unscaled != 0:
            if dec_scale > _NANO_SCALE:
                unscaled, _ = _round_away(unscaled, 10 ** (dec_scale - _NANO_SCALE))
            else:
                unscaled *= 10 ** (_NANO_SCALE - dec_scale)
            dec_scale = _NANO_SCALE
        if fmt is QuantityFormat.BINARY_SI and Fraction(unscaled, 10**dec_scale) > _MAX_INT64:
            unscaled, dec_scale = _MAX_INT64, 0
        if fmt is QuantityFormat.BINARY_SI and 0 < Fraction(unscaled, 10**dec_scale) < 1:
            fmt = QuantityFormat.DECIMAL_SI
        if negative:
            unscaled = -unscaled
        return cls(unscaled, -dec_scale, fmt)

    @classmethod
    def from_json(cls, raw: object) -> Quantity:
        """Decode a quantity as it appears in a Kubernetes object (string or JSON number).

        ``null`` decodes to the zero quantity, as Go's ``Quantity.UnmarshalJSON`` does (the
        apiserver drops such nulls before anyone reads the object).
        """
        if isinstance(raw, Quantity):
            return raw
        if raw is None:
            return cls()
        if isinstance(raw, bool):
            raise QuantityError(f"not a quantity: {raw!r}")
        if isinstance(raw, int):
            return cls.parse(str(raw))
        if isinstance(raw, float):
            text = repr(raw)
            if text.endswith(".0"):
                text = text[:-2]
            return cls.parse(text)
        if isinstance(raw, str):
            return cls.parse(raw.strip())
        raise QuantityError(f"not a quantity: {raw!r}")

    @classmethod
    def from_int(cls, value: int, fmt: QuantityFormat = QuantityFormat.DECIMAL_SI) -> Quantity:
        """Go ``resource.NewQuantity``."""
        return cls(value, 0, fmt)

    # ----- inspection ---------------------------------------------------------------------
    @property
    def format(self) -> QuantityFormat:
        return self._format

    @property
    def exact(self) -> Fraction:
        """The exact numeric value."""
        if self._exp10 >= 0:
            return Fraction(self._unscaled * 10**self._exp10)
        return Fraction(self._unscaled, 10 ** (-self._exp10))

    def is_zero(self) -> bool:
        return self._unscaled == 0

    def value(self) -> int:
        """Go ``Value()``: the value rounded up to an integer (0 if it overflows int64)."""
        if self._exp10 >= 0:
            if len(str(abs(self._unscaled))) + self._exp10 > 20:
                return 0  # overflows int64; never materialise 10**exp10 (exp10 may be huge)
            result = int(self._unscaled * 10**self._exp10)
        else:
            result, _ = _round_away(self._unscaled, 10 ** (-self._exp10))
        return result if -(1 << 63) <= result <= _MAX_INT64 else 0

    def approximate_float(self) -> float:
        """Go ``AsApproximateFloat64``."""
        try:
            base = float(self._unscaled)
        except OverflowError:
            base = math.inf if self._unscaled > 0 else -math.inf
        if self._exp10 == 0:
            return base
        return base * go_pow10(self._exp10)

    def cmp(self, other: Quantity) -> int:
        a, b = self.exact, other.exact
        if a == b:
            return 0
        return 1 if a > b else -1

    # ----- arithmetic ---------------------------------------------------------------------
    def plus(self, other: Quantity) -> Quantity:
        """Go ``Add``: the result keeps this quantity's format unless this one is zero."""
        fmt = other._format if self.is_zero() else self._format
        exp10 = min(self._exp10, other._exp10)
        unscaled = self._unscaled * 10 ** (self._exp10 - exp10) + other._unscaled * 10 ** (
            other._exp10 - exp10
        )
        return Quantity(unscaled, exp10, fmt)

    def times(self, factor: int) -> Quantity:
        """Go ``Mul``."""
        return Quantity(self._unscaled * factor, self._exp10, self._format)

    # ----- printing -----------------------------------------------------------------------
    def canonical(self) -> str:
        """Go ``CanonicalizeBytes`` joined (``String()`` without the parse cache)."""
        if self._unscaled == 0:
            return "0"
        fmt = self._format
        rounded = 0
        if fmt is QuantityFormat.BINARY_SI:
            if -1024 < self.exact < 1024:
                fmt = QuantityFormat.DECIMAL_SI
            else:
                if self._exp10 >= 0:
                    rounded, exact = self._unscaled * 10**self._exp10, True
                else:
                    rounded, exact = _round_away(self._unscaled, 10 ** (-self._exp10))
                if not exact:
                    fmt = QuantityFormat.DECIMAL_SI
        elif fmt is not QuantityFormat.DECIMAL_SI and fmt is not QuantityFormat.DECIMAL_EXPONENT:
            fmt = QuantityFormat.DECIMAL_EXPONENT

        if fmt is QuantityFormat.BINARY_SI:
            mantissa, times = _strip_factors(rounded, 1024)
            return f"{mantissa}{_BINARY_SUFFIX_BY_EXPONENT.get(times * 10, '')}"

        mantissa, times = _strip_factors(self._unscaled, 10)
        exponent = self._exp10 + times
        shift = exponent % 3
        mantissa *= 10**shift
        exponent -= shift
        if fmt is QuantityFormat.DECIMAL_SI:
            suffix = _DECIMAL_SUFFIX_BY_EXPONENT.get(exponent, "")
        else:
            suffix = "" if exponent == 0 else f"e{exponent}"
        return f"{mantissa}{suffix}"

    def __str__(self) -> str:
        """Go ``String()`` / ``MarshalJSON`` text."""
        return self._cached or self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.exact == other.exact

    def __hash__(self) -> int:
        return hash(self.exact)


def parse_quantity(raw: object) -> Quantity:
    """Decode a quantity from an object field (string or number)."""
    return Quantity.from_json(raw)
