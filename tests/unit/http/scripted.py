"""Scripted HTTP/1.1 servers on 127.0.0.1 for the client's tests: each connection runs a
script that reads requests and writes whatever bytes the test wants (well-formed or not)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Server:
    """A TCP server running ``script`` per connection; counts connections and requests."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.heads: list[bytes] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def read_head(self, reader: asyncio.StreamReader) -> bytes:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        if length:
            await reader.readexactly(length)
        return head

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(Exception):
            await self.script(reader, writer)
        writer.close()


@contextlib.asynccontextmanager
async def serving(script: Callable[[Server], Script], **kw: object) -> AsyncIterator[Server]:
    server = Server(lambda r, w: script(server)(r, w))
    srv = await asyncio.start_server(server._serve, "127.0.0.1", 0, **kw)  # type: ignore[arg-type]
    server.port = srv.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        srv.close()


def answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", *headers]
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def keep_answering(body: bytes, *headers: str) -> Callable[[Server], Script]:
    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while True:
                await server.read_head(reader)
                writer.write(answer(body, *headers))
                await writer.drain()

        return run

    return script


def sends(data: bytes, *, then_stall: bool = False) -> Callable[[Server], Script]:
    """Reads one request, sends ``data``, then hangs up (or stalls with the connection open)."""

    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_head(reader)
            writer.write(data)
            await writer.drain()
            if then_stall:
                await asyncio.sleep(30)

        return run

    return script
