"""Upstream's retry cases (``apiserversdk/proxy_test.go``'s ``retryRoundTripper``), through
the whole server against a scripted kube-apiserver on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kuberay.apiserver.app import make_app
from kuberay.apiserver.options import SERVICE_ACCOUNT, ApiServerOptions
from kuberay.apiserver.retry import RetryPolicy
from kuberay.apiserver.upstream import Upstream
from kuberay.kube.restconfig import RestConfig

FAST = RetryPolicy(initial=0.01, max_backoff=0.05)
CLUSTERS = "/apis/ray.io/v1/namespaces/ns/rayclusters"


class Script:
    """A kube-apiserver that answers each request with the next scripted status."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.bodies: list[bytes] = []
        self.queries: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.bodies.append(await request.read())
        self.queries.append(request.rel_url.raw_query_string)
        status = self.statuses[min(len(self.bodies) - 1, len(self.statuses) - 1)]
        return web.json_response({"attempt": len(self.bodies)}, status=status)


Start = Callable[..., Any]


@pytest.fixture
async def serve() -> AsyncIterator[Start]:
    cleanups: list[Any] = []

    async def start(script: Script, policy: RetryPolicy = FAST) -> str:
        fake = web.Application()
        fake.router.add_route("*", "/{tail:.*}", script.handle)
        fake_runner = web.AppRunner(fake)
        await fake_runner.setup()
        await web.TCPSite(fake_runner, "127.0.0.1", 0).start()
        upstream = Upstream(RestConfig(f"http://127.0.0.1:{fake_runner.addresses[0][1]}"))
        options = ApiServerOptions(auth_mode=SERVICE_ACCOUNT)
        runner = web.AppRunner(make_app(options, upstream, policy=policy))
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        cleanups.extend([runner.cleanup, upstream.close, fake_runner.cleanup])
        return f"http://127.0.0.1:{runner.addresses[0][1]}"

    yield start
    for cleanup in cleanups:
        await cleanup()


async def _get(url: str, method: str = "GET", **kw: Any) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as http, http.request(method, url, **kw) as resp:
        return resp.status, await resp.text()


async def test_no_retry_on_success(serve: Start) -> None:
    script = Script([200])
    assert (await _get(await serve(script) + CLUSTERS))[0] == 200
    assert len(script.bodies) == 1


async def test_retried_then_succeeds(serve: Start) -> None:
    script = Script([500, 503, 200])
    status, text = await _get(await serve(script) + CLUSTERS)
    assert (status, len(script.bodies)) == (200, 3)
    assert '"attempt": 3' in text


async def test_gives_up_after_three_retries_with_the_last_answer(serve: Start) -> None:
    script = Script([500])
    assert (await _get(await serve(script) + CLUSTERS))[0] == 500
    assert len(script.bodies) == 4  # the first attempt and three retries


async def test_the_body_is_replayed_on_each_attempt(serve: Start) -> None:
    script = Script([502, 429, 201])
    url = await serve(script) + CLUSTERS
    status, _ = await _get(url, "POST", json={"kind": "RayCluster"})
    assert status == 201
    assert script.bodies == [b'{"kind": "RayCluster"}'] * 3


@pytest.mark.parametrize("status", [400, 403, 404, 409, 422])
async def test_no_retry_on_a_client_error(serve: Start, status: int) -> None:
    script = Script([status, 200])
    assert (await _get(await serve(script) + CLUSTERS))[0] == status
    assert len(script.bodies) == 1


async def test_the_overall_deadline_ends_retrying(serve: Start) -> None:
    script = Script([504])
    slow = RetryPolicy(initial=0.2, max_backoff=1.0, overall=0.3)
    status, text = await _get(await serve(script, slow) + CLUSTERS)
    assert (status, text) == (502, "retry timeout exceeded context deadline\n")
    assert len(script.bodies) == 2  # 0.2 s fits in 0.3 s, the next 0.4 s does not


# What the kube-apiserver takes for a watch (apimachinery reads the first ``watch`` value:
# absent, ``0`` or ``false`` in any case is no watch, anything else is one), so the proxy
# streams exactly those and retries only the others.
@pytest.mark.parametrize(
    "query", ["watch=true", "watch=1", "watch=TRUE", "watch=yes", "watch=", "watch=1&watch=0"]
)
async def test_a_watch_is_never_retried(serve: Start, query: str) -> None:
    script = Script([500, 200])
    assert (await _get(await serve(script) + CLUSTERS + "?" + query))[0] == 500
    assert len(script.bodies) == 1


@pytest.mark.parametrize("query", ["watch=false", "watch=FALSE", "watch=0", "watch=0&watch=1"])
async def test_what_the_apiserver_takes_for_no_watch_is_retried(serve: Start, query: str) -> None:
    script = Script([500, 200])
    assert (await _get(await serve(script) + CLUSTERS + "?" + query))[0] == 200
    assert len(script.bodies) == 2


async def test_the_apiserver_unreachable_is_a_502(serve: Start) -> None:
    upstream = Upstream(RestConfig("http://127.0.0.1:9"))  # discard port: refused
    runner = web.AppRunner(make_app(ApiServerOptions(auth_mode=SERVICE_ACCOUNT), upstream))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        status, _ = await _get(f"http://127.0.0.1:{runner.addresses[0][1]}{CLUSTERS}")
        assert status == 502
    finally:
        await runner.cleanup()
        await upstream.close()


async def test_query_strings_pass_through_and_the_events_selector_is_kept(serve: Start) -> None:
    script = Script([200])
    url = await serve(script)
    await _get(url + CLUSTERS + "?limit=5&continue=abc&labelSelector=a%3Db")
    await _get(url + "/apis/events.k8s.io/v1/namespaces/ns/events?fieldSelector=x%3Dy&limit=2")
    assert script.queries == [
        "limit=5&continue=abc&labelSelector=a%3Db",
        "fieldSelector=x%3Dy%2Cregarding.apiVersion%3Dray.io%2Fv1&limit=2",
    ]
