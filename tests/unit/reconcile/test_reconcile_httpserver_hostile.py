"""The metrics/probe server under hostile input, over real sockets on 127.0.0.1: bodies it
must not read, heads h11 refuses, pipelined and smuggled requests, and a connection flood.

The timeouts here are deadlines for an answer that a correct server gives at once, not
speed targets.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import pytest

from kuberay.reconcile import httpserver
from kuberay.reconcile.httpserver import ProbeChecks, Server, probes_app

#: What the peer waits for an answer the server owes at once.
ANSWER_DEADLINE = 5.0
MIB = 1024 * 1024


@pytest.fixture
async def port() -> AsyncIterator[int]:
    """A probe server with one passing healthz check."""
    healthz = ProbeChecks()
    healthz.add("ping", lambda: None)
    server = Server(probes_app(healthz, ProbeChecks()), "127.0.0.1", 0)
    await server.start()
    try:
        yield server.port
    finally:
        await server.stop()


async def _read_all(reader: asyncio.StreamReader) -> bytes:
    """Everything until EOF or a reset (what arrived before the reset is kept); a peer
    that neither answers nor closes within ANSWER_DEADLINE fails the test."""
    got = b""
    with contextlib.suppress(ConnectionError):
        async with asyncio.timeout(ANSWER_DEADLINE):
            while chunk := await reader.read(65536):
                got += chunk
    return got


async def exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` on a new connection; all the server sent back until it closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await _read_all(reader)
    finally:
        writer.close()


def _statuses(raw: bytes) -> list[int]:
    """The status codes of the responses in ``raw``, in order."""
    return [int(part[:3]) for part in raw.split(b"HTTP/1.1 ")[1:]]


def _push_announced_body(port: int, announced: int, limit: int) -> tuple[bytes, int, bool]:
    """A GET announcing ``announced`` body bytes: read the answer first, then push up to
    ``limit`` body bytes. The answer, the bytes the kernel took, and whether the push was
    cut short by a closed connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_DEADLINE) as sock:
        head = f"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: {announced}\r\n\r\n"
        sock.sendall(head.encode() + b"x" * 4096)
        answer = b""
        with contextlib.suppress(TimeoutError, ConnectionError):
            while chunk := sock.recv(65536):
                answer += chunk
        sent, chunk = 0, b"x" * 65536
        try:
            while sent < limit:
                sent += sock.send(chunk)
        except (ConnectionError, TimeoutError):
            return answer, sent, True
        return answer, sent, False


async def test_a_get_announcing_300_mib_is_answered_400_and_closed_unread(port: int) -> None:
    # The old parser waited (75 s) for all 300 MiB, buffering them: no answer in time.
    answer, sent, cut_short = await asyncio.to_thread(
        _push_announced_body, port, 300 * MIB, 64 * MIB
    )
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert b"connection: close" in answer.lower()
    # The server closed with the body unread: the peer's push fails long before 64 MiB
    # (what it got in is what the two kernels' socket buffers hold).
    assert cut_short
    assert sent < 32 * MIB


@pytest.mark.parametrize("method", ["GET", "HEAD"])
async def test_a_small_body_on_get_or_head_is_refused(port: int, method: str) -> None:
    raw = await exchange(
        port, f"{method} /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello".encode()
    )
    assert _statuses(raw) == [400]


async def test_a_chunked_get_is_refused(port: int) -> None:
    raw = await exchange(
        port,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nhello\r\n0\r\n\r\n",
    )
    assert _statuses(raw) == [400]


async def test_a_post_with_a_body_gets_405_and_the_body_is_not_read(port: int) -> None:
    raw = await exchange(
        port, b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc"
    )
    assert _statuses(raw) == [405]
    assert b"\r\nallow: get, head\r\n" in raw.lower()


@pytest.mark.parametrize(
    "length",
    [
        b"-1",
        b"0x10",
        b"1_0",
        b"+5",
        b"\xb2",  # Latin-1 superscript two: str.isdigit() says yes, int() says no
        b"1\xb9",  # "1¹"
        b"5\r\nContent-Length: 6",  # conflicting values
        b"99999999999999999999999",
    ],
)
async def test_a_bad_content_length_is_refused(port: int, length: bytes) -> None:
    raw = await exchange(
        port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: %b\r\n\r\n" % length
    )
    assert _statuses(raw) == [400]


