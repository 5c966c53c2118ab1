"""The failures of :mod:`kuberay.http`: every one is an :class:`HTTPClientError`.

Two kinds are raised before a byte is sent: :class:`InvalidRequest` (a request target or
header that HTTP/1.1 cannot carry, such as a CR LF written into a name) and, after the
head has arrived, :class:`BodyTooLarge` (an answer past the cap its reader set).
"""

from __future__ import annotations


class HTTPClientError(Exception):
    """Any failure to get an answer (connecting, sending, reading)."""


class InvalidRequest(HTTPClientError, ValueError):
    """The request cannot be sent as given: ``field`` names what is wrong (``"request
    target"``, ``"header 'Authorization'"``, ``"method"``); nothing was sent. The value itself
    is never part of the message (a header may hold a credential)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"invalid HTTP request: {field} {problem}; nothing was sent")
        self.field = field
        self.problem = problem


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
    """The answer was not HTTP/1.1 as RFC 9112 frames it (h11 refused it): a bad status
    line, Content-Length or chunk size, an unrequested ``101 Switching Protocols``, ..."""


class BodyTooLarge(HTTPClientError):
    """The answer's body passed ``limit`` bytes (``stage``: ``"on the wire"`` or
    ``"decompressed"``); the connection was closed, the rest never read."""

    def __init__(self, limit: int, stage: str) -> None:
        super().__init__(f"the answer's body is over the cap of {limit} bytes {stage}")
        self.limit = limit
        self.stage = stage


__all__ = [
    "BodyTooLarge",
    "ConnectError",
    "HTTPClientError",
    "InvalidRequest",
    "ProtocolError",
    "ProxyError",
    "ServerDisconnected",
]
