"""Dialling: a literal address connects without a lookup, so a loop whose shared thread
pool is full of blocking work (where ``getaddrinfo`` runs) still reaches its apiserver;
a name is still looked up and its lookup reported."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator

import pytest

from kuberay.http.dial import dial, literal_address_info


@pytest.fixture
async def listener() -> AsyncIterator[int]:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


def test_literal_addresses_need_no_lookup_and_names_do() -> None:
    assert literal_address_info("127.0.0.1", 80) == [
        (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", 80))
    ]
    six = literal_address_info("[::1]", 443)
    assert six is not None and six[0][0] == socket.AF_INET6 and six[0][4][:2] == ("::1", 443)
    assert literal_address_info("fe80::1%eth0", 1) is None  # a zone: the resolver decides
    assert literal_address_info("localhost", 1) is None
    assert literal_address_info("127.0.0.1.nip.io", 1) is None


async def test_a_literal_address_connects_while_the_thread_pool_is_busy(listener: int) -> None:
    loop = asyncio.get_running_loop()
    release = threading.Event()
    # Fill the default executor (where getaddrinfo would wait its turn) with blocked work.
    blocked = [loop.run_in_executor(None, release.wait) for _ in range(64)]
    try:
        sock = await asyncio.wait_for(dial("127.0.0.1", listener), timeout=5)
        sock.close()
    finally:
        release.set()
        await asyncio.gather(*blocked)


async def test_a_name_is_looked_up_and_its_lookup_reported(listener: int) -> None:
    heard: list[str] = []
    sock = await dial("localhost", listener, on_dns=lambda host, _s: heard.append(host))
    sock.close()
    assert heard == ["localhost"]
