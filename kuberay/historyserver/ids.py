"""Ray IDs as the history server stores them: lowercase hex.

Ray's event export writes ``bytes`` IDs as base64 (proto3 JSON); the dashboard's state API
answers hex. KubeRay normalises both with ``ConvertBase64ToHex``; :func:`to_hex` is the same
rule, so a node or job directory we write has the name KubeRay's collector would give it.
"""

from __future__ import annotations

import base64
import binascii
import re

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_RAW_URL = re.compile(r"^[A-Za-z0-9_-]*$")


class InvalidID(ValueError):
    """The value is neither hex nor base64."""


def to_hex(value: str) -> str:
    """``value`` as lowercase hex.

    A value made only of hex digits is taken as hex already (lowercased); otherwise it is
    decoded as unpadded URL-safe base64, then as standard base64 (Ray's encoding, with ``=``
    padding). Raises ``InvalidID`` when neither decodes.
    """
    if _HEX.fullmatch(value):
        return value.lower()
    raw: bytes | None = None
    if _RAW_URL.fullmatch(value) and len(value) % 4 != 1:
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        except (binascii.Error, ValueError):
            raw = None
    if raw is None:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidID(f"id {value!r} is neither hex nor base64") from exc
    return raw.hex()
