"""A small asyncio HTTP/1.1 client for one origin: what an apiserver client needs, no more.

Why not aiohttp for the apiserver and the Ray dashboards: an idle operator's memory is mostly
the code it loaded, and aiohttp's client (with yarl, multidict, its cookie, multipart,
websocket and happy-eyeballs modules) costs about 9 MiB of it; the operator asks servers for
JSON and streams watch lines (:mod:`.origins` keeps a pool per dashboard address).
aiohttp stays where its other parts are used (``kubectl ray``'s log streams and
port-forwards), loaded when first used.

Contracts of :class:`ConnectionPool`:

* One origin (``scheme://host:port``); ``https`` with the given :class:`ssl.SSLContext`
  and server name (``tls-server-name``, else the host). Every socket is made by
  ``socket_factory`` (the transport sets Go's TCP keepalive) and connected to each
  resolved address in turn; a host name's resolution time goes to ``on_dns``. A name in the
  ``.invalid`` domain fails at once without a lookup (RFC 6761), as does the proxy's.
* Through an HTTP proxy when ``proxy`` is set: ``CONNECT`` for an ``https`` origin (then
  TLS inside the tunnel), absolute-form request targets for ``http``; the proxy URL's
  user and password become ``Proxy-Authorization: Basic``.
* Connections are kept alive and reused (the most recently used first); one unused for
  ``idle_timeout`` seconds is closed, and an idle one the server has closed is dropped
  before use, and a GET, HEAD, PUT or DELETE that finds its reused connection closed
  before any answer byte is sent again once on a new connection (as Go's transport).
* Bodies: ``Content-Length``, ``chunked`` (pieces as they arrive: a watch's events) or
  up to the connection's end; ``gzip``/``deflate`` answers are decoded
  (``Accept-Encoding: gzip`` is sent). A response must be read to its end or closed;
  :meth:`Response.release` returns its connection to the pool only when it was.
* Failures raise :class:`HTTPClientError` subclasses: :class:`ConnectError` (with the
  ``OSError``: refused, unknown host, TLS), :class:`ProxyError`,
  :class:`ServerDisconnected`, :class:`ProtocolError`. Time limits are the caller's
  (``asyncio.timeout``); :attr:`Response.read_timeout` bounds each wait for body data.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import socket
import ssl
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterable
from typing import Any

#: Bytes asked of the connection per body read.
READ_SIZE = 256 * 1024
#: The stream buffer's limit (a status line or header block longer than this is refused).
LINE_LIMIT = 256 * 1024
#: Seconds an unused kept-alive connection stays open (aiohttp's default; each idle TLS
#: connection holds buffers and OpenSSL state on both ends).
IDLE_TIMEOUT = 15.0
#: Methods sent again after their reused connection turned out closed.
RETRIABLE = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class HTTPClientError(Exception):
    """Any failure to get an answer (connecting, sending, reading)."""


class ConnectError(HTTPClientError):
    """The connection could not be made: ``os_error`` says why (refused, an unknown host
    (:class:`socket.gaierror`), a TLS failure (:class:`ssl.SSLError`))."""

    def __init__(self, host: str, port: int, os_error: OSError) -> None:
        super().__init__(f"cannot connect to {host}:{port}: {os_error}")
        self.host = host
        self.port = port
        self.os_error = os_error


class ProxyError(ConnectError):
    """The proxy could not be reached (``os_error``) or refused the tunnel (``status``)."""

    def __init__(
        self, host: str, port: int, os_error: OSError, status: int = 0, reason: str = ""
    ) -> None:
        super().__init__(host, port, os_error)
        self.status = status
        self.reason = reason


class ServerDisconnected(HTTPClientError):
    """The server closed the connection before the answer was complete."""


class ProtocolError(HTTPClientError):
    """The answer was not HTTP/1.x as this client reads it."""


class Headers:
    """Response headers: names case-insensitive, a repeated header's values joined by
    ``", "`` (as HTTP allows)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[tuple[str, str]] = ()) -> None:
        self._items: dict[str, str] = {}
        for name, value in items:
            key = name.lower()
            self._items[key] = f"{self._items[key]}, {value}" if key in self._items else value

    def get(self, name: str, default: str | None = None) -> str | None:
        """The value of ``name`` (any case), or ``default``."""
        return self._items.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._items

    def as_dict(self) -> dict[str, str]:
        """A copy, names in lower case."""
        return dict(self._items)


