"""Keep-alive HTTP/1.1 connections to one origin, framed by h11.

Why not aiohttp for the apiserver and the Ray dashboards: an idle operator's memory is
mostly the code it loaded, and aiohttp's client costs about 9 MiB of it; the operator asks
servers for JSON and streams watch lines. Why h11 under it: the framing of requests and
answers (request-target and header checks, Content-Length and chunked bodies, informational
answers, trailers) is a protocol's, and a well-kept sans-I/O implementation speaks it,
not a parser of our own (:mod:`.origins` keeps a pool per dashboard address).

Contracts of :class:`ConnectionPool`:

* One origin (``scheme://host:port``); ``https`` with the given :class:`ssl.SSLContext`
  and server name (``tls-server-name``, else the host). Every socket is made by
  ``socket_factory`` (the transport sets Go's TCP keepalive) and connected to each
  resolved address in turn; a host name's resolution time goes to ``on_dns``. A name in the
  ``.invalid`` domain fails at once without a lookup (RFC 6761), as does the proxy's.
* Through an HTTP proxy when ``proxy`` is set: ``CONNECT`` for an ``https`` origin (then
  TLS inside the tunnel), absolute-form request targets for ``http``; the proxy URL's
  user and password become ``Proxy-Authorization: Basic``.
* Nothing malformed is sent: a method, request target or header that HTTP/1.1 cannot carry
  (a space, CR, LF, NUL or other control character; see :mod:`.headers`) raises
  :class:`InvalidRequest` naming the field before a connection is even taken.
* Answers are framed by h11: informational answers (1xx, RFC 9110 15.2) are read past; an
  unrequested ``101``, a malformed Content-Length or chunk size raise :class:`ProtocolError`.
* Connections are kept alive and reused (the most recently used first) only when the
  exchange ended cleanly and no byte beyond the answer arrived; one unused for
  ``idle_timeout`` seconds is closed, and an idle one the server has closed (or wrote to)
  is dropped before use. When a reused connection turns out closed before any answer
  byte, the request is sent again once on a new connection if nothing of it was written,
  or if its method is replayable (GET, HEAD, OPTIONS, TRACE): Go's transport's rule, so a
  PUT or DELETE that may have reached the server is never sent twice.
* Bodies: pieces as they arrive (a watch's events); ``gzip``/``deflate`` answers are
  decoded in bounded pieces (``Accept-Encoding: gzip`` is sent); ``read(limit=...)`` caps
  an answer. A response must be read to its end or closed; :meth:`Response.release`
  returns its connection to the pool only when it was.
* Failures raise :class:`HTTPClientError` subclasses: :class:`InvalidRequest`,
  :class:`ConnectError` (with the ``OSError``: refused, unknown host, TLS),
  :class:`ProxyError`, :class:`ServerDisconnected`, :class:`ProtocolError`,
  :class:`BodyTooLarge`. Time limits are the caller's (``asyncio.timeout``);
  :attr:`Response.read_timeout` bounds each wait for body data.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
import urllib.parse
from collections.abc import Callable, Iterable

import h11

from kuberay.http.connection import MAX_HEAD, Connection
from kuberay.http.dial import SocketFactory, dial
from kuberay.http.errors import (
    ConnectError,
    HTTPClientError,
    InvalidRequest,
    ProtocolError,
    ProxyError,
    ServerDisconnected,
)
from kuberay.http.headers import Headers, header_pair, method_bytes, target_bytes
from kuberay.http.response import Response

#: The stream buffer's limit.
LINE_LIMIT = MAX_HEAD
#: Seconds an unused kept-alive connection stays open (aiohttp's default; each idle TLS
#: connection holds buffers and OpenSSL state on both ends).
IDLE_TIMEOUT = 15.0
#: Methods sent again after their reused connection turned out closed even when the request
#: was written (Go's ``isReplayable``); any method is sent again when nothing was written.
REPLAYABLE = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


class _NothingWritten(Exception):
    """The reused connection was found closed before a byte of the request was written."""


class ConnectionPool:
    """Keep-alive HTTP/1.1 connections to one origin (see the module doc)."""

    def __init__(
        self,
        base_url: str,
        *,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        proxy: str | None = None,
        socket_factory: SocketFactory | None = None,
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
        return await dial(host, port, socket_factory=self.socket_factory, on_dns=self.on_dns)

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
        target = f"{'[' + self.host + ']' if ':' in self.host else self.host}:{self.port}"
        headers = [("Host", target)] + ([("Proxy-Authorization", auth)] if auth else [])
        try:
            writer.write(
                conn.h11.send(h11.Request(method="CONNECT", target=target, headers=headers)) or b""
            )
            event = await conn.next_event()
            while isinstance(event, h11.InformationalResponse):
                event = await conn.next_event()
        except (OSError, HTTPClientError, h11.LocalProtocolError) as exc:
            conn.abort()
            error = exc if isinstance(exc, OSError) else ConnectionError(str(exc))
            raise ProxyError(host, port, error) from exc
        assert isinstance(event, h11.Response)
        reason = event.reason.decode("latin-1")
        if event.status_code != 200 or conn.h11.trailing_data[0]:
            conn.abort()
            raise ProxyError(host, port, ConnectionError(reason), event.status_code, reason)
        conn.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
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
            self.drop(conn)
        return None

    def give_back(self, conn: Connection) -> None:
        """Keep ``conn`` idle for the next request (closed after ``idle_timeout``)."""
        if conn in self._open and conn.usable():
            self._idle.append(conn)
            loop = asyncio.get_running_loop()
            conn.expiry = loop.call_later(self.idle_timeout, self._expire, conn)
        else:
            self.drop(conn)

    def _expire(self, conn: Connection) -> None:
        if conn in self._idle:
            self._idle.remove(conn)
        conn.expiry = None
        self.drop(conn)

    def drop(self, conn: Connection) -> None:
        """Close ``conn`` and forget it."""
        self._open.discard(conn)
        conn.abort()

    # ----- requests -------------------------------------------------------
    def _request_head(
        self, method: str, target: str, headers: Iterable[tuple[str, str]], size: int | None
    ) -> h11.Request:
        """The request's head, every field checked (raises :class:`InvalidRequest`)."""
        if self._proxy is not None and self.ssl_context is None:
            target = f"http://{self.authority}{target}"
        pairs = [header_pair("Host", self.authority)]
        names = set()
        for name, value in headers:
            names.add(name.lower())
            pairs.append(header_pair(name, value))
        if "user-agent" not in names and self.user_agent:
            pairs.append(header_pair("User-Agent", self.user_agent))
        if "accept-encoding" not in names:
            pairs.append((b"Accept-Encoding", b"gzip"))
        if size is not None:
            pairs.append((b"Content-Length", str(size).encode()))
        if self._proxy is not None and self.ssl_context is None and self._proxy[2]:
            pairs.append(header_pair("Proxy-Authorization", self._proxy[2]))
        try:
            return h11.Request(
                method=method_bytes(method), target=target_bytes(target), headers=pairs
            )
        except h11.LocalProtocolError as exc:  # e.g. a Content-Length given twice
            raise InvalidRequest("head", str(exc)) from exc

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
        (the body is the caller's to read, then :meth:`Response.release`). ``path`` must
        be percent-encoded already; ``params`` are encoded here."""
        target = self.base_path + path
        if params:
            target += ("&" if "?" in target else "?") + urllib.parse.urlencode(params)
        if body is None and method in ("POST", "PUT", "PATCH"):
            body = b""
        head = self._request_head(
            method, target, list(headers), None if body is None else len(body)
        )
        while True:
            conn = self._take() or await self._connect()
            written = False
            try:
                data = conn.h11.send(head) or b""
                if body:
                    data += conn.h11.send(h11.Data(data=body)) or b""
                data += conn.h11.send(h11.EndOfMessage()) or b""
                if not conn.usable():
                    raise _NothingWritten
                conn.writer.write(data)
                written = True
                await conn.writer.drain()
                event = await conn.next_event()
                while isinstance(event, h11.InformationalResponse):
                    event = await conn.next_event()  # 1xx before the answer (RFC 9110 15.2)
            except (OSError, ServerDisconnected, _NothingWritten) as exc:
                self.drop(conn)
                if conn.reused and (not written or method in REPLAYABLE):
                    continue  # closed by the server while idle: once more, on a new one
                if isinstance(exc, ServerDisconnected):
                    raise
                raise ServerDisconnected(f"connection lost: {exc!r}") from exc
            except BaseException:
                self.drop(conn)
                raise
            if not isinstance(event, h11.Response):
                self.drop(conn)
                raise ProtocolError(f"expected an answer's head, got {type(event).__name__}")
            resp_headers = Headers(
                (name.decode("latin-1"), value.decode("latin-1")) for name, value in event.headers
            )
            return Response(
                self, conn, event.status_code, event.reason.decode("latin-1"), resp_headers
            )

    async def close(self) -> None:
        """Close every connection (responses in progress end as if the server closed)."""
        for conn in list(self._open):
            if conn.expiry is not None:
                conn.expiry.cancel()
                conn.expiry = None
            self.drop(conn)
        self._idle.clear()

    @property
    def idle(self) -> int:
        """How many kept-alive connections wait unused."""
        return len(self._idle)

    @property
    def connections(self) -> int:
        """How many connections are open (idle or carrying an answer)."""
        return len(self._open)


__all__ = ["IDLE_TIMEOUT", "REPLAYABLE", "ConnectionPool"]
