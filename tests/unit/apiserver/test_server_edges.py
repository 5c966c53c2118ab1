"""The API server's edges: its flags, bearer tokens, the body cap, CORS, TLS on the
listener, and the console script's refusals."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kuberay.apiserver.app import make_app
from kuberay.apiserver.identity import MissingCredentials, caller_identity
from kuberay.apiserver.main import listener_tls, main
from kuberay.apiserver.options import (
    CALLER,
    SERVICE_ACCOUNT,
    ApiServerOptions,
    OptionsError,
    parse_options,
)
from kuberay.apiserver.upstream import Upstream
from kuberay.kube.restconfig import RestConfig
from kuberay.testing.pki import TinyCA
from tests.apiserver_serving import api_server


def test_upstreams_flags_are_accepted_with_one_or_two_dashes() -> None:
    options = parse_options(
        [
            "-httpPortFlag=127.0.0.1:9999",
            "--enable-api-server-v2=false",
            "-cors-allow-origin",
            "https://ui.example",
            "-collectMetricsFlag=false",
            "-rpcPortFlag=:8887",
            "-grpc_timeout=60s",
            "-logFilePath=/tmp/x.log",
            "-localSwaggerPath=/swagger",
        ]
    )
    assert (options.http_host, options.http_port) == ("127.0.0.1", 9999)
    assert not options.enable_v2 and not options.collect_metrics
    assert options.cors_allow_origin == "https://ui.example"
    assert options.auth_mode == CALLER  # ours: acting as the caller unless told otherwise


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--auth-mode=anyone"], "--auth-mode"),
        (["--tls-cert-file=/a"], "--tls-private-key-file"),
        (["--httpPortFlag=8888"], "--httpPortFlag"),
        (["--enable-api-server-v2=maybe"], "maybe"),
        (["--no-such-flag"], "--no-such-flag"),
    ],
)
def test_a_bad_flag_is_named(argv: list[str], named: str) -> None:
    with pytest.raises(OptionsError, match=named):
        parse_options(argv)


def test_the_console_script_exits_2_naming_a_bad_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--auth-mode=root"])
    assert exc.value.code == 2
    assert "--auth-mode" in capsys.readouterr().err


@pytest.mark.parametrize(
    "header",
    [None, "", "Basic dXNlcjpwYXNz", "Bearer ", "Bearer a b", "Bearer a\r\nX: y", "Bearer é",
     "Bearer " + "a" * 20000],
)  # fmt: skip
def test_only_a_well_formed_bearer_token_is_a_caller(header: str | None) -> None:
    with pytest.raises(MissingCredentials) as exc:
        caller_identity(header)
    assert "dXNlcjpwYXNz" not in str(exc.value)


def test_a_token_is_never_in_an_identitys_repr() -> None:
    identity = caller_identity("bearer abc.DEF-123_~+/==")
    assert identity.authorization == "Bearer abc.DEF-123_~+/=="
    assert "abc" not in repr(identity)


@pytest.fixture
async def server(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    fields: dict[str, Any] = getattr(request, "param", {})
    async with api_server(ApiServerOptions(**fields)) as url:  # nothing behind it
        yield url


@pytest.mark.parametrize("server", [{"auth_mode": SERVICE_ACCOUNT}], indirect=True)
async def test_a_body_over_three_mebibytes_is_refused_unread(server: str) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{server}/apis/ray.io/v1/namespaces/ns/rayclusters", data=b"x" * (3 * 2**20 + 1)
        ) as resp,
    ):
        assert resp.status == 413


@pytest.mark.parametrize(
    "server", [{"cors_allow_origin": "https://ui.example", "auth_mode": CALLER}], indirect=True
)
async def test_cors_for_the_allowed_origin_only(server: str) -> None:
    preflight = {"Origin": "https://ui.example", "Access-Control-Request-Method": "POST"}
    async with aiohttp.ClientSession() as http:
        async with http.options(f"{server}/apis/ray.io/v1/rayclusters", headers=preflight) as resp:
            assert resp.status == 204  # a preflight carries no token, and needs none
            assert resp.headers["Access-Control-Allow-Origin"] == "https://ui.example"
            assert "Authorization" in resp.headers["Access-Control-Allow-Headers"]
        async with http.get(f"{server}/healthz", headers={"Origin": "https://ui.example"}) as r:
            assert r.headers["Access-Control-Allow-Origin"] == "https://ui.example"
        async with http.get(f"{server}/healthz", headers={"Origin": "https://evil.example"}) as r:
            assert "Access-Control-Allow-Origin" not in r.headers
        # the refusal of a caller without a token is readable by the allowed page
        async with http.get(
            f"{server}/apis/ray.io/v1/rayclusters", headers={"Origin": "https://ui.example"}
        ) as r:
            assert r.status == 401
            assert r.headers["Access-Control-Allow-Origin"] == "https://ui.example"


@pytest.mark.parametrize("server", [{"enable_v2": False}], indirect=True)
async def test_without_v2_the_routes_are_not_found(server: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(
            f"{server}/apis/ray.io/v1/rayclusters", headers={"Authorization": "Bearer t"}
        ) as resp:
            assert resp.status == 404
        async with http.get(f"{server}/healthz") as resp:
            assert resp.status == 200


async def test_tls_on_the_listener(tmp_path: Path) -> None:
    ca = TinyCA("test-ca")
    pair = ca.issue("apiserver", ips=["127.0.0.1"], server=True)
    (tmp_path / "tls.crt").write_bytes(pair.cert_pem)
    (tmp_path / "tls.key").write_bytes(pair.key_pem)
    options = ApiServerOptions(
        tls_cert_file=str(tmp_path / "tls.crt"), tls_private_key_file=str(tmp_path / "tls.key")
    )
    upstream = Upstream(RestConfig("http://127.0.0.1:9"))
    runner = web.AppRunner(make_app(options, upstream))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=listener_tls(options)).start()
    url = f"https://127.0.0.1:{runner.addresses[0][1]}/healthz"
    trust = ssl.create_default_context(cadata=ca.pair.cert_pem.decode())
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(url, ssl=trust) as resp:
                assert resp.status == 200
            with pytest.raises(aiohttp.ClientError):  # plain http is not answered
                async with http.get(url.replace("https", "http"), timeout=aiohttp.ClientTimeout(5)):
                    pass
    finally:
        await runner.cleanup()
        await upstream.close()
    await asyncio.sleep(0)


@pytest.mark.parametrize("server", [{"auth_mode": CALLER}], indirect=True)
async def test_metrics_count_and_time_requests_by_route_and_code(server: str) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(2):
            async with http.get(f"{server}/healthz") as resp:
                assert resp.status == 200
        async with http.get(f"{server}/apis/ray.io/v1/rayclusters") as resp:
            assert resp.status == 401  # counted too, under its own route name
        async with http.get(f"{server}/metrics") as resp:
            text = await resp.text()
    assert 'kuberay_apiserver_requests_total{code="200",method="GET",route="healthz"} 2.0' in text
    assert 'kuberay_apiserver_requests_total{code="401",method="GET",route="unauthorized"}' in text
    timed = 'kuberay_apiserver_request_duration_seconds_count{code="200",method="GET",'
    assert timed + 'route="healthz"} 2.0' in text


async def test_a_watch_its_caller_left_ends_upstream_at_once() -> None:
    """The dashboard leaves a watch whenever another namespace is chosen: the server must
    not hold the kube-apiserver's watch open until its next event."""
    from kuberay.apiserver.main import serve

    upstream_gone = asyncio.Event()

    async def watch(request: web.Request) -> web.StreamResponse:
        answer = web.StreamResponse(headers={"Content-Type": "application/json"})
        await answer.prepare(request)
        await answer.write(b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"1"}}}\n')
        try:
            await asyncio.sleep(60)  # a quiet namespace: no event for a long time
        finally:
            upstream_gone.set()
        return answer

    fake = web.Application()
    fake.router.add_get("/{tail:.*}", watch)
    fake_runner = web.AppRunner(fake, handler_cancellation=True)
    await fake_runner.setup()
    await web.TCPSite(fake_runner, "127.0.0.1", 0).start()
    config = RestConfig(f"http://127.0.0.1:{fake_runner.addresses[0][1]}")
    options = ApiServerOptions(http_host="127.0.0.1", http_port=0, auth_mode=SERVICE_ACCOUNT)
    stop = asyncio.Event()
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve(options, config, stop, ready=ready))
    try:
        port = await asyncio.wait_for(ready, 10)
        url = f"http://127.0.0.1:{port}/apis/ray.io/v1/namespaces/a/rayclusters?watch=true"
        async with aiohttp.ClientSession() as http, http.get(url) as resp:
            assert b"BOOKMARK" in await resp.content.readline()
        # the caller closed its connection
        await asyncio.wait_for(upstream_gone.wait(), 5)
    finally:
        stop.set()
        await asyncio.wait_for(server, 30)
        await fake_runner.cleanup()
