"""apimachinery's ``version.ParseGeneric``, for Ray version checks and validation messages.

A generic version is two or more dot-separated numbers (the first without a leading zero),
optionally prefixed by ``v`` and followed by anything on the same line (``2.53.0rc1`` parses as
``2.53.0``). Comparison looks at the numeric components only; missing trailing components count
as zero.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from .go_text import go_quote

__all__ = ["GoVersion", "parse_generic", "parse_generic_version", "version_at_least"]

#: ``versionMatchRE``: Go's ``\s`` is ``[\t\n\f\r ]`` and its ``.`` stops at a newline.
_GENERIC_VERSION: Final = re.compile(r"[\t\n\f\r ]*v?([0-9]+(?:\.[0-9]+)*)(.*)")
_MAX_UINT64: Final = (1 << 64) - 1


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


def parse_generic(text: str) -> GoVersion:
    """``version.ParseGeneric``: at least two numeric components, any suffix ignored.

    Raises ``ValueError`` with Go's message on failure.
    """
    match = _GENERIC_VERSION.fullmatch(text)
    if match is None:
        raise ValueError(f"could not parse {go_quote(text)} as version")
    components = match.group(1).split(".")
    if len(components) < 2:
        raise ValueError(f"illegal version string {go_quote(text)}")
    numbers: list[int] = []
    for i, comp in enumerate(components):
        if i == 0 and comp.startswith("0") and comp != "0":
            raise ValueError(
                f"illegal zero-prefixed version component {go_quote(comp)} in {go_quote(text)}"
            )
        number = int(comp)
        if number > _MAX_UINT64:
            raise ValueError(
                f"illegal non-numeric version component {go_quote(comp)} in {go_quote(text)}: "
                f"strconv.ParseUint: parsing {go_quote(comp)}: value out of range"
            )
        numbers.append(number)
    return GoVersion(numbers)


def parse_generic_version(text: str) -> tuple[int, ...] | None:
    """Numeric components of ``text``, or ``None`` when ParseGeneric would fail."""
    try:
        return parse_generic(text)
    except ValueError:
        return None


def version_at_least(text: str, minimum: tuple[int, ...]) -> bool:
    """``ParseGeneric(text).AtLeast(minimum)``; unparsable versions are never at least."""
    parsed = parse_generic_version(text)
    if parsed is None:
        return False
    return GoVersion(parsed).compare(minimum) >= 0
