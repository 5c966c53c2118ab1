"""An HTTP/1.1 server that records every request it receives, framed by h11 (so a request
smuggled inside another shows up as a second request, as a real server would read it).

It answers each request with a ``404`` Kubernetes ``Status`` (JSON), which every client under
test turns into a typed error; the tests look only at what arrived. It runs its own event
loop on a daemon thread, so synchronous Hypothesis tests can drive many examples against it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

import h11

NOT_FOUND = (
    b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,'
    b'"message":"not found"}'
)


class RecordingServer:
    """``requests``: (method, raw request target) of every request received, in order."""

    def __init__(self) -> None:
        self.requests: list[tuple[bytes, bytes]] = []
        self.port = 0
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def snapshot(self) -> list[tuple[bytes, bytes]]:
        with self._lock:
            return list(self.requests)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER)
        with contextlib.suppress(Exception):
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await reader.read(65536))
                    continue
                if isinstance(event, h11.Request):
                    with self._lock:
                        self.requests.append((bytes(event.method), bytes(event.target)))
                    continue
                if isinstance(event, h11.EndOfMessage):
                    headers = [
                        ("Content-Type", "application/json"),
                        ("Content-Length", str(len(NOT_FOUND))),
                    ]
                    writer.write(conn.send(h11.Response(status_code=404, headers=headers)) or b"")
                    writer.write(conn.send(h11.Data(data=NOT_FOUND)) or b"")
                    writer.write(conn.send(h11.EndOfMessage()) or b"")
                    await writer.drain()
                    conn.start_next_cycle()
                    continue
                if isinstance(event, h11.ConnectionClosed):
                    break
        writer.close()

    def start(self) -> RecordingServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


@contextlib.contextmanager
def recording_server() -> Iterator[RecordingServer]:
    """A started :class:`RecordingServer`, stopped at the end."""
    server = RecordingServer().start()
    try:
        yield server
    finally:
        server.stop()
