"""One open connection: its asyncio streams and the h11 state machine that frames it.

Every byte read from the socket goes into h11 (:meth:`Connection.next_event`), which
parses status lines, headers, Content-Length, chunked bodies and trailers (RFC 9112) and
refuses what is malformed; this module only moves bytes and maps h11's verdicts to
:mod:`kuberay.http.errors`.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Protocol

import h11

from kuberay.http.errors import ProtocolError, ServerDisconnected

#: Bytes asked of the socket per read.
READ_SIZE = 256 * 1024
#: Most bytes of an answer's head (status line and headers) h11 buffers before refusing it.
MAX_HEAD = 256 * 1024


class ConnectionHome(Protocol):
    """Where a response's connection goes when the response is done with it (the pool)."""

    def give_back(self, conn: Connection) -> None:
        """Keep ``conn`` for another request (it ended its exchange cleanly)."""

    def drop(self, conn: Connection) -> None:
        """Close ``conn`` and forget it."""


class Connection:
    """An open connection (``reader``/``writer``) with its h11 client state (``h11``),
    whether it has served a request (``reused``) and, while idle in a pool, the timer that
    closes it (``expiry``)."""

    __slots__ = ("expiry", "h11", "reader", "reused", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self.reused = False
        self.expiry: asyncio.TimerHandle | None = None

    def usable(self) -> bool:
        """Open at our end, not closed by the server, and holding no unread byte (a server
        that sent something while the connection was idle is not trusted with a request)."""
        reader = self.reader
        unread = getattr(reader, "_buffer", b"")  # asyncio keeps no public count of it
        return not (self.writer.is_closing() or reader.at_eof() or reader.exception() or unread)

    def reusable(self) -> bool:
        """The exchange just read ended cleanly and both sides may go on (h11 says so, no
        ``Connection: close``), and no byte past the answer was received: then h11 is reset
        for the next request and True is returned."""
        machine = self.h11
        if machine.our_state is not h11.DONE or machine.their_state is not h11.DONE:
            return False
        if machine.trailing_data[0]:
            return False
        machine.start_next_cycle()
        return self.usable()

    def ready_event(self) -> h11.Event | None:
        """The next event h11 can give from the bytes already received, or None when it
        needs more (nothing is consumed then); raises as :meth:`next_event`."""
        machine = self.h11
        try:
            event = machine.next_event()
        except h11.RemoteProtocolError as exc:
            if machine.trailing_data[1]:
                raise ServerDisconnected(f"the server closed the connection: {exc}") from exc
            raise ProtocolError(str(exc)) from exc
        if event is h11.NEED_DATA:
            return None
        if event is h11.PAUSED:
            raise ProtocolError("the server went on past the end of its answer")
        if isinstance(event, h11.ConnectionClosed):
            raise ServerDisconnected("the server closed the connection without an answer")
        assert isinstance(event, h11.Event)
        return event

    async def next_event(self, read_timeout: float | None = None) -> h11.Event:
        """The next event h11 reads off the connection (reading the socket as it needs);
        raises :class:`ServerDisconnected` when the server closed it inside a message and
        :class:`ProtocolError` when the answer is not valid HTTP/1.1."""
        while (event := self.ready_event()) is None:
            try:
                if read_timeout is None:
                    data = await self.reader.read(READ_SIZE)
                else:
                    async with asyncio.timeout(read_timeout):
                        data = await self.reader.read(READ_SIZE)
            except (ConnectionError, ssl.SSLError) as exc:
                raise ServerDisconnected(f"connection lost: {exc!r}") from exc
            self.h11.receive_data(data)  # b"": the server closed its end
        return event

    def abort(self) -> None:
        """Drop the connection now (no TLS close-notify, no waiting)."""
        transport = self.writer.transport
        if not transport.is_closing():
            transport.abort()


__all__ = ["MAX_HEAD", "READ_SIZE", "Connection", "ConnectionHome"]
