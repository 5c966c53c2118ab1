"""What a watch asks the apiserver for, and how long a quiet one is kept open: bookmarks
and a client-go-like server-side timeout on every watch, no client-side give-up before
that timeout, TCP keepalive on every connection; plus the client-go request metrics."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import orjson
from aiohttp import web
from prometheus_client import REGISTRY

from kuberay.informers.reflector import Reflector
from kuberay.kube import Client, TransportError, WatchEvent
from kuberay.kube.client import WATCH_TIMEOUT_GRACE
from kuberay.kube.transport import TCP_KEEPALIVE, keepalive_socket
from tests.unit.kube.test_kube_client_http import http_server, make_client


class _Recorder:
    """A ListerWatcher whose watches end at once, recording their arguments."""

    description = "recorder"

    def __init__(self) -> None:
        self.watches: list[tuple[str, int, float]] = []

    async def list(self, resource_version: str | None) -> tuple[list[dict[str, Any]], str]:
        return [], "7"

    async def _events(self) -> AsyncIterator[WatchEvent]:
        yield WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "9"}})

    def watch(
        self, resource_version: str, timeout_seconds: int, inactivity_timeout: float
    ) -> AsyncIterator[WatchEvent]:
        self.watches.append((resource_version, timeout_seconds, inactivity_timeout))
        return self._events()


class _Sink:
    def replace(self, objs: list[dict[str, Any]], resource_version: str) -> None: ...
    def add(self, obj: dict[str, Any]) -> None: ...
    def update(self, obj: dict[str, Any]) -> None: ...
    def delete(self, obj: dict[str, Any]) -> None: ...


async def test_reflector_watches_5_to_10_minutes_and_waits_that_long_for_a_quiet_one() -> None:
    lw = _Recorder()
    reflector = Reflector(lw, _Sink())
    await reflector.list_once()
    for _ in range(50):
        await reflector.watch_once()
    for _rv, timeout, inactivity in lw.watches:
        assert 300 <= timeout < 600  # client-go: minWatchTimeout * [1, 2)
        assert inactivity == timeout + WATCH_TIMEOUT_GRACE
    assert len({t for _, t, _ in lw.watches}) > 1  # randomised per watch
    # A bookmark moves the resourceVersion the next watch starts from.
    assert [rv for rv, _, _ in lw.watches[:2]] == ["7", "9"]


async def test_watch_asks_for_bookmarks_and_a_server_timeout_and_is_not_cut_before_it() -> None:
    seen: list[dict[str, str]] = []

    async def quiet_then_bookmark(request: web.Request) -> web.StreamResponse:
        seen.append(dict(request.query))
        resp = web.StreamResponse()
        await resp.prepare(request)
        await asyncio.sleep(0.6)  # longer than a 0.3 s bound, shorter than 1 s + grace
        line = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "5"}}}
        await resp.write(orjson.dumps(line) + b"\n")
        return resp

    async with http_server(quiet_then_bookmark) as port:
        client = make_client(port)
        try:
            events = [e async for e in client.watch("v1", "ConfigMap", "ns", timeout_seconds=1)]
            assert [e.type for e in events] == ["BOOKMARK"]
            assert seen[0]["allowWatchBookmarks"] == "true"
            assert seen[0]["timeoutSeconds"] == "1"
            # An explicit bound still applies.
            try:
                async for _ in client.watch("v1", "ConfigMap", "ns", inactivity_timeout=0.3):
                    pass
                raise AssertionError("a 0.3 s inactivity bound did not fire")
            except TransportError:
                pass
        finally:
            await client.close()


def test_client_sockets_use_go_dialer_keepalive() -> None:
    info = socket.getaddrinfo("127.0.0.1", 80, type=socket.SOCK_STREAM)[0]
    sock = keepalive_socket(info)
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        if hasattr(socket, "TCP_KEEPIDLE"):
            got = tuple(
                sock.getsockopt(socket.IPPROTO_TCP, opt)
                for opt in (socket.TCP_KEEPIDLE, socket.TCP_KEEPINTVL, socket.TCP_KEEPCNT)
            )
            assert got == TCP_KEEPALIVE
    finally:
        sock.close()


def _value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_request_metrics_are_client_gos() -> None:
    calls = 0

    async def throttle_once(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        calls += 1
        if calls == 1:
            return web.Response(status=429, headers={"Retry-After": "0"}, body=b"{}")
        return web.json_response({"kind": "ConfigMap", "metadata": {"name": "x"}})

    async with http_server(throttle_once) as port:
        client: Client = make_client(port)
        host = f"127.0.0.1:{port}"
        try:
            await client.get("v1", "ConfigMap", "x", "ns")
        finally:
            await client.close()
    # Both attempts counted, the second as a retry; one duration for the whole call.
    assert _value("rest_client_requests_total", code="429", method="GET", host=host) == 1
    assert _value("rest_client_requests_total", code="200", method="GET", host=host) == 1
    assert _value("rest_client_request_retries_total", code="200", verb="GET", host=host) == 1
    assert _value("rest_client_request_duration_seconds_count", verb="GET", host=host) == 1
    assert _value("rest_client_rate_limiter_duration_seconds_count", verb="GET", host=host) == 2
    assert _value("rest_client_request_size_bytes_count", verb="GET", host=host) == 2
    assert _value("rest_client_response_size_bytes_count", verb="GET", host=host) == 1
