"""Streamed ``/api/v0/logs/file`` answers: a whole log (or task slice) goes from the store to
the client in chunks, never whole in memory.

* ``primed``: a chunk stream whose first chunk is already read, so a missing object is a
  404 before any byte of the answer is sent.
* ``strip_ansi_stream``: ``strip_ansi`` over a stream; an escape sequence split between
  chunks is held back (at most :data:`ANSI_CARRY_MAX` bytes) and stripped whole.
* ``stream_answer``: the answer over a stream. It is sent after the handler returns, so the
  handler deadline does not cut a slow download short. A store failure half-way is logged
  and the connection closed, so the client sees a short body (with ``Content-Length``) or
  a chunked body without its last chunk: never a body that looks complete.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping

import structlog
from aiohttp import web
from aiohttp.payload import AsyncIterablePayload

from kuberay.historyserver.server.logs import strip_ansi
from kuberay.historyserver.storage.errors import StorageError

log = structlog.get_logger("historyserver.server.logs")

#: The longest unfinished escape sequence held back between chunks; a longer one (no
#: terminal writes them) is passed through as it is.
ANSI_CARRY_MAX = 4096
_ANSI_OPEN = re.compile(rb"\x1b(?:\[[0-9;?]*[ -/]*)?\Z")


async def primed(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` with its first chunk read now (raising what reading it raises)."""
    first = await anext(chunks, None)

    async def rest() -> AsyncIterator[bytes]:
        if first is not None:
            yield first
        async for chunk in chunks:
            yield chunk

    return rest()


async def strip_ansi_stream(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``strip_ansi`` of the joined stream, chunk by chunk (equal to it for sequences up to
    :data:`ANSI_CARRY_MAX` bytes)."""
    carry = b""
    async for chunk in chunks:
        data = carry + chunk
        carry = b""
        at = data.rfind(b"\x1b", max(0, len(data) - ANSI_CARRY_MAX))
        if at >= 0 and _ANSI_OPEN.match(data, at):
            data, carry = data[:at], data[at:]
        out = strip_ansi(data)
        if out:
            yield out
    if carry:
        yield strip_ansi(carry)


async def _guarded(
    request: web.Request, key: str, head: bytes, chunks: AsyncIterator[bytes]
) -> AsyncIterator[bytes]:
    """``head`` then ``chunks``; a storage failure is logged and ends the connection."""
    if head:
        yield head
    try:
        async for chunk in chunks:
            yield chunk
    except StorageError as exc:
        log.error("log stream failed; closing the connection", key=key, error=str(exc))
        if request.transport is not None:
            request.transport.close()
        raise ConnectionResetError(f"storage failed while streaming {key}") from exc


def stream_answer(
    request: web.Request,
    key: str,
    chunks: AsyncIterator[bytes],
    *,
    length: int | None,
    head: bytes = b"",
    status: int = 200,
    content_type: str = "text/plain",
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """A response streaming ``head`` then ``chunks`` (read from ``key``): ``length`` is
    the whole body's size when known (``Content-Length``), else it is sent chunked."""
    all_headers = dict(headers or {})
    if length is not None:
        all_headers["Content-Length"] = str(length)
    response = web.Response(status=status, headers=all_headers)
    response.body = AsyncIterablePayload(
        _guarded(request, key, head, chunks), content_type=content_type
    )
    return response
