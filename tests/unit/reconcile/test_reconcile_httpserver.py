"""The metrics/probe server: what a scraper or kubelet probe sees over HTTP/1.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import prometheus_client
import pytest

from kuberay.reconcile.httpserver import ProbeChecks, Server, metrics_app, probes_app


def _fail() -> None:
    raise RuntimeError("caches not synced")


@pytest.fixture
async def probes() -> AsyncIterator[tuple[str, ProbeChecks]]:
    healthz, readyz = ProbeChecks(), ProbeChecks()
    healthz.add("ping", lambda: None)
    readyz.add("ping", lambda: None)
    readyz.add("caches", _fail)
    server = Server(probes_app(healthz, readyz), "127.0.0.1", 0)
    await server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", readyz
    finally:
        await server.stop()


async def _get(url: str, method: str = "GET") -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as s, s.request(method, url) as resp:
        return resp.status, await resp.text(), resp.headers.get("Content-Type", "")


async def test_probes_answer_as_controller_runtime(probes: tuple[str, ProbeChecks]) -> None:
    base, _ = probes
    assert await _get(f"{base}/healthz") == (200, "ok", "text/plain; charset=utf-8")
    assert await _get(f"{base}/healthz?verbose") == (
        200,
        "[+]ping ok\nok\n",
        "text/plain; charset=utf-8",
    )
    status, body, _ = await _get(f"{base}/readyz")
    assert status == 500
    assert body == "[+]ping ok\n[-]caches failed: caches not synced\nhealthz check failed\n"
    assert (await _get(f"{base}/readyz?exclude=caches"))[:2] == (200, "ok")
    assert (await _get(f"{base}/readyz/ping"))[:2] == (200, "ok")
    assert (await _get(f"{base}/readyz/caches"))[0] == 500
    assert (await _get(f"{base}/readyz/nope"))[:2] == (404, "no check named nope\n")


async def test_unknown_paths_other_methods_and_head(probes: tuple[str, ProbeChecks]) -> None:
    base, _ = probes
    assert (await _get(f"{base}/livez"))[0] == 404
    assert (await _get(f"{base}/healthz", "POST"))[0] == 405
    assert (await _get(f"{base}/healthz", "HEAD"))[:2] == (200, "")


async def test_one_connection_serves_many_requests(probes: tuple[str, ProbeChecks]) -> None:
    base, _ = probes
    connector = aiohttp.TCPConnector(limit=1)
    async with aiohttp.ClientSession(connector=connector) as s:
        for _ in range(3):
            async with s.get(f"{base}/healthz") as resp:
                assert await resp.text() == "ok"
        assert len(connector._conns) == 1  # the connection went back to the pool, reused


async def test_a_malformed_or_oversized_request_is_refused(
    probes: tuple[str, ProbeChecks],
) -> None:
    host, port = probes[0].removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"nonsense\r\n\r\n")
    assert (await reader.read()).startswith(b"HTTP/1.1 400 ")
    writer.close()
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"GET /healthz HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n")
    assert (await reader.read()).startswith(b"HTTP/1.1 431 ")
    writer.close()


async def test_metrics_are_the_registrys_exposition() -> None:
    registry = prometheus_client.CollectorRegistry()
    prometheus_client.Counter("things", "Things.", registry=registry).inc(3)
    server = Server(metrics_app(registry), "127.0.0.1", 0)
    await server.start()
    try:
        status, body, ctype = await _get(f"http://127.0.0.1:{server.port}/metrics")
    finally:
        await server.stop()
    assert status == 200
    assert ctype == prometheus_client.CONTENT_TYPE_LATEST
    assert "things_total 3.0" in body


async def test_stop_closes_open_connections(probes: tuple[str, ProbeChecks]) -> None:
    healthz = ProbeChecks()
    server = Server(probes_app(healthz, ProbeChecks()), "127.0.0.1", 0)
    await server.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    assert (await reader.readuntil(b"ok")).startswith(b"HTTP/1.1 200 ")
    await asyncio.wait_for(server.stop(), 10)
    assert await asyncio.wait_for(reader.read(), 10) == b""
    writer.close()


async def test_a_failing_handler_is_answered_500_and_the_server_goes_on() -> None:
    class Broken(prometheus_client.registry.Collector):
        def collect(self):  # type: ignore[no-untyped-def]
            raise RuntimeError("broken collector")

    registry = prometheus_client.CollectorRegistry()
    registry.register(Broken())
    server = Server(metrics_app(registry), "127.0.0.1", 0)
    await server.start()
    try:
        assert (await _get(f"http://127.0.0.1:{server.port}/metrics"))[0] == 500
        assert (await _get(f"http://127.0.0.1:{server.port}/nope"))[0] == 404
    finally:
        await server.stop()
