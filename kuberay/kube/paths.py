"""Names as URL path segments: checked, then escaped (the one place for the rule).

Every request path built from a name, namespace, subresource or other value that may come
from a user goes through :func:`segment` (or :func:`join`), which

1. refuses what client-go's ``IsValidPathSegmentName``
   (k8s.io/apimachinery/pkg/api/validation/path) refuses: ``.`` and ``..``, and any value
   containing ``/`` or ``%``;
2. refuses, as defence in depth, what no Kubernetes name can hold and what must never reach a
   request line: an empty value, whitespace, control characters (C0, DEL, C1, Unicode line and
   paragraph separators) and values longer than :data:`MAX_SEGMENT_LENGTH`;
3. percent-escapes the rest like Go's ``url.PathEscape`` (everything but unreserved
   characters; ``:`` and ``@`` too), so the segment stays one segment.

A refused value raises :class:`InvalidPathSegment` before any request is sent; its message
names which segment (``name``, ``namespace``, ``subresource``...) was bad and shows at most a
truncated ``repr`` of the value, never the whole of it.
"""

from __future__ import annotations

import unicodedata
import urllib.parse
from typing import Final

from kuberay.kube.errors import RequestRefused

__all__ = [
    "MAX_SEGMENT_LENGTH",
    "InvalidPathSegment",
    "check_segment",
    "check_segment_prefix",
    "join",
    "path_segment_problems",
    "segment",
]

#: Longest value accepted as one segment. Kubernetes names are at most 253 characters (a few
#: generated ones, e.g. Event names, a little more); this bound is far above every real name.
MAX_SEGMENT_LENGTH: Final = 1024
#: Characters of the value shown in an error message.
_SHOWN: Final = 40


class InvalidPathSegment(RequestRefused):
    """A value cannot be a URL path segment; nothing was sent.

    ``segment`` names which part of the path it was meant for (``"name"``, ``"namespace"``,
    ``"subresource"``...); ``problems`` lists why (client-go's wording where it has one)."""

    def __init__(self, segment: str, value: str, problems: list[str]) -> None:
        shown = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
        super().__init__(f"invalid {segment} {shown!r}: {'; '.join(problems)}")
        self.segment = segment
        self.problems = problems


def _is_control(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def has_control(value: str) -> bool:
    """``value`` holds whitespace or a control, format or line/paragraph separator character.
    ASCII (every Kubernetes name) is checked at once: there, exactly ``\x00``-``\x1f``,
    space and ``\x7f`` count."""
    if value.isascii():
        return " " in value or not value.isprintable()
    return any(_is_control(ch) for ch in value)


def path_segment_problems(value: str, *, prefix: bool = False) -> list[str]:
    """Why ``value`` cannot be a path segment (empty list: it can).

    ``prefix`` applies client-go's ``IsValidPathSegmentPrefix`` (a generateName prefix):
    ``.``/``..`` are fine there, ``/`` and ``%`` are not."""
    if not value:
        return ["may not be empty"]
    if len(value) > MAX_SEGMENT_LENGTH:
        return [f"must be no more than {MAX_SEGMENT_LENGTH} characters"]
    problems: list[str] = []
    if not prefix and value in (".", ".."):
        problems.append(f"may not be {value!r}")
    for bad in ("/", "%"):
        if bad in value:
            problems.append(f"may not contain {bad!r}")
    if has_control(value):
        problems.append("may not contain whitespace or control characters")
    return problems


def check_segment(kind: str, value: str) -> str:
    """``value`` unchanged if it can be a path segment; raises :class:`InvalidPathSegment`
    (naming ``kind``) if not."""
    if not isinstance(value, str):
        raise InvalidPathSegment(kind, repr(value), ["must be a string"])
    problems = path_segment_problems(value)
    if problems:
        raise InvalidPathSegment(kind, value, problems)
    return value


def check_segment_prefix(kind: str, value: str) -> str:
    """As :func:`check_segment` with client-go's ``IsValidPathSegmentPrefix`` rule."""
    problems = path_segment_problems(value, prefix=True)
    if problems:
        raise InvalidPathSegment(kind, value, problems)
    return value


def segment(kind: str, value: str) -> str:
    """``value`` checked (:func:`check_segment`) and percent-escaped as one path segment."""
    return urllib.parse.quote(check_segment(kind, value), safe="")


def join(*parts: tuple[str, str]) -> str:
    """``/seg1/seg2...`` from ``(kind, value)`` pairs, each checked and escaped."""
    return "".join("/" + segment(kind, value) for kind, value in parts)
