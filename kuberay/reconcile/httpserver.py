"""/metrics, /healthz and /readyz over a small asyncio HTTP/1.1 server.

Health endpoints follow controller-runtime: the aggregate runs every check and
answers 200 ``ok`` or 500 with ``[+]name ok`` / ``[-]name failed: reason`` lines;
``/<endpoint>/<name>`` runs one check; ``?exclude=name`` skips one; ``?verbose``
lists every check even on success. A bind address of ``0`` or empty disables a
server.

The server answers GET and HEAD (other methods: 405 with ``Allow: GET, HEAD``),
unknown paths with 404, keeps HTTP/1.1 connections alive (a scraper's reuse its
connection) and closes one whose request is malformed (400: h11 refuses it, e.g. a bad
request line, control characters, a Content-Length that is not digits, an HTTP/1.1
request without Host), larger than 64 KiB of head (431), or idle for 75 s. It reads no
request body: a GET or HEAD announcing one is answered 400 and the connection closed
with the body unread. At most 64 connections are served at once (:data:`MAX_CONNECTIONS`).
HTTP/1.0 connections close after one answer (h11 keeps no HTTP/1.0 connection alive).

The framing is h11's: no hand-written parser. It is not aiohttp's server: importing
``aiohttp.web`` costs an idle operator about 2 MiB for these three read-only paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import h11
import prometheus_client
import structlog

from kuberay.reconcile.exposition import go_exposition

log = structlog.get_logger("kuberay.httpserver")

Check = Callable[[], Awaitable[None] | None]

#: Most bytes of request line and headers read; a longer head is answered 431 and closed.
MAX_HEAD = 64 * 1024
#: Seconds a connection may wait for (the rest of) a request's head, or for the peer to
#: take an answer, before it is closed.
IDLE_TIMEOUT = 75.0
#: Bytes read from a socket at a time (and the stream buffer's limit, past twice which
#: the socket is paused).
READ_SIZE = 16 * 1024
#: Most connections served at once. A new one beyond it first takes the place of the
#: longest-idle kept-alive connection (one waiting, with no byte yet, for its next
#: request), so idle connections held open cannot keep a kubelet probe out; when every
#: connection is busy inside a request, the new one is closed at once, unread and
#: unanswered (the peer sees EOF or a reset), and the open ones are served as before.
MAX_CONNECTIONS = 64

_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
}
_TEXT = "text/plain; charset=utf-8"


def parse_bind_address(addr: str) -> tuple[str, int] | None:
    """``":8080"`` -> ``("0.0.0.0", 8080)``; ``"127.0.0.1:0"`` keeps port 0; ``"0"``/"" -> None."""
    if addr in ("", "0"):
        return None
    host, _, port = addr.rpartition(":")
    return (host or "0.0.0.0"), int(port)


@dataclass
class Request:
    """A parsed request: ``path`` percent-decoded, ``query`` name -> values (a bare
    ``?verbose`` is ``{"verbose": [""]}``), ``match_info`` the route's ``{name}``."""

    method: str
    path: str
    query: dict[str, list[str]] = field(default_factory=dict)
    match_info: dict[str, str] = field(default_factory=dict)


@dataclass
class Response:
    """An answer: status, body and its content type."""

    status: int = 200
    body: bytes = b""
    content_type: str = _TEXT

    @classmethod
    def text(cls, text: str, status: int = 200) -> Response:
        """A ``text/plain; charset=utf-8`` answer."""
        return cls(status, text.encode(), _TEXT)


Handler = Callable[[Request], Awaitable[Response]]


class App:
    """GET routes: exact paths, and ``prefix/{name}`` for one more path segment."""

    def __init__(self) -> None:
        self.exact: dict[str, Handler] = {}
        self.named: dict[str, Handler] = {}

    def add_get(self, path: str, handler: Handler) -> None:
        """Route GET (and HEAD) of ``path``; ``/a/{name}`` matches ``/a/x`` with name ``x``."""
        if path.endswith("/{name}"):
            self.named[path[: -len("{name}")]] = handler
        else:
            self.exact[path] = handler

    async def dispatch(self, request: Request) -> Response:
        """The route's answer; 404 for an unknown path, 405 for a method other than GET/HEAD."""
        handler = self.exact.get(request.path)
        if handler is None:
            prefix, _, name = request.path.rpartition("/")
            handler = self.named.get(prefix + "/") if name else None
            if handler is not None:
                request.match_info["name"] = name
        if handler is None:
            return Response.text("404: Not Found", 404)
        if request.method not in ("GET", "HEAD"):
            return Response.text("405: Method Not Allowed", 405)
        return await handler(request)


