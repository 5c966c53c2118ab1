"""What a hostile request field or a hostile server cannot make the HTTP/1.1 client do.

Request side: a method, request target or header value holding CR, LF, NUL, a space or
another control character is refused with :class:`InvalidRequest` naming the field, before
a connection is even made (so no smuggled second request ever reaches a server).
Answer side: informational answers (103) are read past and never taken for the answer; an
unrequested 101 is a protocol error; bytes beyond an answer keep its connection out of the
pool; a PUT or DELETE written on a reused connection is never sent twice; Content-Length and
chunk sizes Go would refuse are refused; ``read(limit=...)`` caps an answer on the wire and
after gzip, without holding more than the cap in memory.
"""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
from collections.abc import Callable

import pytest

from kuberay import http
from tests.unit.http.scripted import Script, Server, answer, keep_answering, sends, serving

SMUGGLED = "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api/v1/namespaces/other/configmaps/c HTTP/1.1"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/namespaces/ns/secrets/" + SMUGGLED,
        "/a\nb",
        "/a\x00b",
        "/a b",
        "/caf\u00e9",
        "/a\x7fb",
    ],
)
async def test_a_request_target_with_a_control_character_or_space_is_never_sent(path: str) -> None:
    async with serving(keep_answering(b"{}")) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        with pytest.raises(http.InvalidRequest) as refused:
            await pool.request("GET", path)
        await pool.close()
    assert server.connections == 0
    assert refused.value.field == "request target"
    assert "DELETE" not in str(refused.value)


@pytest.mark.parametrize(
    "value", ["Bearer a\r\nX-Evil: 1", "Bearer a\nb", "Bearer \x00", "a\rb", "a\x01b", "\x7f"]
)
async def test_a_header_value_with_a_control_character_is_refused_naming_the_header(
    value: str,
) -> None:
    async with serving(keep_answering(b"{}")) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        with pytest.raises(http.InvalidRequest) as refused:
            await pool.request("GET", "/x", headers=[("Authorization", value)])
        await pool.close()
    assert server.connections == 0
    assert refused.value.field == "header 'Authorization'"
    assert value not in str(refused.value)  # a credential is never echoed


@pytest.mark.parametrize("name", ["X Evil", "X:Evil", "X\r\nEvil", ""])
async def test_a_header_name_that_is_not_a_token_is_refused(name: str) -> None:
    pool = http.ConnectionPool("http://127.0.0.1:9")
    with pytest.raises(http.InvalidRequest):
        await pool.request("GET", "/x", headers=[(name, "v")])


async def test_a_method_that_is_not_a_token_is_refused() -> None:
    pool = http.ConnectionPool("http://127.0.0.1:9")
    with pytest.raises(http.InvalidRequest) as refused:
        await pool.request("GET /x HTTP/1.1\r\n\r\nDELETE", "/y")
    assert refused.value.field == "method"


async def test_a_tab_inside_a_header_value_is_allowed() -> None:
    async with serving(keep_answering(b"ok")) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/x", headers=[("X-A", "a\tb")]) as resp:
            assert await resp.read() == b"ok"
        await pool.close()
    assert b"X-A: a\tb\r\n" in server.heads[0]


