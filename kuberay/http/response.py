"""An answer whose head has arrived: its body is read in pieces, decoded, and capped.

The body's framing (Content-Length, chunked, up to the connection's end) is h11's; this
module decodes ``gzip``/``deflate`` in pieces of at most :data:`DECODE_PIECE` bytes (so a
small compressed answer cannot expand in one step) and enforces a reader's cap
(``read(limit=...)``) on the wire and after decoding.
"""

from __future__ import annotations

import zlib
from typing import Any

import h11

from kuberay.http.connection import Connection, ConnectionHome
from kuberay.http.errors import BodyTooLarge
from kuberay.http.headers import Headers

#: Most decoded bytes one decompression step yields.
DECODE_PIECE = 256 * 1024


class Response:
    """An answer: ``status``, ``reason``, ``headers`` and a body read with :meth:`read`,
    :meth:`readline` or :meth:`read_some`. Close it (:meth:`close`) to abort, or
    :meth:`release` when done (``async with`` releases)."""

    def __init__(
        self, pool: ConnectionHome, conn: Connection, status: int, reason: str, headers: Headers
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        #: Seconds each wait for body data may take (None: no bound).
        self.read_timeout: float | None = None
        self._pool = pool
        self._conn: Connection | None = conn
        self._pending = bytearray()
        self._done = False
        #: Bytes of body received as sent (before decoding).
        self.wire_bytes = 0
        self._decoder: Any = None
        self._tail = b""  # compressed bytes the decoder has not consumed yet
        encoding = (headers.get("content-encoding") or "").strip().lower()
        if encoding == "gzip":
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj()

    @property
    def closed(self) -> bool:
        """The body is fully read or the response was closed."""
        return self._conn is None or (self._done and not self._pending and not self._tail)

    async def _wire(self) -> bytes:
        """The next piece of the body as sent (before decoding): all of it that has been
        received (at most one socket read past what was buffered), b"" at its end. When the
        end has been received too, the response is done (:attr:`closed` once read)."""
        conn = self._conn
        while not self._done and conn is not None:
            event = await conn.next_event(self.read_timeout)
            if isinstance(event, h11.Data):
                parts = [event.data]
                while (more := conn.ready_event()) is not None:  # received with it
                    if not isinstance(more, h11.Data):
                        self._done = True  # EndOfMessage, the only other event in a body
                        break
                    parts.append(more.data)
                data = b"".join(parts)
                if data:
                    self.wire_bytes += len(data)
                    return data
            elif isinstance(event, h11.EndOfMessage):
                self._done = True  # trailers (event.headers) are read past
        return b""

    async def read_some(self) -> bytes:
        """The next decoded piece of the body (at most :data:`DECODE_PIECE` bytes when
        decoding); b"" at its end (then the connection goes back to the pool)."""
        while True:
            if self._conn is None:  # released (all read, the decoder flushed) or closed
                return b""
            if self._decoder is None:
                data = await self._wire()
            else:
                if not self._tail:
                    self._tail = await self._wire()
                data = self._decoder.decompress(self._tail, DECODE_PIECE)
                self._tail = self._decoder.unconsumed_tail
                if self._done and not self._tail:
                    data += self._decoder.flush()
            if self._done and not self._tail:
                self.release()
                return data
            if data:
                return data

    async def read(self, limit: int | None = None) -> bytes:
        """The rest of the body. With ``limit``, :class:`BodyTooLarge` (and the connection
        closed) as soon as more than ``limit`` bytes arrive or decode."""
        parts = [bytes(self._pending)]
        size = len(self._pending)
        self._pending.clear()
        while data := await self.read_some():
            size += len(data)
            if limit is not None and (size > limit or self.wire_bytes > limit):
                self.close()
                raise BodyTooLarge(limit, "on the wire" if self.wire_bytes > limit else "decoded")
            parts.append(data)
        return b"".join(parts)

    async def readline(self) -> bytes:
        """The next line of the body with its ``\\n``; the rest (maybe without one) at
        the end; b"" after it."""
        while True:
            end = self._pending.find(b"\n")
            if end >= 0:
                line = bytes(self._pending[: end + 1])
                del self._pending[: end + 1]
                return line
            data = await self.read_some()
            if not data:
                line = bytes(self._pending)
                self._pending.clear()
                return line
            self._pending += data

    def release(self) -> None:
        """Give the connection back to the pool if the exchange ended cleanly and the
        connection may carry another (:meth:`Connection.reusable`), else close it."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._done and conn.reusable():
            self._pool.give_back(conn)
        else:
            self._pool.drop(conn)

    def close(self) -> None:
        """Abort: a read in progress ends (with b"" or :class:`ServerDisconnected`)."""
        conn, self._conn = self._conn, None
        self._done = True
        self._tail = b""
        if conn is not None:
            self._pool.drop(conn)

    async def __aenter__(self) -> Response:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()


__all__ = ["DECODE_PIECE", "Response"]