class ProbeChecks:
    """Named checks for one endpoint (healthz or readyz)."""

    def __init__(self) -> None:
        self.checks: dict[str, Check] = {}

    def add(self, name: str, check: Check) -> None:
        """Register ``check``: it passes by returning, fails by raising."""
        self.checks[name] = check

    async def handle(self, request: Request) -> Response:
        """Run the selected checks: 200 ``ok`` (or the list with ``?verbose``), 500 naming
        the failed ones, 404 for an unknown ``/<endpoint>/<name>``."""
        name = request.match_info.get("name")
        if name:
            if name not in self.checks:
                return Response.text(f"no check named {name}\n", 404)
            selected = {name: self.checks[name]}
        else:
            excluded = set(request.query.get("exclude", []))
            selected = {k: v for k, v in self.checks.items() if k not in excluded}
        lines: list[str] = []
        failed = False
        for check_name, check in selected.items():
            try:
                result = check()
                if result is not None:
                    await result
                lines.append(f"[+]{check_name} ok")
            except Exception as exc:
                failed = True
                lines.append(f"[-]{check_name} failed: {exc}")
        if failed:
            return Response.text("\n".join(lines) + "\nhealthz check failed\n", 500)
        if "verbose" in request.query:
            return Response.text("\n".join(lines) + "\nok\n")
        return Response.text("ok")


def metrics_app(registry: prometheus_client.CollectorRegistry) -> App:
    """An app serving ``/metrics`` from ``registry`` as controller-runtime does (no
    ``_created`` series: :func:`~kuberay.reconcile.exposition.go_exposition`)."""

    async def metrics(request: Request) -> Response:
        body = go_exposition(registry)
        return Response(200, body, prometheus_client.CONTENT_TYPE_LATEST)

    app = App()
    app.add_get("/metrics", metrics)
    return app


def probes_app(healthz: ProbeChecks, readyz: ProbeChecks) -> App:
    """An app serving ``/healthz`` and ``/readyz`` (and one check by name)."""
    app = App()
    app.add_get("/healthz", healthz.handle)
    app.add_get("/healthz/{name}", healthz.handle)
    app.add_get("/readyz", readyz.handle)
    app.add_get("/readyz/{name}", readyz.handle)
    return app


