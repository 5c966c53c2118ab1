"""One-line messages for failures to talk to the apiserver: which server, and why
(refused, unknown host, certificate, proxy, timeout, credentials), never a repr."""

from __future__ import annotations

import socket
import ssl
from typing import Any


def _cause_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        chain.append(current)
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return chain


def transport_cause(exc: BaseException, timeout: float | None = None) -> str:
    """Why a connection failed, in a few words (from the deepest known cause)."""
    import aiohttp

    from kuberay import http  # not at import: `--help` and completion load no client

    for cause in _cause_chain(exc):
        if isinstance(cause, http.ProxyError):
            if cause.status:
                return f"the proxy answered {cause.status} {cause.reason}".rstrip()
            return f"cannot connect to the proxy: {_os_text(cause.os_error)}"
        if isinstance(cause, http.ConnectError):
            if isinstance(cause.os_error, socket.gaierror):
                return f"unknown host {cause.host}"
            if isinstance(cause.os_error, ssl.SSLError) and not isinstance(
                cause.os_error, ssl.SSLCertVerificationError
            ):
                return f"TLS handshake failed: {_os_text(cause.os_error)}"
            return _os_text(cause.os_error)
        if isinstance(cause, http.ServerDisconnected):
            return "the server closed the connection (is it speaking HTTPS on that port?)"
        if isinstance(cause, aiohttp.ClientConnectorCertificateError):
            err: Any = cause.certificate_error
            detail = getattr(err, "verify_message", "") or getattr(err, "reason", "") or err
            return f"TLS certificate not trusted: {detail}"
        if isinstance(cause, aiohttp.ClientHttpProxyError):
            return f"the proxy answered {cause.status} {cause.message}".rstrip()
        if isinstance(cause, aiohttp.ClientProxyConnectionError):
            return f"cannot connect to the proxy: {_os_text(cause.os_error)}"
        if isinstance(cause, aiohttp.ClientConnectorDNSError):
            return f"unknown host {cause.host}"
        if isinstance(cause, aiohttp.ClientConnectorSSLError):
            return f"TLS handshake failed: {_os_text(cause.os_error)}"
        if isinstance(cause, aiohttp.ClientConnectorError):
            return _os_text(cause.os_error)
        if isinstance(cause, aiohttp.ServerDisconnectedError):
            return "the server closed the connection (is it speaking HTTPS on that port?)"
        if isinstance(cause, aiohttp.ClientResponseError):
            return f"HTTP {cause.status} {cause.message}"
        if isinstance(cause, ssl.SSLError):
            return f"TLS error: {cause.reason or cause}"
        if isinstance(cause, TimeoutError):
            limit = f" within {timeout:g}s" if timeout else ""
            return f"no answer{limit} (--request-timeout)"
        if isinstance(cause, socket.gaierror):
            return f"unknown host ({cause.strerror})"
    last = _cause_chain(exc)[-1]
    return str(last) or type(last).__name__


def _os_text(err: OSError) -> str:
    if isinstance(err, ConnectionRefusedError):
        return "connection refused"
    if isinstance(err, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted: {err.verify_message}"
    if isinstance(err, ssl.SSLError):
        return f"TLS error: {err.reason or err}"
    if isinstance(err, socket.gaierror):
        return f"unknown host ({err.strerror})"
    text = err.strerror or str(err)
    return text[0].lower() + text[1:] if text else type(err).__name__


def unreachable(server: str, exc: BaseException, timeout: float | None = None) -> str:
    """``cannot reach the Kubernetes API server at URL: cause``."""
    where = f" at {server}" if server else ""
    return f"cannot reach the Kubernetes API server{where}: {transport_cause(exc, timeout)}"


def api_error(server: str, status: int, reason: str, message: str) -> str:
    """An API error as kubectl would put it (401 names the server)."""
    if status == 401:
        where = f" {server}" if server else ""
        return f"the server{where} rejected the credentials (Unauthorized)" + (
            f": {message}" if message and message != "Unauthorized" else ""
        )
    return f"{message or reason or status} ({reason or status})"


__all__ = ["api_error", "transport_cause", "unreachable"]
