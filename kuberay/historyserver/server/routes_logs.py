"""``/api/v0/logs`` (listing) and ``/api/v0/logs/file`` (reading) over stored Ray logs.

The node is ``node_id`` (hex; must be one of the session's node directories) or
``node_ip`` (resolved through the session's nodes). ``/api/v0/logs/file`` answers
``text/plain`` in Ray's streaming framing: the first byte ``1`` marks success (the UI strips
it); with ``download_filename`` the bare bytes come as an attachment, and an HTTP
``Range: bytes=...`` header is honoured (``206``/``416``; with ``lines=-1`` and no ANSI
filter the range is read from storage directly; with ``lines=-1`` and the ANSI filter it is
ignored). ``lines=-1`` answers are streamed from the store in chunks, never held whole.
``lines=N`` reads only the end of the object (``log_reads.tail_chunks``), at most
``TAIL_WINDOW_CAP`` (8 MiB) of it: when the N lines do not fit, the answer is the last
8 MiB (its first line cut) with the header ``X-Log-Truncated: true``.
Unknown node, task or file: 404; a parameter that would leave the layout: 400.
"""

from __future__ import annotations

import fnmatch
from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from kuberay.historyserver.layout import check_relative_path, check_segment
from kuberay.historyserver.server.context import (
    ApiError,
    current_session,
    envelope,
    json_response,
    query_bool,
    query_int,
    state_of,
)
from kuberay.historyserver.server.log_reads import (
    TAIL_WINDOW_CAP,
    RangeNotSatisfiable,
    object_size,
    parse_range,
    stream_range,
    tail_chunks,
)
from kuberay.historyserver.server.log_stream import primed, stream_answer, strip_ansi_stream
from kuberay.historyserver.server.logs import (
    DEFAULT_LINES,
    MAX_LINES,
    categorize,
    list_node_logs,
    relative_log_path,
    strip_ansi,
)
from kuberay.historyserver.server.session import SessionSnapshot
from kuberay.historyserver.storage.errors import NotFound

log = structlog.get_logger("historyserver.server.logs")

#: Set (``true``) on a ``lines=N`` answer cut at ``TAIL_WINDOW_CAP``: the lines asked for
#: did not fit, and the body is the log's last ``TAIL_WINDOW_CAP`` bytes.
TRUNCATED_HEADER = "X-Log-Truncated"


def _node(request: web.Request, snap: SessionSnapshot, *, required: bool = True) -> str | None:
    node_id = request.query.get("node_id", "").strip().lower()
    node_ip = request.query.get("node_ip", "").strip()
    if node_id:
        check_segment(node_id, "node id")
        if node_id not in snap.storage_nodes:
            raise ApiError(404, f"node {node_id} has no stored files in this session")
        return node_id
    if node_ip:
        for n in snap.nodes:
            if n["node_ip"] == node_ip and n["node_id"] in snap.storage_nodes:
                return str(n["node_id"])
        raise ApiError(404, f"no stored node with IP {node_ip} in this session")
    if required:
        raise ApiError(400, "node_id or node_ip is required")
    return None


async def list_logs(request: web.Request) -> web.Response:
    """``GET /api/v0/logs?node_id=|node_ip=&glob=``: files grouped by category."""
    snap = await current_session(request)
    node = _node(request, snap)
    assert node is not None
    names = await list_node_logs(
        state_of(request).store, snap, node, request.query.get("glob", "*")
    )
    return json_response(envelope({"result": categorize(names)}))


def _task_log(
    request: web.Request, snap: SessionSnapshot, suffix: str
) -> tuple[str | None, str, tuple[int, int] | None]:
    task_id = request.query["task_id"].strip().lower()
    attempt = query_int(request, "attempt_number", 0, lo=0, hi=1 << 31)
    task = snap.tasks.find(task_id, attempt)
    if task is None:
        raise ApiError(404, f"task {task_id} attempt {attempt} does not exist")
    info = task["task_log_info"] or {}
    path = info.get(f"std{suffix}_file")
    if not path:
        raise ApiError(404, f"task {task_id} has no recorded {suffix} log")
    start, end = info.get(f"std{suffix}_start"), info.get(f"std{suffix}_end")
    rng = (int(start), int(end)) if start is not None and end is not None else None
    return task["node_id"], relative_log_path(str(path)), rng


async def _worker_file(request: web.Request, snap: SessionSnapshot, node: str, pattern: str) -> str:
    names = await list_node_logs(state_of(request).store, snap, node, "*")
    matches = sorted(n for n in names if fnmatch.fnmatchcase(n, pattern))
    if not matches:
        raise ApiError(404, f"no stored log file matches {pattern} on node {node}")
    return matches[-1]