class Connection:
    """One open connection: its stream pair and whether it has served a request."""

    __slots__ = ("expiry", "reader", "reused", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.reused = False
        #: While idle in the pool: the timer that closes it.
        self.expiry: asyncio.TimerHandle | None = None

    def usable(self) -> bool:
        """Still open at our end and not closed by the server while idle."""
        return not (self.writer.is_closing() or self.reader.at_eof() or self.reader.exception())

    def abort(self) -> None:
        """Drop the connection now (no TLS close-notify, no waiting)."""
        transport = self.writer.transport
        if not transport.is_closing():
            transport.abort()


class Response:
    """An answer: ``status``, ``reason``, ``headers`` and a body read with :meth:`read`,
    :meth:`readline` or :meth:`read_some`. Close it (:meth:`close`) to abort, or
    :meth:`release` when done."""

    def __init__(
        self,
        pool: ConnectionPool,
        conn: Connection,
        method: str,
        status: int,
        reason: str,
        headers: Headers,
        keep_alive: bool,
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        #: Seconds each wait for body data may take (None: no bound).
        self.read_timeout: float | None = None
        self._pool = pool
        self._conn: Connection | None = conn
        self._keep_alive = keep_alive
        self._pending = bytearray()
        self._chunk_left = 0
        self._length: int | None = None
        self._chunked = False
        self._done = False
        self._decoder: Any = None
        encoding = (headers.get("content-encoding") or "").strip().lower()
        if encoding == "gzip":
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj()
        transfer = (headers.get("transfer-encoding") or "").lower()
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            self._done = True
        elif "chunked" in transfer:
            self._chunked = True
        elif "content-length" in headers:
            try:
                self._length = int(headers.get("content-length") or "")
            except ValueError as exc:
                length = headers.get("content-length")
                raise ProtocolError(f"bad Content-Length {length!r}") from exc
            self._done = self._length == 0
        else:
            self._keep_alive = False  # the body ends with the connection

    @property
    def closed(self) -> bool:
        """The body is fully read or the response was closed."""
        return self._conn is None or (self._done and not self._pending)

    async def _wire(self) -> bytes:
        """The next piece of the body as sent (before content decoding); b"" at its end."""
        conn = self._conn
        if self._done or conn is None:
            return b""
        reader = conn.reader
        try:
            if self._chunked:
                if self._chunk_left == 0:
                    line = await reader.readuntil(b"\r\n")
                    try:
                        size = int(line.split(b";", 1)[0].strip(), 16)
                    except ValueError as exc:
                        raise ProtocolError(f"bad chunk size {line[:40]!r}") from exc
                    if size == 0:
                        while (await reader.readuntil(b"\r\n")) != b"\r\n":
                            pass  # trailers
                        self._done = True
                        return b""
                    self._chunk_left = size
                data = await reader.read(min(self._chunk_left, READ_SIZE))
                if not data:
                    raise ServerDisconnected("connection closed inside a chunk")
                self._chunk_left -= len(data)
                if self._chunk_left == 0 and await reader.readexactly(2) != b"\r\n":
                    raise ProtocolError("chunk not followed by CRLF")
                return data
            if self._length is not None:
                data = await reader.read(min(self._length, READ_SIZE))
                if not data:
                    raise ServerDisconnected(f"connection closed {self._length} bytes short")
                self._length -= len(data)
                self._done = self._length == 0
                return data
            data = await reader.read(READ_SIZE)
            if not data:
                self._done = True
            return data
        except asyncio.IncompleteReadError as exc:
            raise ServerDisconnected("connection closed inside the body") from exc
        except asyncio.LimitOverrunError as exc:
            raise ProtocolError("chunk header too long") from exc
        except (ConnectionError, ssl.SSLError) as exc:
            raise ServerDisconnected(f"connection lost: {exc!r}") from exc

    async def read_some(self) -> bytes:
        """The next decoded piece of the body; b"" at its end (then the connection is
        returned to the pool)."""
        while True:
            if self.read_timeout is None:
                data = await self._wire()
            else:
                async with asyncio.timeout(self.read_timeout):
                    data = await self._wire()
            if self._decoder is not None:
                data = self._decoder.decompress(data) if data else b""
                if self._done:
                    data += self._decoder.flush()
            if self._done:
                self.release()
            if data or self._done:
                return data

    async def read(self) -> bytes:
        """The rest of the body."""
        parts = [bytes(self._pending)]
        self._pending.clear()
        while data := await self.read_some():
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
        """Give the connection back to the pool if the body was read to its end, else
        close it."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._done and self._keep_alive:
            self._pool._give_back(conn)
        else:
            conn.abort()

    def close(self) -> None:
        """Abort: a read in progress ends (with b"" or :class:`ServerDisconnected`)."""
        conn, self._conn = self._conn, None
        self._done = True
        if conn is not None:
            conn.abort()

    async def __aenter__(self) -> Response:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()


class ConnectionPool:
    """Keep-alive HTTP/1.1 connections to one origin (see the module doc)."""

    def __init__(
        self,
        base_url: str,
        *,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        proxy: str | None = None,
        socket_factory: Callable[[tuple[Any, ...]], socket.socket] | None = None,
        on_dns: Callable[[str, float], None] | None = None,
        user_agent: str | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        url = urllib.parse.urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.scheme = url.scheme
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == "https" else 80)
        default_port = self.port == (443 if url.scheme == "https" else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.authority = host if default_port else f"{host}:{self.port}"
        self.base_path = url.path.rstrip("/")
        self.ssl_context = ssl_context if url.scheme == "https" else None
        if self.ssl_context is None and url.scheme == "https":
            self.ssl_context = ssl.create_default_context()
        self.server_hostname = server_hostname or self.host
        self.socket_factory = socket_factory
        self.on_dns = on_dns
        self.user_agent = user_agent
        self.idle_timeout = idle_timeout
        self._proxy: tuple[str, int, str | None] | None = None
        if proxy:
            purl = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            if purl.scheme != "http" or not purl.hostname:
                raise ValueError(f"only http:// proxies are supported: {proxy!r}")
            auth = None
            if purl.username is not None:
                user = urllib.parse.unquote(purl.username)
                secret = urllib.parse.unquote(purl.password or "")
                auth = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
            self._proxy = (purl.hostname, purl.port or 80, auth)
        self._idle: list[Connection] = []
        self._open: set[Connection] = set()

    # ----- connections ----------------------------------------------------
    async def _dial(self, host: str, port: int) -> socket.socket:
        if is_invalid_name(host):
            # RFC 6761 6.4: such names never resolve, so none is sent to a resolver
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: an .invalid name never resolves")
        loop = asyncio.get_running_loop()
        try:
            ipaddress.ip_address(host)
            literal = True
        except ValueError:
            literal = False
        started = time.monotonic()
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        if not literal and self.on_dns is not None:
            self.on_dns(host, time.monotonic() - started)
        last: OSError | None = None
        for info in infos:
            sock = (
                self.socket_factory(info)
                if self.socket_factory is not None
                else socket.socket(info[0], info[1], info[2])
            )
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, info[4])
                return sock
            except OSError as exc:
                sock.close()
                last = exc
            except BaseException:
                sock.close()
                raise
        raise last or OSError(f"no address for {host}")

    async def _connect(self) -> Connection:
        if self._proxy is not None:
            return await self._connect_via_proxy(*self._proxy)
        try:
            sock = await self._dial(self.host, self.port)
        except OSError as exc:
            raise ConnectError(self.host, self.port, exc) from exc
        try:
            reader, writer = await asyncio.open_connection(
                sock=sock,
                ssl=self.ssl_context,
                server_hostname=self.server_hostname if self.ssl_context else None,
                limit=LINE_LIMIT,
            )
        except OSError as exc:  # ssl.SSLError is one
            sock.close()
            raise ConnectError(self.host, self.port, exc) from exc
        except BaseException:
            sock.close()
            raise
        return self._track(Connection(reader, writer))

    async def _connect_via_proxy(self, host: str, port: int, auth: str | None) -> Connection:
        try:
            sock = await self._dial(host, port)
            reader, writer = await asyncio.open_connection(sock=sock, limit=LINE_LIMIT)
        except OSError as exc:
            raise ProxyError(host, port, exc) from exc
        conn = Connection(reader, writer)
        if self.ssl_context is None:  # http origin: absolute-form targets, no tunnel
            return self._track(conn)
        host = f"[{self.host}]" if ":" in self.host else self.host
        target = f"{host}:{self.port}"
        head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
        if auth:
            head += f"Proxy-Authorization: {auth}\r\n"
        try:
            writer.write((head + "\r\n").encode("latin-1"))
            status, reason, _headers = await _read_head(reader)
        except (OSError, HTTPClientError) as exc:
            conn.abort()
            error = exc if isinstance(exc, OSError) else ConnectionError(str(exc))
            raise ProxyError(host, port, error) from exc
        if status != 200:
            conn.abort()
            raise ProxyError(host, port, ConnectionError(reason), status, reason)
        try:
            await writer.start_tls(self.ssl_context, server_hostname=self.server_hostname)
        except OSError as exc:
            conn.abort()
            raise ConnectError(self.host, self.port, exc) from exc
        return self._track(conn)

    def _track(self, conn: Connection) -> Connection:
        self._open.add(conn)
        return conn

    def _take(self) -> Connection | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.expiry is not None:
                conn.expiry.cancel()
                conn.expiry = None
            if conn.usable():
                conn.reused = True
                return conn
            self._drop(conn)
        return None

    def _give_back(self, conn: Connection) -> None:
        if conn in self._open and conn.usable():
            self._idle.append(conn)
            loop = asyncio.get_running_loop()
            conn.expiry = loop.call_later(self.idle_timeout, self._expire, conn)
        else:
            self._drop(conn)

    def _expire(self, conn: Connection) -> None:
        if conn in self._idle:
            self._idle.remove(conn)
        conn.expiry = None
        self._drop(conn)

    def _drop(self, conn: Connection) -> None:
        self._open.discard(conn)
        conn.abort()

    # ----- requests -------------------------------------------------------
    def _head(
        self, method: str, target: str, headers: Iterable[tuple[str, str]], size: int | None
    ) -> bytes:
        if self._proxy is not None and self.ssl_context is None:
            target = f"http://{self.authority}{target}"
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.authority}"]
        names = set()
        for name, value in headers:
            names.add(name.lower())
            lines.append(f"{name}: {value}")
        if "user-agent" not in names and self.user_agent:
            lines.append(f"User-Agent: {self.user_agent}")
        if "accept-encoding" not in names:
            lines.append("Accept-Encoding: gzip")
        if size is not None:
            lines.append(f"Content-Length: {size}")
        if self._proxy is not None and self.ssl_context is None and self._proxy[2]:
            lines.append(f"Proxy-Authorization: {self._proxy[2]}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes | None = None,
    ) -> Response:
        """Send one request and return its :class:`Response` once its head has arrived
        (the body is the caller's to read, then :meth:`Response.release`)."""
        target = self.base_path + path
        if params:
            target += ("&" if "?" in target else "?") + urllib.parse.urlencode(params)
        if body is None and method in ("POST", "PUT", "PATCH"):
            body = b""
        head = self._head(method, target, list(headers), None if body is None else len(body))
        while True:
            conn = self._take() or await self._connect()
            try:
                conn.writer.write(head + body if body else head)
                await conn.writer.drain()
                status, reason, resp_headers = await _read_head(conn.reader)
            except (OSError, ServerDisconnected, asyncio.IncompleteReadError) as exc:
                self._drop(conn)
                if conn.reused and method in RETRIABLE:
                    continue  # closed by the server while idle: once more, on a new one
                if isinstance(exc, ServerDisconnected):
                    raise
                raise ServerDisconnected(f"connection lost: {exc!r}") from exc
            except BaseException:
                self._drop(conn)
                raise
            connection = (resp_headers.get("connection") or "").lower()
            keep_alive = "close" not in connection
            try:
                return Response(self, conn, method, status, reason, resp_headers, keep_alive)
            except BaseException:
                self._drop(conn)
                raise

    async def close(self) -> None:
        """Close every connection (responses in progress end as if the server closed)."""
        for conn in list(self._open):
            if conn.expiry is not None:
                conn.expiry.cancel()
                conn.expiry = None
            self._drop(conn)
        self._idle.clear()

    @property
    def idle(self) -> int:
        """How many kept-alive connections wait unused."""
        return len(self._idle)

    @property
    def connections(self) -> int:
        """How many connections are open (idle or carrying an answer)."""
        return len(self._open)


def is_invalid_name(host: str) -> bool:
    """``host`` is in the ``invalid.`` domain (RFC 6761: lookups fail at once, locally)."""
    name = host.rstrip(".").lower()
    return name == "invalid" or name.endswith(".invalid")


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, str, Headers]:
    """Status code, reason and headers of the next answer on ``reader``."""
    try:
        block = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        raise ServerDisconnected(
            "the server closed the connection without an answer"
            if not exc.partial
            else "the server closed the connection inside the answer's head"
        ) from exc
    except asyncio.LimitOverrunError as exc:
        raise ProtocolError("answer head too long") from exc
    lines = block[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ProtocolError(f"not an HTTP/1.x answer: {lines[0][:60]!r}")
    try:
        status = int(parts[1])
    except ValueError as exc:
        raise ProtocolError(f"bad status line {lines[0][:60]!r}") from exc
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers.append((name.strip(), value.strip()))
    if status == 100:  # "100 Continue" before the real answer
        return await _read_head(reader)
    if parts[0] == "HTTP/1.0" and not any(
        n.lower() == "connection" and "keep-alive" in v.lower() for n, v in headers
    ):
        headers.append(("Connection", "close"))  # HTTP/1.0 closes unless asked not to
    return status, parts[2] if len(parts) > 2 else "", Headers(headers)


__all__ = [
    "ConnectError",
    "Connection",
    "ConnectionPool",
    "HTTPClientError",
    "Headers",
    "ProtocolError",
    "ProxyError",
    "Response",
    "ServerDisconnected",
    "is_invalid_name",
]
