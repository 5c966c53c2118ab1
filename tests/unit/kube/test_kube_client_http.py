"""The client against local HTTP servers on 127.0.0.1 misbehaving the way apiservers do:
never answering, trickling, throttling with 429 + Retry-After."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
import pytest
from aiohttp import web
from kubernetes_asyncio import client as k8s_client

from kuberay.kube import Client, ServerError, TooManyRequests, TransportError, WriteRefused

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def make_client(port: int, **kw: Any) -> Client:
    cfg = k8s_client.Configuration()
    cfg.host = f"http://127.0.0.1:{port}"
    kw.setdefault("qps", 0)
    return Client(cfg, **kw)


@contextlib.asynccontextmanager
async def http_server(handler: Handler) -> AsyncIterator[int]:
    """An aiohttp server answering every path with ``handler``; yields its port."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[int]:
    """A TCP server that accepts, reads the request and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        with contextlib.suppress(Exception):
            await reader.read()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        for writer in held:
            writer.close()
        server.close()


def status_body(code: int, reason: str) -> bytes:
    return orjson.dumps(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason}
    )


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


async def drain(stream: AsyncIterator[Any]) -> None:
    async for _ in stream:
        pass


# ----- (8) a watch is bounded before its headers too ------------------------------


async def test_watch_to_a_server_that_never_answers_fails_instead_of_hanging() -> None:
    async with silent_server() as port:
        client = make_client(port, request_timeout=0.3)
        try:
            with pytest.raises(TransportError, match="no response"):
                await asyncio.wait_for(drain(client.watch("v1", "ConfigMap", "ns")), 10)
            assert client.stats.by_code[("watch", 0)] == 1
        finally:
            await client.close()


async def test_watch_that_sends_headers_then_nothing_fails_on_inactivity() -> None:
    async def headers_only(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        await asyncio.sleep(30)
        return resp

    async with http_server(headers_only) as port:
        client = make_client(port)
        try:
            with pytest.raises(TransportError, match="no event"):
                await asyncio.wait_for(
                    drain(client.watch("v1", "ConfigMap", "ns", inactivity_timeout=0.3)), 10
                )
        finally:
            await client.close()


# ----- (12) 429 / 5xx with Retry-After are retried, boundedly ---------------------


async def test_429_with_retry_after_is_retried_and_every_attempt_counted() -> None:
    calls: list[str] = []

    async def throttle_once(request: web.Request) -> web.StreamResponse:
        calls.append(request.method)
        if len(calls) == 1:
            return web.Response(
                status=429,
                body=status_body(429, "TooManyRequests"),
                headers={"Retry-After": "1"},
                content_type="application/json",
            )
        return web.json_response(configmap("x"))

    async with http_server(throttle_once) as port:
        client = make_client(port)
        try:
            got = await client.get("v1", "ConfigMap", "x", "ns")
        finally:
            await client.close()
    assert got["metadata"]["name"] == "x"
    assert len(calls) == 2
    assert client.stats.by_code[("get", 429)] == 1
    assert client.stats.by_code[("get", 200)] == 1


async def test_429_forever_gives_up_after_the_retry_bound() -> None:
    calls: list[str] = []

    async def always_429(request: web.Request) -> web.StreamResponse:
        calls.append(request.method)
        return web.Response(
            status=429,
            body=status_body(429, "TooManyRequests"),
            headers={"Retry-After": "0"},
            content_type="application/json",
        )

    async with http_server(always_429) as port:
        client = make_client(port, max_retries=3)
        try:
            with pytest.raises(TooManyRequests):
                await asyncio.wait_for(
                    client.create(configmap("y") | {"metadata": {"name": "y", "namespace": "ns"}}),
                    10,
                )
        finally:
            await client.close()
    assert len(calls) == 4, "one attempt plus max_retries retries"
    assert client.stats.by_code[("create", 429)] == 4


async def test_5xx_is_retried_only_with_retry_after() -> None:
    calls: list[str] = []

    async def flaky(request: web.Request) -> web.StreamResponse:
        calls.append(request.method)
        headers = {"Retry-After": "0"} if len(calls) == 1 else {}
        return web.Response(
            status=503,
            body=status_body(503, "ServiceUnavailable"),
            headers=headers,
            content_type="application/json",
        )

    async with http_server(flaky) as port:
        client = make_client(port)
        try:
            with pytest.raises(ServerError):
                await asyncio.wait_for(client.get("v1", "ConfigMap", "x", "ns"), 10)
        finally:
            await client.close()
    assert len(calls) == 2, "retried once (Retry-After), then a plain 503 is returned"


# ----- (13) a list page is bounded by stalls, not by its total transfer time --------


def trickled_list(chunks: int, gap: float) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        body = orjson.dumps(
            {
                "kind": "ConfigMapList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": "7"},
                "items": [configmap(f"c{i}") for i in range(50)],
            }
        )
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        step = len(body) // chunks + 1
        for i in range(0, len(body), step):
            await resp.write(body[i : i + step])
            await asyncio.sleep(gap)
        await resp.write_eof()
        return resp

    return handler


async def test_a_list_slower_in_total_than_the_timeout_but_steady_succeeds() -> None:
    # 8 chunks 0.25 s apart: 2 s in total, more than the timeout; each gap well below it
    # (with room for a busy machine).
    async with http_server(trickled_list(chunks=8, gap=0.25)) as port:
        client = make_client(port, request_timeout=1.5)
        try:
            items, rv = await client.list_all("v1", "ConfigMap", "ns")
        finally:
            await client.close()
    assert len(items) == 50 and rv == "7"


async def test_a_stalled_list_fails() -> None:
    async with http_server(trickled_list(chunks=2, gap=30)) as port:
        client = make_client(port, request_timeout=0.3)
        try:
            with pytest.raises(TransportError):
                await asyncio.wait_for(client.list_all("v1", "ConfigMap", "ns"), 10)
        finally:
            await client.close()


# ----- the leader elector's view does not queue behind the main rate limit -----------


async def test_a_view_has_its_own_rate_limiter() -> None:
    async def ok(request: web.Request) -> web.StreamResponse:
        return web.json_response(configmap("x"))

    async with http_server(ok) as port:
        client = make_client(port, qps=0.001, burst=1)
        view = client.view()
        try:
            await client.get("v1", "ConfigMap", "x", "ns")  # takes the only token
            starved = asyncio.create_task(client.get("v1", "ConfigMap", "x", "ns"))
            got = await asyncio.wait_for(view.get("v1", "ConfigMap", "x", "ns"), 10)
            assert got["metadata"]["name"] == "x"
            assert not starved.done(), "the main client is still waiting for a token"
            starved.cancel()
            await asyncio.wait([starved])
            assert client.stats.by_verb["get"] == 2, "a view counts into the same stats"
        finally:
            await view.close()
            await client.close()


async def test_a_write_guard_refuses_writes_without_sending_them() -> None:
    methods: list[str] = []

    async def ok(request: web.Request) -> web.StreamResponse:
        methods.append(request.method)
        return web.json_response(configmap("x"))

    async with http_server(ok) as port:
        client = make_client(port)
        allowed = True
        client.set_write_guard(lambda: allowed)
        try:
            await client.create(configmap("x") | {"metadata": {"name": "x", "namespace": "ns"}})
            allowed = False
            with pytest.raises(WriteRefused):
                await client.patch("v1", "ConfigMap", "x", {"data": {"a": "b"}}, "ns")
            with pytest.raises(WriteRefused):
                await client.delete("v1", "ConfigMap", "x", "ns")
            await client.get("v1", "ConfigMap", "x", "ns")  # reads are not guarded
            await client.view().create(
                configmap("x") | {"metadata": {"name": "x", "namespace": "ns"}}
            )
        finally:
            await client.close()
    assert methods == ["POST", "GET", "POST"], "refused writes never reached the server"


async def test_request_headers_keep_repeated_names_and_the_token_replaces_basic_auth() -> None:
    seen: list[list[tuple[str, str]]] = []

    async def echo(request: web.Request) -> web.StreamResponse:
        seen.append(list(request.headers.items()))
        return web.json_response({"kind": "ConfigMap", "metadata": {"name": "x"}})

    class Config:
        host = ""
        ssl_ca_cert = cert_file = key_file = None
        verify_ssl = True
        extra_headers = [
            ("Impersonate-Group", "g1"),
            ("Impersonate-Group", "g2"),
            ("Authorization", "Basic dTpw"),
        ]

        def __init__(self, token: str) -> None:
            self.token = token

        async def auth_settings(self) -> dict[str, Any]:
            return {"BearerToken": {"value": self.token}} if self.token else {}

    async with http_server(echo) as port:
        for token in ("", "Bearer t0ken"):
            cfg = Config(token)
            cfg.host = f"http://127.0.0.1:{port}"
            async with Client(cfg, qps=0) as client:  # type: ignore[arg-type]
                await client.get("v1", "ConfigMap", "x", "default")
    basic, bearer = seen
    assert [v for k, v in basic if k == "Impersonate-Group"] == ["g1", "g2"]
    assert [v for k, v in basic if k == "Authorization"] == ["Basic dTpw"]
    assert [v for k, v in bearer if k == "Authorization"] == ["Bearer t0ken"]
    assert [v for k, v in bearer if k == "Impersonate-Group"] == ["g1", "g2"]
