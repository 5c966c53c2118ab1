"""Ray version checks the way KubeRay does them (apimachinery ``version.ParseGeneric``).

A generic version is two or more dot-separated numbers (the first without a leading zero),
optionally prefixed by ``v`` and followed by anything on the same line (``2.53.0rc1`` parses as
``2.53.0``). Comparison looks at the numeric components only; missing trailing components count
as zero.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["parse_generic_version", "version_at_least"]

_GENERIC_VERSION: Final = re.compile(r"[\t\n\f\r ]*v?([0-9]+(?:\.[0-9]+)*)(.*)")
_MAX_UINT64: Final = (1 << 64) - 1


def parse_generic_version(text: str) -> tuple[int, ...] | None:
    """Numeric components of ``text``, or ``None`` when ParseGeneric would fail."""
    match = _GENERIC_VERSION.fullmatch(text)
    if match is None:
        return None
    components = match.group(1).split(".")
    if len(components) < 2:
        return None
    if components[0].startswith("0") and components[0] != "0":
        return None
    numbers = tuple(int(part) for part in components)
    if any(n > _MAX_UINT64 for n in numbers):
        return None
    return numbers


def version_at_least(text: str, minimum: tuple[int, ...]) -> bool:
    """``ParseGeneric(text).AtLeast(minimum)``; unparsable versions are never at least."""
    parsed = parse_generic_version(text)
    if parsed is None:
        return False
    width = max(len(parsed), len(minimum))
    padded = parsed + (0,) * (width - len(parsed))
    required = minimum + (0,) * (width - len(minimum))
    return padded >= required
