"""What validation reports: :class:`FieldError` (path, KubeRay's message, who enforces it),
and the quantity sanity check both the structural and the schema checks apply."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, TypeAlias

import attrs

__all__ = [
    "MAX_QUANTITY_DIGITS",
    "MAX_QUANTITY_EXPONENT",
    "ErrorKind",
    "ErrorSource",
    "FieldError",
    "first_error",
    "quantity_problem",
]

ErrorSource: TypeAlias = Literal["crd", "metadata", "spec", "upgrade", "status", "webhook"]
#: apimachinery's ``field.ErrorType`` of the error (how a webhook denial prints it):
#: ``Invalid`` (``Invalid value: <value>: <message>``), ``Forbidden`` (``Forbidden:
#: <message>``) or ``Duplicate`` (``Duplicate value: <value>``).
ErrorKind: TypeAlias = Literal["Invalid", "Forbidden", "Duplicate"]


@attrs.frozen
class FieldError:
    """One validation problem: the JSON path of the field, KubeRay's message, who enforces it.

    ``kind`` and ``value`` say how a webhook denial prints it: the bad value is ``value``
    when given, else whatever the object holds at ``path``."""

    path: str
    message: str
    source: ErrorSource = "spec"
    kind: ErrorKind = "Invalid"
    value: str | None = None

    def __str__(self) -> str:
        # KubeRay's own text when it already names the field (e.g. "spec.tlsOptions
        # requires the RayClusterMTLS feature gate..."); otherwise the path, once, first.
        if not self.path or self.path in self.message:
            return self.message
        return f"{self.path}: {self.message}"


def first_error(errors: Iterable[FieldError], *sources: ErrorSource) -> FieldError | None:
    """The first error whose source is in ``sources`` (any source when none given): the
    error KubeRay's controller would report for that check phase."""
    for error in errors:
        if not sources or error.source in sources:
            return error
    return None


_QUANTITY_PARTS = re.compile(r"^[+-]?([0-9.]*)(?:[eE]([+-]?[0-9]+))?")
#: Beyond these a quantity cannot be computed with (Python's int/str limits, huge powers of
#: ten); no real resource amount comes near them.
MAX_QUANTITY_DIGITS = 1000
MAX_QUANTITY_EXPONENT = 1000


def quantity_problem(text: str) -> str | None:
    """Why a schema-valid quantity string is unusable (absurdly long or large), else None."""
    match = _QUANTITY_PARTS.match(text)
    if match is None:
        return None
    digits = sum(ch.isdigit() for ch in match.group(1))
    if digits > MAX_QUANTITY_DIGITS:
        return f"quantity has more than {MAX_QUANTITY_DIGITS} digits"
    exponent = match.group(2)
    if exponent is not None and len(exponent.lstrip("+-")) > 6:
        return f"quantity exponent is out of range (max {MAX_QUANTITY_EXPONENT})"
    if exponent is not None and abs(int(exponent)) > MAX_QUANTITY_EXPONENT:
        return f"quantity exponent is out of range (max {MAX_QUANTITY_EXPONENT})"
    return None
