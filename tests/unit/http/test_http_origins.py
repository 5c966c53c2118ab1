"""OriginPools (kuberay.http.origins): one keep-alive pool per dashboard address, the
pools of addresses no longer dialled forgotten, nothing handed out after close. Loopback
servers only."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from kuberay.http import OriginPools


@contextlib.asynccontextmanager
async def ok_server(host: str) -> AsyncIterator[tuple[int, list[int]]]:
    """An HTTP/1.1 server on ``host`` answering every request ``ok``; yields its port and a
    list that grows by one per connection."""
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        with contextlib.suppress(Exception):
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, host, 0)
    try:
        yield server.sockets[0].getsockname()[1], connections
    finally:
        server.close()


async def get(pools: OriginPools, url: str) -> bytes:
    pool = pools.pool(url)
    async with await pool.request("GET", "/api/jobs/") as resp:
        return await resp.read()


async def test_one_pool_per_origin_and_its_connection_is_reused() -> None:
    pools = OriginPools()
    try:
        async with ok_server("127.0.0.61") as (port, connections):
            a = pools.pool(f"http://127.0.0.61:{port}")
            assert pools.pool(f"http://127.0.0.61:{port}/some/path") is a
            assert pools.pool(f"http://127.0.0.62:{port}") is not a
            for _ in range(3):
                assert await get(pools, f"http://127.0.0.61:{port}") == b"ok"
            assert len(connections) == 1  # kept alive between calls
    finally:
        await pools.close()


async def test_pools_of_addresses_no_longer_dialled_are_forgotten() -> None:
    """Clusters come and go: beyond ``keep`` origins, pools holding no connection are
    dropped; one whose connection is still open is kept."""
    pools = OriginPools(keep=4, idle_timeout=0.05)
    try:
        async with ok_server("127.0.0.63") as (port, _), ok_server("127.0.0.64") as (kept, _):
            busy = pools.pool(f"http://127.0.0.64:{kept}")
            busy.idle_timeout = 60.0
            await get(pools, f"http://127.0.0.64:{kept}")  # its connection stays open
            await get(pools, f"http://127.0.0.63:{port}")
            for n in range(1, 3):
                pools.pool(f"http://10.0.0.{n}:8265")  # never dialled
            await asyncio.sleep(0.2)  # 127.0.0.63's idle connection has closed
            assert len(pools) == 4
            pools.pool("http://10.0.0.9:8265")
            assert len(pools) == 2  # the busy pool and the new one
            assert pools.pool(f"http://127.0.0.64:{kept}") is busy
    finally:
        await pools.close()


async def test_closed_pools_close_their_connections_and_refuse_new_ones() -> None:
    pools = OriginPools()
    async with ok_server("127.0.0.65") as (port, _):
        pool = pools.pool(f"http://127.0.0.65:{port}")
        await get(pools, f"http://127.0.0.65:{port}")
        assert pool.connections == 1
        await pools.close()
        assert pool.connections == 0
        with pytest.raises(RuntimeError, match="closed"):
            pools.pool(f"http://127.0.0.65:{port}")