def early_hints_then(final: bytes) -> Callable[[Server], Script]:
    """Answers every request with ``103 Early Hints`` and then ``final``."""

    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while True:
                await server.read_head(reader)
                writer.write(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n")
                writer.write(final)
                await writer.drain()

        return run

    return script


async def test_an_informational_answer_is_read_past_and_each_request_reads_its_own_answer() -> None:
    async with serving(early_hints_then(answer(b'{"real":true}'))) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        for path in ("/first", "/second"):
            async with await pool.request("GET", path) as resp:
                assert (resp.status, await resp.read()) == (200, b'{"real":true}')
        await pool.close()
    assert server.connections == 1  # the connection was reused, in step


async def test_a_forged_answer_behind_an_informational_one_does_not_reach_the_next_request() -> (
    None
):
    # The Ray head (user code) answers 103 then a 200, then appends a forged second answer in
    # the same write: the connection holds bytes past the answer and is never pooled.
    forged = answer(b'{"forged":true}')
    async with serving(early_hints_then(answer(b'{"one":1}') + forged)) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/one") as resp:
            assert await resp.read() == b'{"one":1}'
        async with await pool.request("GET", "/two") as resp:
            assert await resp.read() == b'{"one":1}'  # its own answer, on a new connection
        await pool.close()
    assert server.connections == 2


async def test_an_unrequested_101_is_a_protocol_error_and_the_connection_is_dropped() -> None:
    async with serving(
        sends(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", then_stall=True)
    ) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        with pytest.raises(http.ProtocolError):
            await pool.request("GET", "/x")
        assert pool.connections == 0
        await pool.close()


@pytest.mark.parametrize("length", ["-1", "0x10", "1_0", "+5", "5, 6", " "])
async def test_a_content_length_go_refuses_is_a_protocol_error(length: str) -> None:
    async with serving(
        sends(f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n\r\nhello".encode())
    ) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        with pytest.raises(http.ProtocolError):
            resp = await pool.request("GET", "/x")
            await resp.read()
        await pool.close()


@pytest.mark.parametrize("size", [b"-1", b"0x5", b"1_0", b"+5", b"z"])
async def test_a_chunk_size_go_refuses_is_a_protocol_error(size: bytes) -> None:
    body = size + b"\r\nhello\r\n0\r\n\r\n"
    async with serving(
        sends(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
    ) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        resp = await pool.request("GET", "/x")
        with pytest.raises(http.ProtocolError):
            await resp.read()
        await pool.close()


async def test_trailers_after_a_chunked_body_are_read_past() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"
    )

    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while True:
                await server.read_head(reader)
                writer.write(chunked)
                await writer.drain()

        return run

    async with serving(script) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        for _ in range(2):
            async with await pool.request("GET", "/x") as resp:
                assert await resp.read() == b"hello"
        await pool.close()
    assert server.connections == 1


def reads_then_hangs_up_on_second(server: Server) -> Script:
    """Answers the first request of each connection; reads the second whole, then hangs up."""

    async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(answer(b"first"))
        await writer.drain()
        await server.read_head(reader)

    return run


@pytest.mark.parametrize("method", ["PUT", "DELETE", "POST", "PATCH"])
async def test_a_write_that_reached_the_server_is_never_sent_twice(method: str) -> None:
    async with serving(reads_then_hangs_up_on_second) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/a") as resp:
            await resp.read()
        with pytest.raises(http.ServerDisconnected):
            await pool.request(method, "/obj", body=b"{}")
        await pool.close()
    assert [h.split(b" ")[0] for h in server.heads] == [b"GET", method.encode()]


async def test_a_put_on_a_connection_found_closed_before_writing_goes_on_a_new_one() -> None:
    def script(server: Server) -> Script:
        async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_head(reader)
            writer.write(answer(b"done"))
            await writer.drain()  # and hang up: the connection is idle and closed

        return run

    async with serving(script) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        async with await pool.request("GET", "/a") as resp:
            await resp.read()
        await asyncio.sleep(0.05)  # the close reaches the client
        async with await pool.request("PUT", "/obj", body=b"{}") as resp:
            assert await resp.read() == b"done"
        await pool.close()
    assert server.connections == 2 and [h.split(b" ")[0] for h in server.heads] == [b"GET", b"PUT"]


async def test_read_with_a_limit_stops_an_answer_over_the_cap_on_the_wire() -> None:
    body = b"x" * (2 * 1024 * 1024)
    async with serving(keep_answering(body)) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        resp = await pool.request("GET", "/big")
        with pytest.raises(http.BodyTooLarge) as over:
            await resp.read(limit=1024 * 1024)
        assert pool.connections == 0  # closed, the rest never read
        await pool.close()
    assert over.value.limit == 1024 * 1024
    assert "1048576 bytes" in str(over.value)


async def test_a_gzip_bomb_is_stopped_at_the_cap_without_expanding_in_memory() -> None:
    bomb = gzip.compress(b"\0" * (214 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 256 * 1024  # about 200 KiB on the wire
    async with serving(keep_answering(bomb, "Content-Encoding: gzip")) as server:
        pool = http.ConnectionPool(f"http://127.0.0.1:{server.port}")
        resp = await pool.request("GET", "/bomb")
        tracemalloc.start()
        try:
            with pytest.raises(http.BodyTooLarge) as over:
                await resp.read(limit=16 * 1024 * 1024)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        await pool.close()
    assert over.value.stage == "decoded"
    assert peak < 40 * 1024 * 1024  # the cap and a piece, not 214 MiB
