"""What the transport's connections are made of: sockets with TCP keepalive as Go's dialer
sets it, and DNS lookups timed into ``rest_client_dns_resolution_duration_seconds``."""

from __future__ import annotations

import socket
import time
import types
from typing import TYPE_CHECKING, Any

from kuberay.kube.metrics import REST_CLIENT_DNS_RESOLUTION_DURATION

if TYPE_CHECKING:
    import aiohttp

#: TCP keepalive as Go's net.Dialer sets it by default (idle, interval, count).
TCP_KEEPALIVE = (15, 15, 9)


def keepalive_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    """A client socket with TCP keepalive as Go's dialer enables it (see TCP_KEEPALIVE)."""
    family, type_, proto = addr_info[0], addr_info[1], addr_info[2]
    sock = socket.socket(family=family, type=type_, proto=proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    idle, interval, count = TCP_KEEPALIVE
    for name, value in (
        ("TCP_KEEPIDLE", idle),
        ("TCP_KEEPINTVL", interval),
        ("TCP_KEEPCNT", count),
    ):
        option = getattr(socket, name, None)
        if option is not None:
            sock.setsockopt(socket.IPPROTO_TCP, option, value)
    return sock


def observe_dns(host: str, seconds: float) -> None:
    """Record one DNS lookup of ``host`` that took ``seconds`` (the pool's ``on_dns``)."""
    REST_CLIENT_DNS_RESOLUTION_DURATION.labels(host=host).observe(seconds)


def dns_trace_config() -> aiohttp.TraceConfig:
    """Times the aiohttp session's DNS lookups into
    ``rest_client_dns_resolution_duration_seconds{host}``."""
    import aiohttp

    async def start(
        _session: aiohttp.ClientSession,
        ctx: types.SimpleNamespace,
        _params: aiohttp.TraceDnsResolveHostStartParams,
    ) -> None:
        ctx.dns_started = time.monotonic()

    async def end(
        _session: aiohttp.ClientSession,
        ctx: types.SimpleNamespace,
        params: aiohttp.TraceDnsResolveHostEndParams,
    ) -> None:
        started = getattr(ctx, "dns_started", None)
        if started is not None:
            REST_CLIENT_DNS_RESOLUTION_DURATION.labels(host=params.host).observe(
                time.monotonic() - started
            )

    config = aiohttp.TraceConfig()
    config.on_dns_resolvehost_start.append(start)
    config.on_dns_resolvehost_end.append(end)
    return config


__all__ = ["TCP_KEEPALIVE", "dns_trace_config", "keepalive_socket", "observe_dns"]
