"""Opening a TCP socket to a host: each resolved address in turn, no lookup of an
``.invalid`` name (RFC 6761), no lookup at all of a literal address (it needs none, and
``getaddrinfo`` runs on the loop's shared thread pool, which a busy program may have
filled), the lookup's duration reported."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Callable
from typing import Any

SocketFactory = Callable[[tuple[Any, ...]], socket.socket]


def is_invalid_name(host: str) -> bool:
    """``host`` is in the ``invalid.`` domain (RFC 6761: lookups fail at once, locally)."""
    name = host.rstrip(".").lower()
    return name == "invalid" or name.endswith(".invalid")


def literal_address_info(host: str, port: int) -> list[tuple[Any, ...]] | None:
    """The one ``getaddrinfo`` entry a literal IPv4 or IPv6 address (brackets allowed, no
    zone) resolves to, or ``None`` when ``host`` is a name or a zoned address. Pure."""
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if "%" in text:
        return None  # a zone index needs the system's resolver
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if address.version == 4:
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (text, port))]
    return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (text, port, 0, 0))]


async def dial(
    host: str,
    port: int,
    *,
    socket_factory: SocketFactory | None = None,
    on_dns: Callable[[str, float], None] | None = None,
) -> socket.socket:
    """A connected non-blocking socket to ``host:port`` (every resolved address tried in
    order; the last error raised). ``socket_factory`` makes each socket from an
    ``getaddrinfo`` entry; ``on_dns(host, seconds)`` hears how long a name's lookup took."""
    if is_invalid_name(host):
        # RFC 6761 6.4: such names never resolve, so none is sent to a resolver
        raise socket.gaierror(socket.EAI_NONAME, f"{host}: an .invalid name never resolves")
    loop = asyncio.get_running_loop()
    infos = literal_address_info(host, port)
    if infos is None:
        started = time.monotonic()
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        if on_dns is not None:
            on_dns(host, time.monotonic() - started)
    last: OSError | None = None
    for info in infos:
        sock = (
            socket_factory(info)
            if socket_factory is not None
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


__all__ = ["SocketFactory", "dial", "is_invalid_name", "literal_address_info"]
