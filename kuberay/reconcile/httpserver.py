"""/metrics, /healthz and /readyz over a small asyncio HTTP/1.1 server.

Health endpoints follow controller-runtime: the aggregate runs every check and
answers 200 ``ok`` or 500 with ``[+]name ok`` / ``[-]name failed: reason`` lines;
``/<endpoint>/<name>`` runs one check; ``?exclude=name`` skips one; ``?verbose``
lists every check even on success. A bind address of ``0`` or empty disables a
server.

The server answers GET and HEAD (other methods: 405), unknown paths with 404,
keeps HTTP/1.1 connections alive (a scraper's reuse its connection) and closes one
whose request is malformed, larger than 64 KiB of head, or idle for 75 s. It is not
aiohttp's server: importing ``aiohttp.web`` costs an idle operator about 2 MiB for
these three read-only paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import prometheus_client
import structlog

log = structlog.get_logger("kuberay.httpserver")

Check = Callable[[], Awaitable[None] | None]

#: Most bytes of request line and headers read; a longer head is answered 431 and closed.
MAX_HEAD = 64 * 1024
#: Seconds a connection may wait for (the rest of) a request before it is closed.
IDLE_TIMEOUT = 75.0

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
    """An app serving ``/metrics`` from ``registry``."""

    async def metrics(request: Request) -> Response:
        body = prometheus_client.generate_latest(registry)
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
    """One listening socket for ``app``; ``port`` is known after :meth:`start` (port 0)."""

    def __init__(self, app: App, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Listen (``SO_REUSEADDR``, as aiohttp's site)."""
        self._server = await asyncio.start_server(
            self._serve, self.host, self.port, reuse_address=True, limit=MAX_HEAD
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
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._one(reader, writer):
                pass
        except (asyncio.CancelledError, ConnectionError, TimeoutError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; whether the connection stays open for another."""
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT)
        except asyncio.IncompleteReadError:
            return False  # closed by the peer
        except asyncio.LimitOverrunError:
            await _write(writer, "GET", Response.text("431: Request Header Fields Too Large", 431))
            return False
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            await _write(writer, "GET", Response.text("400: Bad Request", 400))
            return False
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if "transfer-encoding" in headers:  # GET/HEAD carry no body; not read
            await _write(writer, method, Response.text("400: Bad Request", 400))
            return False
        length = headers.get("content-length", "0")
        if not length.isdigit():
            await _write(writer, method, Response.text("400: Bad Request", 400))
            return False
        if int(length):
            await asyncio.wait_for(reader.readexactly(int(length)), IDLE_TIMEOUT)
        split = urllib.parse.urlsplit(target)
        request = Request(
            method,
            urllib.parse.unquote(split.path),
            urllib.parse.parse_qs(split.query, keep_blank_values=True),
        )
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        try:
            response = await self.app.dispatch(request)
        except Exception:  # a handler's bug: answered 500, as aiohttp's server does
            log.exception("HTTP handler failed", method=method, path=request.path)
            response = Response.text("500 Internal Server Error", 500)
        await _write(writer, method, response, keep_alive)
        return keep_alive


async def _write(
    writer: asyncio.StreamWriter, method: str, response: Response, keep_alive: bool = False
) -> None:
    head = (
        f"HTTP/1.1 {response.status} {_REASONS.get(response.status, '')}\r\n"
        f"Content-Type: {response.content_type}\r\n"
        f"Content-Length: {len(response.body)}\r\n"
        + ("" if keep_alive else "Connection: close\r\n")
        + ("Allow: GET, HEAD\r\n" if response.status == 405 else "")
        + "\r\n"
    )
    writer.write(head.encode("latin-1") + (b"" if method == "HEAD" else response.body))
    await writer.drain()
