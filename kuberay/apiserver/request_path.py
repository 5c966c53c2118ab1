"""A request's path, taken apart before anything routes on it.

The path a client sent (``request.raw_path``, still percent-encoded) is split at ``/`` and
each segment decoded on its own, so an encoded slash (``%2F``) stays inside its segment and
is then refused: it could not leave an allowed route that way. Every segment must pass
:func:`kuberay.kube.paths.path_segment_problems` (no ``.``/``..``, no ``/`` or ``%`` once
decoded, no whitespace or control characters, at most 1024 characters); the only empty
segment allowed is a trailing one (``.../proxy/``). A refused path is answered 400 before
any route sees it; the segments are re-encoded (:func:`encode`) when they go upstream.
"""

from __future__ import annotations

import urllib.parse

import attrs

from kuberay.kube.paths import path_segment_problems

#: Longest path accepted (bytes as sent).
MAX_PATH = 8192


class BadPath(ValueError):
    """A path no route may see; the message says why without echoing the path."""


@attrs.frozen
class RequestPath:
    """A checked path: its decoded ``segments`` and whether it ended with ``/``."""

    segments: tuple[str, ...]
    trailing_slash: bool = False

    def starts_with(self, *prefix: str) -> bool:
        """The path begins with exactly these segments."""
        return self.segments[: len(prefix)] == prefix


def parse_path(raw_path: str) -> RequestPath:
    """The checked form of ``raw_path`` (the path as sent, without the query); raises
    :class:`BadPath`."""
    if len(raw_path) > MAX_PATH:
        raise BadPath(f"path longer than {MAX_PATH} characters")
    if not raw_path.startswith("/"):
        raise BadPath("path must start with /")
    pieces = raw_path[1:].split("/")
    trailing = len(pieces) > 1 and pieces[-1] == ""
    if trailing or pieces == [""]:
        pieces = pieces[:-1]
    segments: list[str] = []
    for index, piece in enumerate(pieces):
        try:
            value = urllib.parse.unquote(piece, errors="strict")
        except UnicodeDecodeError:
            raise BadPath(f"segment {index + 1} is not UTF-8") from None
        problems = path_segment_problems(value)
        if problems:
            raise BadPath(f"segment {index + 1} {problems[0]}")
        segments.append(value)
    return RequestPath(tuple(segments), trailing)


def encode(segments: tuple[str, ...] | list[str], trailing_slash: bool = False) -> str:
    """``/a/b`` from checked segments, each escaped like Go's ``url.PathEscape``."""
    path = "".join("/" + urllib.parse.quote(s, safe="") for s in segments)
    return (path or "") + ("/" if trailing_slash else "") if path else "/"
