"""The HTTP/1.1 client stack every outgoing request of the operator goes through.

It imports nothing else of :mod:`kuberay` (an import contract says so): the apiserver client
(:mod:`kuberay.kube`) and the Ray dashboard client (:mod:`kuberay.controllers.dashboard`) are
built on it. :mod:`.pool` holds :class:`ConnectionPool` (one origin, keep-alive connections);
:mod:`.origins` holds :class:`OriginPools` (one pool per origin, for clients of many servers).
"""

from kuberay.http.origins import OriginPools
from kuberay.http.pool import (
    ConnectError,
    Connection,
    ConnectionPool,
    Headers,
    HTTPClientError,
    ProtocolError,
    ProxyError,
    Response,
    ServerDisconnected,
    is_invalid_name,
)

__all__ = [
    "ConnectError",
    "Connection",
    "ConnectionPool",
    "HTTPClientError",
    "Headers",
    "OriginPools",
    "ProtocolError",
    "ProxyError",
    "Response",
    "ServerDisconnected",
    "is_invalid_name",
]
