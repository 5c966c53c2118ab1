"""The apiserver client's HTTP/1.1 layer (kuberay.http) against scripted servers on
127.0.0.1: bodies framed every way a server frames them, keep-alive, a connection the
server closed, proxies, TLS, and the errors a user reads."""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
from pathlib import Path

import pytest

from kuberay import http
from kuberay.testing.pki import TinyCA
from tests.unit.http.scripted import Script, Server, answer, keep_answering, sends, serving


async def test_keep_alive_reuses_one_connection_for_sequential_requests() -> None:
    async with serving(keep_answering(b'{"ok":true}')) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}", user_agent="ua/1")
        for _ in range(3):
            async with await pool.request("GET", "/api", params={"a": "b c"}) as resp:
                assert resp.status == 200 and await resp.read() == b'{"ok":true}'
        await pool.close()
    assert server.connections == 1
    first = server.heads[0].decode()
    assert first.startswith("GET /api?a=b+c HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{server.port}\r\n" in first and "User-Agent: ua/1\r\n" in first


async def test_chunked_body_is_read_as_lines_across_chunk_boundaries() -> None:
    events = [b'{"type":"ADDED","n":1}\n', b'{"type":"MODIFIED","n":2}\n', b'{"type":"BOOKMARK"}\n']
    wire = b"".join(events)
    pieces = [wire[:5], wire[5:30], wire[30:31], wire[31:]]

    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_head(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for piece in pieces:
                writer.write(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
                await asyncio.sleep(0.01)
            writer.write(b"0\r\nX-Trailer: 1\r\n\r\n")
            await server.read_head(reader)  # the connection came back for a second request
            writer.write(answer(b"again"))

        return run

    async with serving(script) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        resp = await pool.request("GET", "/watch")
        lines = [await resp.readline() for _ in range(4)]
        assert lines == [*events, b""]
        assert resp.closed
        async with await pool.request("GET", "/again") as again:
            assert await again.read() == b"again"
        await pool.close()
    assert server.connections == 1


async def test_a_body_received_whole_is_one_piece_and_frees_the_connection_at_once() -> None:
    chunks = [b'{"a":', b"1,", b'"b":2}']
    wire = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"

    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_head(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + wire)
            await server.read_head(reader)
            writer.write(answer(b"again"))

        return run

    async with serving(script) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        resp = await pool.request("GET", "/one")
        assert await resp.read_some() == b'{"a":1,"b":2}'
        assert resp.closed  # nothing more to wait for: the connection is back in the pool
        assert await resp.read_some() == b""
        async with await pool.request("GET", "/again") as again:
            assert await again.read() == b"again"
        await pool.close()
    assert server.connections == 1


async def test_gzip_answers_are_decoded_and_gzip_is_asked_for() -> None:
    payload = b'{"items":[' + b",".join(b'{"n":%d}' % i for i in range(2000)) + b"]}"
    async with serving(keep_answering(gzip.compress(payload), "Content-Encoding: gzip")) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/list") as resp:
            assert await resp.read() == payload
        await pool.close()
    assert b"Accept-Encoding: gzip\r\n" in server.heads[0]


async def test_a_body_cut_short_is_an_error_not_a_short_answer() -> None:
    async with serving(sends(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        resp = await pool.request("GET", "/x")
        with pytest.raises(http.ServerDisconnected):
            await resp.read()
        await pool.close()


def closes_after_first(server: Server) -> Script:
    """Answers the first request of each connection; reads a second one and hangs up."""

    async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(answer(b"first"))
        await writer.drain()
        await server.read_head(reader)  # seen, never answered

    return run


async def test_a_get_on_a_connection_the_server_dropped_is_sent_again_once() -> None:
    async with serving(closes_after_first) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/a") as resp:
            assert await resp.read() == b"first"
        async with await pool.request("GET", "/b") as resp:
            assert await resp.read() == b"first"  # from the second connection
        await pool.close()
    assert server.connections == 2
    assert [h.split(b" ")[1] for h in server.heads] == [b"/a", b"/b", b"/b"]


async def test_a_post_whose_connection_drops_is_never_sent_twice() -> None:
    async with serving(closes_after_first) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/a") as resp:
            await resp.read()
        with pytest.raises(http.ServerDisconnected):
            await pool.request("POST", "/create", body=b"{}")
        await pool.close()
    assert [h.split(b" ", 2)[:2] for h in server.heads] == [[b"GET", b"/a"], [b"POST", b"/create"]]


async def test_an_idle_connection_closed_by_the_server_is_not_reused() -> None:
    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_head(reader)
            writer.write(answer(b"once"))
            await writer.drain()  # then the connection closes: an idle timeout

        return run

    async with serving(script) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        for _ in range(2):
            async with await pool.request("POST", "/p", body=b"x") as resp:
                assert await resp.read() == b"once"
            await asyncio.sleep(0.05)
        await pool.close()
    assert server.connections == 2 and len(server.heads) == 2


async def test_closing_a_response_ends_a_read_in_progress() -> None:
    async with serving(
        sends(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", then_stall=True)
    ) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        resp = await pool.request("GET", "/watch")
        reading = asyncio.ensure_future(resp.readline())
        await asyncio.sleep(0.05)
        resp.close()
        async with asyncio.timeout(2):
            with pytest.raises(http.ServerDisconnected):
                await reading
        await pool.close()


async def test_read_timeout_bounds_each_wait_for_data() -> None:
    async with serving(
        sends(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", then_stall=True)
    ) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        resp = await pool.request("GET", "/stall")
        resp.read_timeout = 0.2
        with pytest.raises(TimeoutError):
            await resp.read()
        resp.close()
        await pool.close()


async def test_refused_and_unknown_hosts_are_connect_errors_naming_the_cause() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
    pool = http.ConnectionPool(f"http://127.0.0.1:{port}")
    with pytest.raises(http.ConnectError) as refused:
        await pool.request("GET", "/")
    assert isinstance(refused.value.os_error, ConnectionRefusedError)
    loop = asyncio.get_running_loop()
    lookups: list[object] = []
    real_getaddrinfo = loop.getaddrinfo

    async def recording(host: object, *args: object, **kwargs: object) -> object:
        lookups.append(host)
        return await real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    loop.getaddrinfo = recording  # type: ignore[method-assign,assignment]
    try:
        pool = http.ConnectionPool("http://no-such-host.invalid:80")
        with pytest.raises(http.ConnectError) as unknown:
            await pool.request("GET", "/")
        proxied = http.ConnectionPool(
            "https://apiserver:6443", proxy="http://proxy.kuberay.invalid:3128"
        )
        with pytest.raises(http.ProxyError) as no_proxy:
            await proxied.request("GET", "/")
    finally:
        del loop.getaddrinfo  # type: ignore[method-assign]
    assert isinstance(unknown.value.os_error, socket.gaierror)
    assert isinstance(no_proxy.value.os_error, socket.gaierror)
    assert lookups == []  # RFC 6761: an .invalid name is never sent to a resolver


async def test_an_http_origin_through_a_proxy_uses_absolute_targets_and_proxy_auth() -> None:
    async with serving(keep_answering(b"via proxy")) as proxy:
        pool = http.ConnectionPool(
            "http://apiserver.kuberay.invalid:8080", proxy=f"http://u%40x:p@127.0.0.1:{proxy.port}"
        )
        async with await pool.request("GET", "/api") as resp:
            assert await resp.read() == b"via proxy"
        await pool.close()
    head = proxy.heads[0].decode()
    assert head.startswith("GET http://apiserver.kuberay.invalid:8080/api HTTP/1.1\r\n")
    assert "Proxy-Authorization: Basic dUB4OnA=\r\n" in head  # base64("u@x:p")


async def test_a_proxy_refusing_the_tunnel_is_a_proxy_error_with_its_status() -> None:
    async with serving(sends(answer(b"", status="407 Proxy Authentication Required"))) as proxy:
        pool = http.ConnectionPool(
            "https://apiserver.kuberay.invalid:6443", proxy=f"http://127.0.0.1:{proxy.port}"
        )
        with pytest.raises(http.ProxyError) as refused:
            await pool.request("GET", "/api")
        await pool.close()
    assert refused.value.status == 407
    assert refused.value.reason == "Proxy Authentication Required"
    assert proxy.heads[0].startswith(b"CONNECT apiserver.kuberay.invalid:6443 HTTP/1.1\r\n")


def tls_files(
    tmp_path: Path, *, dns: tuple[str, ...] = (), ips: tuple[str, ...] = ()
) -> tuple[str, ssl.SSLContext]:
    ca = TinyCA("http1-test-ca")
    leaf = ca.issue("server", dns=dns, ips=ips, server=True)
    (tmp_path / "ca.crt").write_bytes(ca.pair.cert_pem)
    (tmp_path / "tls.crt").write_bytes(leaf.cert_pem)
    (tmp_path / "tls.key").write_bytes(leaf.key_pem)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    return str(tmp_path / "ca.crt"), server_ctx


async def test_tls_verifies_the_server_against_the_given_ca_and_name(tmp_path: Path) -> None:
    cafile, server_ctx = tls_files(tmp_path, dns=("apiserver.cluster.local",))
    async with serving(keep_answering(b"secure"), ssl=server_ctx) as server:
        trusting = ssl.create_default_context(cafile=cafile)
        pool = http.ConnectionPool(
            f"https://127.0.0.1:{server.port}",
            ssl_context=trusting,
            server_hostname="apiserver.cluster.local",  # a kubeconfig's tls-server-name
        )
        async with await pool.request("GET", "/") as resp:
            assert await resp.read() == b"secure"
        await pool.close()
        wrong_name = http.ConnectionPool(f"https://127.0.0.1:{server.port}", ssl_context=trusting)
        with pytest.raises(http.ConnectError) as mismatch:
            await wrong_name.request("GET", "/")
        assert isinstance(mismatch.value.os_error, ssl.SSLCertVerificationError)
        untrusting = http.ConnectionPool(
            f"https://127.0.0.1:{server.port}",
            ssl_context=ssl.create_default_context(),
            server_hostname="apiserver.cluster.local",
        )
        with pytest.raises(http.ConnectError) as unknown_ca:
            await untrusting.request("GET", "/")
        assert isinstance(unknown_ca.value.os_error, ssl.SSLCertVerificationError)


async def test_a_connection_unused_for_the_idle_timeout_is_closed() -> None:
    async with serving(keep_answering(b"ok")) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}", idle_timeout=0.2)
        first, second = await asyncio.gather(pool.request("GET", "/a"), pool.request("GET", "/b"))
        for resp in (first, second):
            async with resp:
                await resp.read()
        assert pool.idle == 2 and server.connections == 2
        await asyncio.sleep(0.5)
        assert pool.idle == 0
        async with await pool.request("GET", "/c") as resp:
            assert await resp.read() == b"ok"
        await pool.close()
    assert server.connections == 3


async def test_an_http_1_0_answer_closes_its_connection_unless_kept_alive() -> None:
    async with serving(keep_answering(b"old")) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/") as resp:
            assert await resp.read() == b"old"
        assert pool.idle == 1  # HTTP/1.1: kept
        await pool.close()

    def old_server(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while True:
                await server.read_head(reader)
                writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nold")
                await writer.drain()

        return run

    async with serving(old_server) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/") as resp:
            assert await resp.read() == b"old"
        assert pool.idle == 0  # HTTP/1.0 without keep-alive: not reused
        await pool.close()
