"""Opening a TCP socket to a host: each resolved address in turn, no lookup of an
``.invalid`` name (RFC 6761), the lookup's duration reported."""

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
    try:
        ipaddress.ip_address(host)
        literal = True
    except ValueError:
        literal = False
    started = time.monotonic()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not literal and on_dns is not None:
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


__all__ = ["SocketFactory", "dial", "is_invalid_name"]
