"""The HTTP/1.1 client stack every outgoing request of the operator goes through.

It imports nothing else of :mod:`kuberay` (an import contract says so): the apiserver client
(:mod:`kuberay.kube`) and the Ray dashboard client (:mod:`kuberay.controllers.dashboard`) are
built on it. h11 frames every request and answer; this package keeps the connections:
:mod:`.pool` (:class:`ConnectionPool`: one origin, keep-alive, proxies, TLS, the resend
rule), :mod:`.response` (bodies read in pieces, decoded, capped), :mod:`.headers` (what a
request head may hold), :mod:`.origins` (:class:`OriginPools`: one pool per origin).
"""

from kuberay.http.connection import Connection
from kuberay.http.dial import is_invalid_name
from kuberay.http.errors import (
    BodyTooLarge,
    ConnectError,
    HTTPClientError,
    InvalidRequest,
    ProtocolError,
    ProxyError,
    ServerDisconnected,
)
from kuberay.http.headers import Headers
from kuberay.http.origins import OriginPools
from kuberay.http.pool import ConnectionPool
from kuberay.http.response import Response

__all__ = [
    "BodyTooLarge",
    "ConnectError",
    "Connection",
    "ConnectionPool",
    "HTTPClientError",
    "Headers",
    "InvalidRequest",
    "OriginPools",
    "ProtocolError",
    "ProxyError",
    "Response",
    "ServerDisconnected",
    "is_invalid_name",
]
