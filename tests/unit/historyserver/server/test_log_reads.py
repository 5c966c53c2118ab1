"""Tail reads by ranged GETs, HTTP ranges on log downloads, ``?reload=true`` and the
handler deadline."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.layout import Layout
from kuberay.historyserver.server.app import deadline_middleware, make_app
from kuberay.historyserver.server.context import STATE
from kuberay.historyserver.server.log_reads import (
    RangeNotSatisfiable,
    object_size,
    parse_range,
    read_tail,
)
from kuberay.historyserver.server.logs import tail_lines
from tests.unit.historyserver.memstore import MemoryStore
from tests.unit.historyserver.server.stores import CLUSTER, NODE, SESSION, collector_store

Client = TestClient[Any, Any]
BIG = b"".join(b"line %06d\n" % i for i in range(50000))  # 600 kB, 12-byte lines


class CountingStore(MemoryStore):
    """Records every ranged GET."""

    def __init__(self) -> None:
        super().__init__()
        self.gets: list[tuple[str, tuple[int, int] | None]] = []

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        self.gets.append((key, byte_range))
        return await super().get(key, byte_range=byte_range)


@pytest.mark.parametrize("lines", [0, 1, 2, 10, 5000, 49999, 50000, 60000])
@pytest.mark.parametrize("trailing", [True, False])
async def test_read_tail_matches_tail_lines(lines: int, trailing: bool) -> None:
    store = CountingStore()
    body = BIG if trailing else BIG[:-1]
    store.objects["k"] = body
    got = await read_tail(store, "k", lines, 0, len(body), window=4096)
    assert got == tail_lines(body, lines)
    for start, end in [(100, 5000), (0, 11), (7, 7)]:
        assert await read_tail(store, "k", lines, start, end, window=64) == tail_lines(
            body[start:end], lines
        )


async def test_read_tail_reads_only_the_end() -> None:
    store = CountingStore()
    store.objects["k"] = BIG
    await read_tail(store, "k", 10, 0, len(BIG))
    assert store.gets == [("k", (len(BIG) - 65536, len(BIG)))]
    assert await object_size(store, "k") == len(BIG)
    store.objects["k2"] = b"x"
    assert await object_size(store, "k") == len(BIG)  # a longer key is not it
    assert await object_size(store, "nope") is None


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-9", (0, 10)),
        ("bytes=5-", (5, 100)),
        ("bytes=-10", (90, 100)),
        ("bytes=-1000", (0, 100)),
        ("bytes=90-1000", (90, 100)),
        ("bytes=9-3", None),
        ("bytes=0-1,5-6", None),
        ("items=0-1", None),
        ("bytes=-", None),
    ],
)
def test_parse_range(header: str, expected: tuple[int, int] | None) -> None:
    assert parse_range(header, 100) == expected


@pytest.mark.parametrize("header", ["bytes=100-", "bytes=-0", "bytes=200-300"])
def test_parse_range_unsatisfiable(header: str) -> None:
    with pytest.raises(RangeNotSatisfiable):
        parse_range(header, 100)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    store = await collector_store(tmp_path)
    await store.put(Layout(CLUSTER).log_key(SESSION, NODE, "big.log"), BIG)
    c: Client = TestClient(TestServer(make_app(store), host="127.0.0.1"))
    await c.start_server()
    assert (await c.get(f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}")).status == 200
    yield c
    await c.close()


async def test_lines_tail_and_download_ranges(client: Client) -> None:
    base = f"/api/v0/logs/file?node_id={NODE}&filename=big.log"
    assert await (await client.get(base + "&lines=2")).read() == b"1line 049998\nline 049999\n"
    r = await client.get(base)  # default 1000 lines
    assert (await r.read())[1:] == tail_lines(BIG, 1000)
    dl = base + "&lines=-1&download_filename=big.log"
    r = await client.get(dl)
    assert r.status == 200 and r.headers["Accept-Ranges"] == "bytes"
    assert await r.read() == BIG
    r = await client.get(dl, headers={"Range": "bytes=12-22"})
    assert r.status == 206 and await r.read() == b"line 000001\n"[:11]
    assert r.headers["Content-Range"] == f"bytes 12-22/{len(BIG)}"
    r = await client.get(dl, headers={"Range": "bytes=-7"})
    assert await r.read() == b"049999\n"
    r = await client.get(dl, headers={"Range": f"bytes={len(BIG)}-"})
    assert r.status == 416 and r.headers["Content-Range"] == f"bytes */{len(BIG)}"
    # With lines=N the representation is the tail; ranges apply to it.
    r = await client.get(base + "&lines=2&download_filename=t.log", headers={"Range": "bytes=0-3"})
    assert r.status == 206 and await r.read() == b"line"
    assert r.headers["Content-Range"] == "bytes 0-3/24"
    # Without download_filename a Range header is ignored (Ray's framing byte comes first).
    r = await client.get(base + "&lines=1", headers={"Range": "bytes=0-1"})
    assert r.status == 200 and await r.read() == b"1line 049999\n"


async def test_task_slice_download_range(client: Client) -> None:
    tasks = (await (await client.get("/api/v0/tasks?detail=1&limit=100")).json())["data"]["result"][
        "result"
    ]
    first = next(
        t
        for t in tasks
        if t["task_log_info"]
        and t["task_log_info"]["stdout_start"] == 35
        and t["worker_pid"] == 21236
    )
    url = f"/api/v0/logs/file?task_id={first['task_id']}&download_filename=t.out"
    r = await client.get(url, headers={"Range": "bytes=3-"})
    assert r.status == 206 and await r.read() == b"first\n"
    assert r.headers["Content-Range"] == "bytes 3-8/9"


async def test_reload_drops_the_cached_session(client: Client) -> None:
    state = client.app[STATE]
    loads = state.cache.loads
    url = f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}"
    assert (await client.get(url)).status == 200
    assert state.cache.loads == loads  # cached
    listings = state.clusters.listings
    assert (await client.get(url + "?reload=true")).status == 200
    assert state.cache.loads == loads + 1 and state.clusters.listings == listings + 1
    assert (await client.get(url + "?reload=maybe")).status == 400


async def test_deadline_middleware() -> None:
    async def slow(_request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.Response(text="late")

    async def fast(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application(middlewares=[deadline_middleware(0.05)])
    app.router.add_get("/slow", slow)
    app.router.add_get("/fast", fast)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        r = await c.get("/slow")
        assert r.status == 504 and "longer than 0.05s" in (await r.json())["msg"]
        assert await (await c.get("/fast")).text() == "ok"