@pytest.mark.parametrize(
    "head",
    [
        b"GET /healthz\x00 HTTP/1.1\r\nHost: x\r\n\r\n",  # NUL in the target
        b"GET /healthz\rX HTTP/1.1\r\nHost: x\r\n\r\n",  # bare CR in the request line
        b"GET /healthz\xff HTTP/1.1\r\nHost: x\r\n\r\n",  # a byte past ASCII in the target
        b"GET /healthz HTTP/1.1 \r\nHost: x\r\n\r\n",  # a fourth field
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n",  # NUL in a value
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\nhello",  # name
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\nContent-Length: 5\r\n\r\nhello",  # bare LF
        b"GET /healthz HTTP/1.1\r\n\r\n",  # HTTP/1.1 without Host (RFC 9112 3.2: 400)
    ],
)
async def test_control_characters_and_smuggled_headers_are_refused(port: int, head: bytes) -> None:
    raw = await exchange(port, head)
    assert _statuses(raw) == [400]


async def test_a_request_hidden_in_a_get_body_is_never_answered(port: int) -> None:
    # One packet: a GET whose "body" is another request. Answered 400 and closed; the
    # hidden /readyz is never served (the old parser read the body and answered 200).
    hidden = b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"
    raw = await exchange(
        port,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%b%b"
        % (len(hidden), hidden, hidden),
    )
    assert _statuses(raw) == [400]


async def test_pipelined_requests_then_garbage_in_one_packet(port: int) -> None:
    raw = await exchange(
        port,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GARBAGE\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    # In order, each answered; the garbage gets 400 and the connection ends there.
    assert _statuses(raw) == [200, 200, 404, 400]
    first, head_answer = raw.split(b"HTTP/1.1 ")[1:3]
    assert first.endswith(b"\r\n\r\nok")
    # HEAD: the GET's length, no body (the next response follows the blank line).
    assert b"content-length: 2\r\n" in head_answer.lower()
    assert head_answer.endswith(b"\r\n\r\n")


async def test_keep_alive_serves_many_requests_on_one_connection(port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for path in (b"/healthz", b"/healthz/ping", b"/livez", b"/healthz"):
            writer.write(b"GET %b HTTP/1.1\r\nHost: x\r\n\r\n" % path)
            async with asyncio.timeout(ANSWER_DEADLINE):
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
            assert head.startswith(b"HTTP/1.1 404 " if path == b"/livez" else b"HTTP/1.1 200 ")
            assert b"connection: close" not in head.lower()
    finally:
        writer.close()


async def _answered(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
    """One GET /healthz on an open connection; the answer's first line."""
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    async with asyncio.timeout(ANSWER_DEADLINE):
        head = await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(2)
    return head.split(b"\r\n")[0]


async def test_idle_kept_alive_connections_cannot_keep_a_probe_out(port: int) -> None:
    """A peer holding MAX_CONNECTIONS kept-alive connections idle: a new probe takes the
    place of the longest-idle one and is answered."""
    cap = getattr(httpserver, "MAX_CONNECTIONS", 64)
    held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(cap)]
    try:
        for reader, writer in held:
            assert await _answered(reader, writer) == b"HTTP/1.1 200 OK"
        raw = await exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert _statuses(raw) == [200]
        async with asyncio.timeout(ANSWER_DEADLINE):
            assert await held[0][0].read() == b""  # the oldest idle one was closed
    finally:
        for _, writer in held:
            writer.close()


async def test_connections_beyond_the_cap_are_closed_while_the_busy_ones_still_work(
    port: int,
) -> None:
    """MAX_CONNECTIONS connections each inside a request's head: one more is closed at once,
    unread and unanswered; the busy ones are served when their heads complete."""
    cap = getattr(httpserver, "MAX_CONNECTIONS", 64)
    held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(cap)]
    try:
        for _, writer in held:
            writer.write(b"GET /healthz HTTP/1.1\r\n")
            await writer.drain()
        await asyncio.sleep(0.2)  # the server has read the partial heads
        assert await exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") == b""
        for reader, writer in held[:3]:
            writer.write(b"Host: x\r\n\r\n")
            async with asyncio.timeout(ANSWER_DEADLINE):
                head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 OK")
    finally:
        for _, writer in held:
            writer.close()