async def log_file(request: web.Request) -> web.StreamResponse:
    """``GET /api/v0/logs/file``: ``filename``, ``task_id`` (+``attempt_number``),
    ``actor_id`` or ``pid``; ``suffix`` (out/err), ``lines``, ``filter_ansi_code``,
    ``download_filename``."""
    snap = await current_session(request)
    store = state_of(request).store
    q = request.query
    suffix = q.get("suffix", "out")
    if suffix not in ("out", "err"):
        raise ApiError(400, f"suffix must be out or err, got {suffix!r}")
    lines = query_int(request, "lines", DEFAULT_LINES, lo=-1, hi=MAX_LINES)
    byte_range: tuple[int, int] | None = None
    node = _node(request, snap, required=False)
    if q.get("filename"):
        rel = check_relative_path(q["filename"])
    elif q.get("task_id"):
        task_node, rel, byte_range = _task_log(request, snap, suffix)
        node = node or task_node
        if node is None and len(snap.storage_nodes) == 1:
            node = snap.storage_nodes[0]
        lines = -1 if "lines" not in q else lines
    elif q.get("actor_id"):
        actor = snap.actors.get(q["actor_id"].strip().lower())
        if actor is None:
            raise ApiError(404, f"Actor {q['actor_id']} does not exist")
        node = node or actor["address"]["nodeId"] or None
        worker = check_segment(actor["address"]["workerId"] or "-", "worker id")
        if node is None:
            raise ApiError(404, f"actor {q['actor_id']} never ran on a node")
        rel = await _worker_file(request, snap, node, f"worker-{worker}-*.{suffix}")
    elif q.get("pid"):
        pid = query_int(request, "pid", 0, lo=1, hi=1 << 31)
        if node is None:
            raise ApiError(400, "node_id or node_ip is required with pid")
        rel = await _worker_file(request, snap, node, f"worker-*-{pid}.{suffix}")
    else:
        raise ApiError(400, "one of filename, task_id, actor_id or pid is required")
    if node is None:
        raise ApiError(400, "node_id or node_ip is required")
    if node not in snap.storage_nodes:
        raise ApiError(404, f"node {node} has no stored files in this session")
    key = snap.key.layout.log_key(snap.key.session, node, rel)
    size = await object_size(store, key)
    if size is None:
        raise ApiError(404, f"log file {rel} not found on node {node}")
    lo, hi = (
        (0, size) if byte_range is None else (min(byte_range[0], size), min(byte_range[1], size))
    )
    hi = max(lo, hi)
    download = q.get("download_filename")
    if download:
        download = check_segment(download, "download file name")
    ansi = query_bool(request, "filter_ansi_code", False)
    try:
        if lines >= 0:
            return await _tail_answer(request, key, lines, (lo, hi), download, ansi)
        return await _whole_answer(request, key, (lo, hi, size), download, ansi)
    except NotFound:
        raise ApiError(404, f"log file {rel} not found on node {node}") from None


async def _tail_answer(
    request: web.Request,
    key: str,
    lines: int,
    span: tuple[int, int],
    download: str | None,
    ansi: bool,
) -> web.StreamResponse:
    """The last ``lines`` lines of ``span`` (at most ``TAIL_WINDOW_CAP`` bytes; a cut tail
    is marked with the ``X-Log-Truncated`` header); a ``Range`` applies to the tail."""
    tail = await tail_chunks(state_of(request).store, key, lines, *span)
    extra = {TRUNCATED_HEADER: "true"} if tail.truncated else {}
    if tail.truncated:
        log.info("log tail cut at the window cap", key=key, lines=lines, cap=TAIL_WINDOW_CAP)
    chunks = list(tail.chunks)
    if ansi:
        chunks = [strip_ansi(b"".join(chunks))]
    if not download:
        return stream_answer(
            request,
            key,
            _iterate(chunks),
            length=1 + sum(map(len, chunks)),
            head=b"1",
            headers=extra,
        )
    data = b"".join(chunks)
    del chunks
    total = len(data)
    wanted = request.headers.get("Range")
    try:
        part = parse_range(wanted, total) if wanted else None
    except RangeNotSatisfiable:
        return _unsatisfiable(total)
    if part is not None:
        data = data[part[0] : part[1]]
    return _download(request, key, _iterate([data]), len(data), download, part, total, extra)


async def _whole_answer(
    request: web.Request,
    key: str,
    span: tuple[int, int, int],
    download: str | None,
    ansi: bool,
) -> web.StreamResponse:
    """All of ``[lo, hi)`` of the ``size``-byte object, streamed. A download honours a
    ``Range`` (read from storage), except with the ANSI filter, whose output length is not
    known before it is sent (the whole filtered file is sent, ``200``, chunked)."""
    store = state_of(request).store
    lo, hi, size = span
    total = hi - lo
    wanted = request.headers.get("Range") if download and not ansi else None
    try:
        part = parse_range(wanted, total) if wanted else None
    except RangeNotSatisfiable:
        return _unsatisfiable(total)
    first, last = (lo, hi) if part is None else (lo + part[0], lo + part[1])
    chunks = await primed(stream_range(store, key, first, last, size))
    length: int | None = last - first
    if ansi:
        chunks, length = strip_ansi_stream(chunks), None
    if download:
        return _download(request, key, chunks, length, download, part, total, {})
    return stream_answer(
        request, key, chunks, length=None if length is None else 1 + length, head=b"1"
    )


async def _iterate(chunks: list[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` as a stream, emptied as it is sent."""
    while chunks:
        yield chunks.pop(0)


def _unsatisfiable(total: int) -> web.Response:
    """``416`` for a ``Range`` past the end of a ``total``-byte representation."""
    return web.Response(
        status=416, headers={"Content-Range": f"bytes */{total}", "Accept-Ranges": "bytes"}
    )


def _download(
    request: web.Request,
    key: str,
    chunks: AsyncIterator[bytes],
    length: int | None,
    name: str,
    part: tuple[int, int] | None,
    total: int,
    extra: dict[str, str],
) -> web.Response:
    """An attachment; a ``206`` with ``Content-Range`` when ``part`` was asked for. Ranges
    are offered (``Accept-Ranges``) when the length is known."""
    headers = {"Content-Disposition": f'attachment; filename="{name}"', **extra}
    if length is not None:
        headers["Accept-Ranges"] = "bytes"
    if part is not None:
        headers["Content-Range"] = f"bytes {part[0]}-{part[1] - 1}/{total}"
    return stream_answer(
        request,
        key,
        chunks,
        length=length,
        status=206 if part is not None else 200,
        content_type="application/octet-stream",
        headers=headers,
    )


def add_routes(app: web.Application) -> None:
    """Add this module's routes to ``app``."""
    app.router.add_get("/api/v0/logs", list_logs)
    app.router.add_get("/api/v0/logs/file", log_file)