class Server:
    """One listening socket for ``app``; ``port`` is known after :meth:`start` (port 0).

    HTTP/1.1 framing is h11's (server role). Per connection the server reads at most
    ``MAX_HEAD + 1`` bytes for one request (its head, and what was pipelined after it is
    kept for the next), and the stream's buffer pauses the socket past ``2 * READ_SIZE``
    (asyncio reads up to 256 KiB at once; the peer's further bytes wait in the kernel).
    It never reads a request body: a GET/HEAD with one (``Content-Length`` > 0 or any
    ``Transfer-Encoding``) is answered 400, another method with one gets its 404/405,
    and either connection is closed with the body unread. At most
    :data:`MAX_CONNECTIONS` connections are served at once.
    """

    def __init__(self, app: App, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        #: Connections waiting, with no byte yet, for their next request (oldest first).
        self._idle: dict[asyncio.Task[None], None] = {}
        self._refusing = False

    async def start(self) -> None:
        """Listen (``SO_REUSEADDR``, as aiohttp's site)."""
        self._server = await asyncio.start_server(
            self._serve, self.host, self.port, reuse_address=True, limit=READ_SIZE
        )
        sockets = self._server.sockets
        if sockets:
            self.port = sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and close every open connection."""
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)
        self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._connections) >= MAX_CONNECTIONS and self._idle:
            oldest = next(iter(self._idle))
            del self._idle[oldest]
            oldest.cancel()  # its peer sees the close a kept-alive connection may always see
            self._connections.discard(oldest)
        if len(self._connections) >= MAX_CONNECTIONS:
            if not self._refusing:  # once per episode: a flood must not flood the log
                log.warning("Refusing HTTP connections", limit=MAX_CONNECTIONS, port=self.port)
                self._refusing = True
            writer.close()  # unread and unanswered (see MAX_CONNECTIONS)
            return
        self._refusing = False
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        feed = _Reader(conn, reader)
        try:
            while await self._one(conn, feed, writer):
                conn.start_next_cycle()
        except (asyncio.CancelledError, ConnectionError, TimeoutError, h11.ProtocolError):
            pass
        finally:
            self._connections.discard(task)
            self._idle.pop(task, None)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    @staticmethod
    def conn_has_data(conn: h11.Connection, feed: _Reader) -> bool:
        """Whether bytes of a next request are already buffered (pipelined)."""
        return bool(conn.trailing_data[0]) or bool(getattr(feed.reader, "_buffer", b""))

    async def _one(self, conn: h11.Connection, feed: _Reader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; whether the connection stays open for another."""
        deadline = asyncio.get_running_loop().time() + IDLE_TIMEOUT
        feed.fed = 0
        task = asyncio.current_task()
        assert task is not None
        if not self.conn_has_data(conn, feed):
            self._idle[task] = None
        try:
            event = await feed.next_event(deadline, lambda: self._idle.pop(task, None))
        except h11.RemoteProtocolError as exc:
            # 431 for a head over MAX_HEAD; anything else h11 refuses (request line,
            # header syntax, Content-Length, Transfer-Encoding other than chunked) is 400.
            status = 431 if exc.error_status_hint == 431 else 400
            log.debug("Malformed HTTP request", status=status, reason=str(exc))
            response = Response.text(f"{status}: {_REASONS[status]}", status)
            await _send(conn, writer, "GET", response, close=True)
            return False
        if not isinstance(event, h11.Request):
            return False  # ConnectionClosed: the peer is done
        method = event.method.decode("ascii")
        if _has_body(event):  # not read: answered and closed
            if method in ("GET", "HEAD"):
                await _send(conn, writer, method, Response.text("400: Bad Request", 400), True)
                return False
            request = _request(event)
            await _send(conn, writer, method, await self.app.dispatch(request), close=True)
            return False
        if not isinstance(await feed.next_event(deadline), h11.EndOfMessage):
            return False  # cannot happen: h11 frames a bodiless request as Request, EOM
        request = _request(event)
        try:
            response = await self.app.dispatch(request)
        except Exception:  # a handler's bug: answered 500, as aiohttp's server does
            log.exception("HTTP handler failed", method=method, path=request.path)
            response = Response.text("500 Internal Server Error", 500)
        await _send(conn, writer, method, response)
        return conn.our_state is h11.DONE and conn.their_state is h11.DONE


class _Reader:
    """Feeds h11 from a stream, :data:`READ_SIZE` at a time, only while it needs data,
    and no more than ``MAX_HEAD + 1`` bytes per request: h11 bounds an incomplete head
    (``max_incomplete_event_size``), this bounds a complete one that arrived at once."""

    def __init__(self, conn: h11.Connection, reader: asyncio.StreamReader) -> None:
        self.conn = conn
        self.reader = reader
        self.fed = 0

    async def next_event(
        self, deadline: float, on_data: Callable[[], object] | None = None
    ) -> h11.Event:
        """h11's next event; :class:`h11.RemoteProtocolError` for a malformed or oversized
        head, :class:`TimeoutError` past ``deadline`` (the loop's clock). ``on_data`` is
        called when bytes arrive (the connection is no longer idle)."""
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                budget = MAX_HEAD + 1 - self.fed
                if budget <= 0:
                    raise h11.RemoteProtocolError("request head too large", 431)
                async with asyncio.timeout_at(deadline):
                    data = await self.reader.read(min(READ_SIZE, budget))
                self.fed += len(data)
                if on_data is not None:
                    on_data()
                self.conn.receive_data(data)  # b"": the peer closed
            elif event is h11.PAUSED:  # only after a request, where no caller asks
                raise h11.RemoteProtocolError("unexpected pipelined data", 400)
            else:
                assert isinstance(event, h11.Event)
                return event


def _has_body(request: h11.Request) -> bool:
    """Whether ``request`` announces a body (h11 has checked the headers' syntax)."""
    for name, value in request.headers:
        if name == b"transfer-encoding" or (name == b"content-length" and int(value)):
            return True
    return False


def _request(event: h11.Request) -> Request:
    """The :class:`Request` of h11's event (h11 allows only visible ASCII in targets)."""
    split = urllib.parse.urlsplit(event.target.decode("ascii"))
    return Request(
        event.method.decode("ascii"),
        urllib.parse.unquote(split.path),
        urllib.parse.parse_qs(split.query, keep_blank_values=True),
    )


async def _send(
    conn: h11.Connection,
    writer: asyncio.StreamWriter,
    method: str,
    response: Response,
    close: bool = False,
) -> None:
    """Write ``response`` (no body for HEAD); ``close`` adds ``Connection: close``."""
    headers = [
        (b"Content-Type", response.content_type.encode("latin-1")),
        (b"Content-Length", str(len(response.body)).encode()),
    ]
    if close:
        headers.append((b"Connection", b"close"))
    if response.status == 405:
        headers.append((b"Allow", b"GET, HEAD"))
    reason = _REASONS.get(response.status, "").encode()
    out = conn.send(h11.Response(status_code=response.status, headers=headers, reason=reason))
    chunks = [out or b""]
    if method != "HEAD" and response.body:
        chunks.append(conn.send(h11.Data(data=response.body)) or b"")
    chunks.append(conn.send(h11.EndOfMessage()) or b"")
    writer.write(b"".join(chunks))
    async with asyncio.timeout(IDLE_TIMEOUT):  # a peer that never reads is dropped
        await writer.drain()
