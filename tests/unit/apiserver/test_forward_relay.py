"""How the V2 proxy relays the kube-apiserver's answers (``kuberay.apiserver.forward``), with a
scripted apiserver on 127.0.0.1: an answer that arrived whole goes back whole with its length,
one that keeps coming streams, and one cut before its body is a 502."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from collections.abc import AsyncIterator, Callable

import aiohttp

from kuberay.apiserver.options import ApiServerOptions
from kuberay.apiserver.upstream import Upstream
from kuberay.kube.restconfig import RestConfig
from tests.apiserver_serving import api_server
from tests.unit.http.scripted import Script, Server, keep_answering, sends, serving

PATH = "/apis/ray.io/v1/namespaces/ns/rayclusters"
BEARER = {"Authorization": "Bearer t0ken"}


@contextlib.asynccontextmanager
async def proxy_to(script: Callable[[Server], Script]) -> AsyncIterator[tuple[str, Server]]:
    """The API server (caller mode) on a free port over a scripted apiserver; its URL."""
    async with serving(script) as upstream_server:
        upstream = Upstream(RestConfig(f"http://127.0.0.1:{upstream_server.port}"))
        async with api_server(ApiServerOptions(collect_metrics=False), upstream) as url:
            yield url, upstream_server


async def test_an_answer_that_arrived_whole_goes_back_with_its_length() -> None:
    chunks = [b'{"kind":"RayClusterList",', b'"a":', b'"b"}']
    body = b"".join(chunks)
    wire = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nAudit-Id: 7\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks)
        + b"0\r\n\r\n"
    )

    async with proxy_to(sends(wire)) as (url, server):
        async with aiohttp.ClientSession() as http, http.get(url + PATH, headers=BEARER) as resp:
            assert resp.status == 200
            assert await resp.read() == body
            assert resp.headers["Content-Length"] == str(len(body))
            assert "Transfer-Encoding" not in resp.headers
            assert resp.headers["Audit-Id"] == "7"
            assert resp.headers["Content-Type"] == "application/json"
        assert b"Authorization: Bearer t0ken\r\n" in server.heads[0]


async def test_an_answer_still_coming_streams_piece_by_piece() -> None:
    second = asyncio.Event()

    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_head(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n")
            await writer.drain()
            await second.wait()  # the caller has the first piece before the rest exists
            writer.write(b"7\r\nsecond\n\r\n0\r\n\r\n")
            await writer.drain()

        return run

    async with (
        proxy_to(script) as (url, _),
        aiohttp.ClientSession() as http,
        http.get(url + PATH, headers=BEARER) as resp,
    ):
        assert resp.status == 200
        assert await asyncio.wait_for(resp.content.readline(), 10) == b"first\n"
        second.set()
        assert await resp.content.read() == b"second\n"
        assert "Content-Length" not in resp.headers


async def test_a_gzip_answer_reaches_the_caller_decoded() -> None:
    items = b",".join(b'{"metadata":{"name":"rc-%04d"}}' % i for i in range(3000))
    body = b'{"kind":"RayClusterList","items":[' + items + b"]}"
    async with (
        proxy_to(keep_answering(gzip.compress(body), "Content-Encoding: gzip")) as (url, server),
        aiohttp.ClientSession() as http,
        http.get(url + PATH, headers={**BEARER, "Accept-Encoding": "identity"}) as resp,
    ):
        assert resp.status == 200
        assert "Content-Encoding" not in resp.headers
        assert await resp.read() == body
    assert b"Accept-Encoding: gzip\r\n" in server.heads[0]


async def test_an_answer_cut_before_its_body_is_a_502() -> None:
    wire = b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n"
    async with (
        proxy_to(sends(wire)) as (url, _),
        aiohttp.ClientSession() as http,
        http.get(url + PATH, headers=BEARER) as resp,
    ):
        assert resp.status == 502
        assert await resp.text() == "the kube-apiserver did not answer\n"


async def test_a_small_answer_on_a_kept_alive_connection_frees_it_for_the_next() -> None:
    async with proxy_to(keep_answering(b'{"kind":"RayCluster"}')) as (url, server):
        async with aiohttp.ClientSession() as http:
            for _ in range(3):
                async with http.get(url + PATH + "/a", headers=BEARER) as resp:
                    assert await resp.read() == b'{"kind":"RayCluster"}'
        assert server.connections == 1
