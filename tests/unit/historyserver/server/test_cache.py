"""The session cache (single-flight loads, LRU by count/bytes, sliding TTL) and the app's
use of it: one decode for many concurrent requests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.server import session as session_mod
from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.cache import SessionCache
from kuberay.historyserver.server.context import STATE
from tests.unit.historyserver.server.stores import SESSION, collector_store


@attrs.frozen
class Value:
    name: str
    approx_bytes: int = 10


class Loader:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail: set[str] = set()

    async def __call__(self, key: str) -> Value:
        self.calls.append(key)
        await self.gate.wait()
        if key in self.fail:
            raise RuntimeError(f"cannot load {key}")
        return Value(key, approx_bytes=int(key.split(":")[1]) if ":" in key else 10)


async def test_concurrent_gets_share_one_load() -> None:
    loader = Loader()
    loader.gate.clear()
    cache: SessionCache[str, Value] = SessionCache(loader)
    waiters = [asyncio.create_task(cache.get("a")) for _ in range(20)]
    await asyncio.sleep(0)
    loader.gate.set()
    results = await asyncio.gather(*waiters)
    assert loader.calls == ["a"] and cache.loads == 1
    assert all(r is results[0] for r in results)
    assert await cache.get("a") is results[0] and loader.calls == ["a"]


async def test_a_cancelled_caller_does_not_cancel_the_load() -> None:
    loader = Loader()
    loader.gate.clear()
    cache: SessionCache[str, Value] = SessionCache(loader)
    first = asyncio.create_task(cache.get("a"))
    second = asyncio.create_task(cache.get("a"))
    await asyncio.sleep(0)
    first.cancel()
    loader.gate.set()
    assert (await second).name == "a"
    assert loader.calls == ["a"]


async def test_failed_load_is_not_cached() -> None:
    loader = Loader()
    loader.fail.add("a")
    cache: SessionCache[str, Value] = SessionCache(loader)
    with pytest.raises(RuntimeError):
        await cache.get("a")
    loader.fail.clear()
    assert (await cache.get("a")).name == "a"
    assert loader.calls == ["a", "a"]


async def test_load_timeout() -> None:
    loader = Loader()
    loader.gate.clear()
    cache: SessionCache[str, Value] = SessionCache(loader, load_timeout=0.05)
    with pytest.raises(TimeoutError):
        await cache.get("a")
    assert "a" not in cache


async def test_eviction_by_count_is_lru() -> None:
    loader = Loader()
    cache: SessionCache[str, Value] = SessionCache(loader, max_entries=2)
    await cache.get("a")
    await cache.get("b")
    await cache.get("a")  # a is now the most recent
    await cache.get("c")
    assert "b" not in cache and "a" in cache and "c" in cache
    assert cache.evictions == 1
    await cache.get("b")
    assert loader.calls == ["a", "b", "c", "b"]


async def test_eviction_by_bytes_keeps_one_oversized() -> None:
    loader = Loader()
    cache: SessionCache[str, Value] = SessionCache(loader, max_entries=10, max_bytes=100)
    await cache.get("a:60")
    await cache.get("b:60")
    assert "a:60" not in cache and len(cache) == 1
    await cache.get("c:500")
    assert list(cache._entries) == ["c:500"]
    unbounded: SessionCache[str, Value] = SessionCache(loader, max_bytes=0)
    await unbounded.get("x:999999")
    await unbounded.get("y:999999")
    assert len(unbounded) == 2


async def test_sliding_ttl() -> None:
    now = [0.0]
    loader = Loader()
    cache: SessionCache[str, Value] = SessionCache(loader, ttl=10, clock=lambda: now[0])
    await cache.get("a")
    now[0] = 8
    await cache.get("a")  # renewed
    now[0] = 16
    await cache.get("a")
    assert loader.calls == ["a"]
    now[0] = 27
    await cache.get("a")
    assert loader.calls == ["a", "a"]


async def test_app_decodes_once_for_concurrent_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await collector_store(tmp_path)
    decodes: list[Any] = []
    real = session_mod.read_session_events

    async def counting(*args: Any, **kwargs: Any) -> Any:
        decodes.append(1)
        await asyncio.sleep(0.05)
        return await real(*args, **kwargs)

    monkeypatch.setattr(session_mod, "read_session_events", counting)
    app = make_app(store, cache_size=1)
    cookie = f"cluster_name=raycluster-hs; cluster_namespace=default; session_name={SESSION}"
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        paths = ["/api/jobs/", "/api/v0/tasks", "/logical/actors", "/nodes?view=summary"] * 5
        responses = await asyncio.gather(*(c.get(p, headers={"Cookie": cookie}) for p in paths))
        assert [r.status for r in responses] == [200] * len(paths)
        assert len(decodes) == 1
        for p in paths:
            assert (await c.get(p, headers={"Cookie": cookie})).status == 200
        assert len(decodes) == 1
        # A second session pushes the first out of a one-entry cache.
        other = "session_2026-12-05_00-00-00_000000_1"
        base = "cluster-history/raycluster/default/raycluster-hs"
        await store.put(f"{base}/{other}/fetched_endpoints/restful__timezone", b"{}")
        other_cookie = cookie.replace(SESSION, other)
        assert (await c.get("/timezone", headers={"Cookie": other_cookie})).status == 200
        assert len(decodes) == 2
        assert (await c.get("/timezone", headers={"Cookie": cookie})).status == 200
        assert len(decodes) == 3 and app[STATE].cache.evictions == 2
