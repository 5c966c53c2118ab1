"""Stored Ray log files: listing a node's ``logs/`` tree and reading one file (or a task's
slice of one).

Keys come only from ``layout.Layout.log_key``, so a node ID must be one safe segment and a
file name a clean relative path (no ``..``, no leading ``/``): nothing outside the
session's ``<node>/logs/`` can be named.

* Listing (``/api/v0/logs``): every object under ``<node>/logs/`` whose relative path
  matches the glob (``*`` and ``?`` stay within one path segment, ``**`` crosses them; the
  default ``*`` is the top level), grouped like Ray's ``_categorize_log_files``.
* Reading (``/api/v0/logs/file``): by ``filename``; by ``task_id`` (+ ``attempt_number``):
  the worker file and byte range ``[start, end)`` recorded in the task's ``taskLogInfo``,
  read with a ranged GET; by ``actor_id`` (its worker's file) or ``pid``
  (``worker-*-<pid>.<suffix>``). ``lines`` keeps the last N lines (``-1``: all).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from kuberay.historyserver.layout import LOGS_DIR, check_relative_path
from kuberay.historyserver.server.session import SessionSnapshot
from kuberay.historyserver.storage.base import ObjectStore, list_all

DEFAULT_LINES = 1000
#: Ray's dashboard UI asks for 50,000 lines (its MAX_LINES_FOR_LOGS); tails are read by ranges
MAX_LINES = 100_000
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")


class LogNotFound(LookupError):
    """No stored log file answers the request; the message says what was looked for."""


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over ``/``-separated relative paths (``**`` crosses segments)."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            if pattern.startswith("/", i):
                out.append("/?")
                i += 1
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(ch, re.escape(ch)))
        i += 1
    return re.compile("".join(out) + r"\Z")


def categorize(names: Iterable[str]) -> dict[str, list[str]]:
    """Log files grouped as Ray's dashboard groups them (by the file's base name)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        base = name.rsplit("/", 1)[-1]
        if base.startswith("worker-") and base.endswith(".out"):
            kind = "worker_out"
        elif base.startswith("worker-") and base.endswith(".err"):
            kind = "worker_err"
        elif "core-worker" in base:
            kind = "core_worker"
        elif "core-driver" in base:
            kind = "core_driver"
        elif base.startswith("job-driver-"):
            kind = "driver"
        elif base.startswith("raylet"):
            kind = "raylet"
        elif base.startswith("gcs_server"):
            kind = "gcs_server"
        elif base.startswith(("monitor", "autoscaler")):
            kind = "autoscaler"
        elif "agent" in base:
            kind = "agent"
        elif base.startswith("dashboard"):
            kind = "dashboard"
        else:
            kind = "internal"
        groups[kind].append(name)
    return {k: sorted(v) for k, v in sorted(groups.items())}


async def list_node_logs(
    store: ObjectStore, snap: SessionSnapshot, node_id: str, glob: str = "*"
) -> list[str]:
    """The relative paths of ``node_id``'s stored log files matching ``glob``."""
    key = snap.key
    prefix = key.layout.node_prefix(key.session, node_id) + f"/{LOGS_DIR}/"
    regex = glob_regex(glob or "*")
    listing = await list_all(store, prefix, delimiter=None)
    return [o.key[len(prefix) :] for o in listing.objects if regex.match(o.key[len(prefix) :])]


def relative_log_path(path: str) -> str:
    """A path Ray recorded on the node (``/tmp/ray/session_x/logs/worker-...out``) as the
    path under ``logs/`` (what the collector stored); checked."""
    marker = f"/{LOGS_DIR}/"
    rel = path.rsplit(marker, 1)[-1] if marker in path else path.rsplit("/", 1)[-1]
    return check_relative_path(rel)


def tail_lines(data: bytes, lines: int) -> bytes:
    """The last ``lines`` lines of ``data`` (all for ``lines < 0``)."""
    if lines < 0:
        return data
    if lines == 0:
        return b""
    body = data[:-1] if data.endswith(b"\n") else data
    parts = body.split(b"\n")
    kept = b"\n".join(parts[-lines:])
    return kept + (b"\n" if data.endswith(b"\n") else b"")


def strip_ansi(data: bytes) -> bytes:
    """``data`` without ANSI escape sequences (colours)."""
    return _ANSI.sub(b"", data)
