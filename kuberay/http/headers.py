"""Headers of answers, and the checks a request's head passes before a byte is sent.

The checks are Go's ``net/http`` rules (``httpguts.ValidHeaderFieldName``/``Value``, a
request target of visible ASCII): a header name is an RFC 9110 token; a value has no
control character but horizontal tab (so no CR, LF or NUL can end a header line early);
the request target is visible ASCII with no space. h11 frames the request afterwards
and checks again; these give the error its field name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kuberay.http.errors import InvalidRequest

#: RFC 9110 5.6.2 token (a method, a header name).
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: A control character other than HTAB (RFC 9110 5.5: CR, LF and NUL are never allowed).
_CTL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
#: The request target: visible ASCII, no space (RFC 9112 3.2).
_TARGET = re.compile(rb"[\x21-\x7e]+")


class Headers:
    """Response headers: names case-insensitive, a repeated header's values joined by
    ``", "`` (as HTTP allows)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[tuple[str, str]] = ()) -> None:
        self._items: dict[str, str] = {}
        for name, value in items:
            key = name.lower()
            self._items[key] = f"{self._items[key]}, {value}" if key in self._items else value

    def get(self, name: str, default: str | None = None) -> str | None:
        """The value of ``name`` (any case), or ``default``."""
        return self._items.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._items

    def as_dict(self) -> dict[str, str]:
        """A copy, names in lower case."""
        return dict(self._items)


def method_bytes(method: str) -> bytes:
    """``method`` as sent; raises :class:`InvalidRequest` unless it is a token."""
    raw = _ascii(method, "method")
    if not _TOKEN.fullmatch(raw):
        raise InvalidRequest("method", "is not an HTTP token")
    return raw


def target_bytes(target: str) -> bytes:
    """The request target as sent; raises :class:`InvalidRequest` if it holds a space, a
    control character or a non-ASCII character (callers percent-encode what they put in)."""
    raw = _ascii(target, "request target")
    if not _TARGET.fullmatch(raw):
        position = next(i for i, c in enumerate(raw) if not 0x21 <= c <= 0x7E)
        raise InvalidRequest(
            "request target", f"holds a space or control character at position {position}"
        )
    return raw


def header_pair(name: str, value: str) -> tuple[bytes, bytes]:
    """``(name, value)`` as sent; raises :class:`InvalidRequest` naming the header when the
    name is not a token or the value holds a control character (CR, LF, NUL, ...)."""
    raw_name = _ascii(name, "a header name")
    if not _TOKEN.fullmatch(raw_name):
        raise InvalidRequest(f"header name {name[:40]!r}", "is not an HTTP token")
    try:
        raw_value = value.encode("latin-1")
    except UnicodeEncodeError:
        raise InvalidRequest(f"header {name!r}", "holds a character outside Latin-1") from None
    if _CTL.search(raw_value):
        raise InvalidRequest(f"header {name!r}", "holds a control character (CR, LF, NUL, ...)")
    return raw_name, raw_value.strip(b" \t")


def _ascii(text: str, field: str) -> bytes:
    try:
        return text.encode("ascii")
    except UnicodeEncodeError:
        raise InvalidRequest(field, "holds a non-ASCII character") from None


__all__ = ["Headers", "header_pair", "method_bytes", "target_bytes"]
