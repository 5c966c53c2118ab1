"""Which request paths the live proxy forwards, and how they are written upstream.

The path a client sends is put, as received, after the dashboard's address or after the
apiserver's ``/api/v1/namespaces/<ns>/services/<svc>:dashboard/proxy``. A client library that
normalises the URL afterwards (aiohttp does for a ``str``) would turn
``/../../../../api/v1/namespaces/kube-system/secrets/x`` into an apiserver path read with the
server's own credentials. So before anything is sent:

* The raw path (``request.raw_path``: nothing decoded, nothing normalised) must be printable
  ASCII without spaces, start with ``/``, and each ``/``-separated segment, percent-decoded
  once, must not be ``.`` or ``..``, nor hold ``/``, ``\\``, ``%`` (a second encoding layer),
  a control character or a byte that is not ASCII; no empty segment but a trailing ``/``.
  Anything else is a 400 (``LiveError``).
* The decoded path must be in the dashboard subtree the live view reads (``ALLOWED_ROOTS``,
  ``ALLOWED_FILES``), and not one of the dashboard's GET routes that change something
  (``DENIED_PATHS``): else a 403. The list is what Ray's UI asks for on its pages (the same
  routes the history server answers for a stored session, ``routes_*``): ``/api/...``
  (jobs, state API, logs, serve, metrics health, cluster status), ``/nodes``, ``/logical``
  (actors), ``/events``, ``/timezone`` and the UI's own files (``/``, ``/index.html``,
  ``/static/...``, ``/favicon.ico``). Left out: the profiling routes (``/worker/...``,
  ``/task/...``, ``/memory_profile``: they attach py-spy or memray to running processes),
  ``/api/actors/kill`` (a GET that kills an actor), ``/metrics`` and anything else.
* The upstream URL is then built from parts with ``yarl.URL.build(..., encoded=True)``, so the
  path and query go on the wire exactly as checked (``upstream_url``).
"""

from __future__ import annotations

import string
import urllib.parse

import attrs
import yarl

from kuberay.historyserver.server.live import LiveError

#: First path segments of the dashboard subtree the live view reads.
ALLOWED_ROOTS = frozenset({"api", "static", "nodes", "logical", "events", "timezone"})
#: Files at the dashboard's root that Ray's UI loads.
ALLOWED_FILES = frozenset({"", "index.html", "favicon.ico", "manifest.json", "robots.txt"})
#: GET routes of the dashboard that act rather than read (decoded, without a trailing ``/``).
DENIED_PATHS = frozenset({"/api/actors/kill"})

_RAW_OK = frozenset(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/%")
_QUERY_OK = _RAW_OK | frozenset("?")


@attrs.frozen
class CheckedPath:
    """A request target that may be forwarded: ``raw_path``/``raw_query`` as they go on the
    wire, ``path`` decoded (for the subtree check and logs)."""

    raw_path: str
    raw_query: str
    path: str


def _bad(raw: str, why: str) -> LiveError:
    shown = raw if len(raw) <= 200 else raw[:200] + "..."
    return LiveError(400, f"refusing to forward {shown!r}: {why}")


def _decode_segment(raw_path: str, segment: str) -> str:
    try:
        decoded = urllib.parse.unquote(segment, encoding="ascii", errors="strict")
    except UnicodeDecodeError as exc:
        raise _bad(raw_path, "a path segment decodes to a byte that is not ASCII") from exc
    if decoded in (".", ".."):
        raise _bad(raw_path, "a path segment is . or .. (possibly percent-encoded)")
    for ch in decoded:
        if ch in "/\\%":
            raise _bad(raw_path, f"a path segment holds an encoded {ch!r}")
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise _bad(raw_path, "a path segment holds a control character")
    return decoded


def check_path(raw_path: str, raw_query: str) -> CheckedPath:
    """``raw_path``/``raw_query`` (as received, undecoded) checked as the module doc says;
    raises ``LiveError`` 400 (malformed, dot segment, encoded separator) or 403 (outside the
    dashboard subtree)."""
    if not raw_path.startswith("/"):
        raise _bad(raw_path, "the path must start with /")
    if not set(raw_path) <= _RAW_OK:
        raise _bad(raw_path, "the path holds a character that must be percent-encoded")
    if not set(raw_query) <= _QUERY_OK:
        raise _bad(raw_path, "the query holds a character that must be percent-encoded")
    segments = raw_path[1:].split("/")
    decoded: list[str] = []
    for i, segment in enumerate(segments):
        if segment == "" and i != len(segments) - 1:
            raise _bad(raw_path, "the path has an empty segment (//)")
        decoded.append(_decode_segment(raw_path, segment))
    path = "/" + "/".join(decoded)
    first = decoded[0]
    allowed = first in ALLOWED_ROOTS or (len(decoded) == 1 and first in ALLOWED_FILES)
    if not allowed or path.rstrip("/") in DENIED_PATHS:
        raise LiveError(
            403,
            f"{path} is not part of the dashboard's read-only pages the history server "
            "forwards to a live cluster",
        )
    return CheckedPath(raw_path=raw_path, raw_query=raw_query, path=path)


def upstream_url(
    scheme: str, host: str, port: int | None, prefix: str, checked: CheckedPath
) -> yarl.URL:
    """``scheme://host:port`` + ``prefix`` (already percent-encoded, no trailing ``/``) +
    the checked path and query, built from parts and marked encoded: nothing in it is decoded
    or normalised again before it is sent."""
    return yarl.URL.build(
        scheme=scheme,
        host=host,
        port=port,
        path=prefix + checked.raw_path,
        query_string=checked.raw_query,
        encoded=True,
    )
