"""KubeRay's truncation rules for the names and label values it derives from a user's names
(``utils.CheckName`` / ``utils.CheckLabel``), exactly as Go applies them.

* :func:`check_name` (objects, 50 bytes) and :func:`check_label` (label values, 63 bytes) keep
  the *last* bytes of a long name, then replace a leading digit (``check_name`` only) or
  punctuation character with ``r``.

Lengths are counted in UTF-8 bytes and "digit"/"punctuation" are judged on the first *byte*
(as Go does with ``unicode.IsDigit(rune(s[0]))``); for the ASCII names Kubernetes accepts
this is the same as counting characters. At the package's top level (it imports nothing) so
every program that must find an object KubeRay named applies the same rule: the operator's
builders, and the history server reading a cluster's auth Secret, whose images ship only the
top level, ``historyserver`` and ``gocompat``.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["MAX_LABEL_LENGTH", "MAX_NAME_LENGTH", "check_label", "check_name"]

MAX_NAME_LENGTH: Final = 50
MAX_LABEL_LENGTH: Final = 63


def _first_byte_is(s: bytes, category_prefix: str) -> bool:
    return unicodedata.category(chr(s[0])).startswith(category_prefix)


def _keep_tail(name: str, limit: int) -> bytes:
    raw = name.encode("utf-8")
    return raw[len(raw) - limit :] if len(raw) > limit else raw


def check_name(name: str) -> str:
    """KubeRay ``CheckName``: keep the last 50 bytes; no leading digit or punctuation."""
    raw = _keep_tail(name, MAX_NAME_LENGTH)
    if not raw:
        return ""
    if 0x30 <= raw[0] <= 0x39:  # unicode.IsDigit of a single byte: only ASCII digits
        raw = b"r" + raw[1:]
    if _first_byte_is(raw, "P"):
        raw = b"r" + raw[1:]
    return raw.decode("utf-8", errors="replace")


def check_label(value: str) -> str:
    """KubeRay ``CheckLabel`` (also ``TrimJobName``): keep the last 63 bytes; no leading punct."""
    raw = _keep_tail(value, MAX_LABEL_LENGTH)
    if not raw:
        return ""
    if _first_byte_is(raw, "P"):
        raw = b"r" + raw[1:]
    return raw.decode("utf-8", errors="replace")
