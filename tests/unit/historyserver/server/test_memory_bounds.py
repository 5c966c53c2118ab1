"""What Ray jobs write is untrusted: one 64 MiB log line or a gzip bomb among the event
files must not take the server's memory with it.

* A 64 MiB log with no newline, on the local backend: a ``lines=1000`` tail answers the last
  ``TAIL_WINDOW_CAP`` bytes (marked ``X-Log-Truncated``), and the whole log (framed and as a
  download) streams out byte-identical; tracemalloc's peak while serving stays under 24 MiB.
* A gzip bomb (1 GiB of zeros in about 1 MiB) among a session's event files is skipped,
  logged and counted, the session's other data is served, and loading peaks far below it.
"""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.layout import Layout
from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.log_reads import TAIL_WINDOW_CAP
from kuberay.historyserver.server.metrics import REGISTRY
from kuberay.historyserver.storage.local import LocalStore
from tests.unit.historyserver.server.stores import CLUSTER, NODE, SESSION, collector_store

Client = TestClient[Any, Any]
MIB = 1 << 20
LOG_SIZE = 64 * MIB
#: what tracemalloc may see allocated at once while one answer is served
PEAK_BOUND = 24 * MIB
ENTER = f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}"
LOG_URL = f"/api/v0/logs/file?node_id={NODE}&filename=one-line.log"


def block(i: int) -> bytes:
    """The ``i``-th MiB of the one-line log: its number, repeated (no newline)."""
    return (b"%08d" % i) * (MIB // 8)


def expected(offset: int, n: int) -> bytes:
    """Bytes ``[offset, offset + n)`` of the one-line log, built from its blocks."""
    out = bytearray()
    while n > 0:
        i, at = divmod(offset, MIB)
        piece = block(i)[at : at + n]
        out += piece
        offset += len(piece)
        n -= len(piece)
    return bytes(out)


async def blocks() -> AsyncIterator[bytes]:
    """The one-line log, a MiB at a time."""
    for i in range(LOG_SIZE // MIB):
        yield block(i)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    """The fixture session on the local backend, plus ``one-line.log`` (64 MiB, no
    newline), entered."""
    memory = await collector_store(tmp_path)
    store = LocalStore(tmp_path / "store")
    for key, body in memory.objects.items():
        await store.put(key, body)
    await store.put(Layout(CLUSTER).log_key(SESSION, NODE, "one-line.log"), blocks())
    c: Client = TestClient(TestServer(make_app(store), host="127.0.0.1"))
    await c.start_server()
    assert (await c.get(ENTER)).status == 200
    yield c
    await c.close()
    await store.close()


async def _serve(client: Client, url: str, head: bytes, first: int, size: int) -> Any:
    """GET ``url`` under tracemalloc, checking the body as it streams in: ``head`` then the
    log's bytes ``[first, first + size)``. Returns the response and the peak."""
    tracemalloc.start()
    try:
        response = await client.get(url)
        assert response.status in (200, 206), await response.text()
        got = 0
        pending = head
        async for chunk in response.content.iter_chunked(1 << 16):
            if pending:
                assert chunk[: len(pending)] == pending[: len(chunk)]
                cut = min(len(pending), len(chunk))
                chunk, pending = chunk[cut:], pending[cut:]
            assert chunk == expected(first + got, len(chunk)), f"differs at {first + got}"
            got += len(chunk)
        assert not pending and got == size
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return response, peak


async def test_tail_of_a_one_line_log_is_its_last_window(client: Client) -> None:
    response, peak = await _serve(
        client, LOG_URL + "&lines=1000", b"1", LOG_SIZE - TAIL_WINDOW_CAP, TAIL_WINDOW_CAP
    )
    assert response.headers["X-Log-Truncated"] == "true"
    assert peak < PEAK_BOUND, f"tracemalloc peak {peak / MIB:.1f} MiB"


@pytest.mark.parametrize(
    ("query", "head"),
    [("&lines=-1", b"1"), ("&lines=-1&download_filename=one-line.log", b"")],
)
async def test_whole_one_line_log_streams(client: Client, query: str, head: bytes) -> None:
    response, peak = await _serve(client, LOG_URL + query, head, 0, LOG_SIZE)
    assert response.headers["Content-Length"] == str(len(head) + LOG_SIZE)
    assert "X-Log-Truncated" not in response.headers
    assert peak < PEAK_BOUND, f"tracemalloc peak {peak / MIB:.1f} MiB"


async def test_download_range_of_a_one_line_log(client: Client) -> None:
    url = LOG_URL + "&lines=-1&download_filename=x.log"
    r = await client.get(url, headers={"Range": f"bytes={5 * MIB - 3}-{5 * MIB + 4}"})
    assert r.status == 206 and await r.read() == expected(5 * MIB - 3, 8)
    assert r.headers["Content-Range"] == f"bytes {5 * MIB - 3}-{5 * MIB + 4}/{LOG_SIZE}"


def gzip_bomb(total: int = 1 << 30, member: int = 16 * MIB) -> bytes:
    """``total`` zero bytes as gzip members of ``member`` bytes each (about 1 MiB a GiB)."""
    one = gzip.compress(bytes(member), compresslevel=9)
    return one * (total // member)


def skipped() -> float:
    """The ``too_large`` event-file counter."""
    value = REGISTRY.get_sample_value(
        "kuberay_history_server_event_files_skipped_total", {"reason": "too_large"}
    )
    return value or 0.0


async def test_gzip_bomb_event_file_is_skipped_and_counted(tmp_path: Path) -> None:
    store = await collector_store(tmp_path, gz=True)
    bomb = gzip_bomb()
    assert len(bomb) < 2 * MIB
    name = f"{NODE}-2026-12-04-21-1.jsonl.gz"
    store.objects[Layout(CLUSTER).node_events_key(SESSION, NODE, name)] = bomb
    before = skipped()
    async with TestClient(TestServer(make_app(store), host="127.0.0.1")) as c:
        tracemalloc.start()
        try:
            assert (await c.get(ENTER)).status == 200
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert skipped() == before + 1
        assert peak < 256 * MIB, f"tracemalloc peak {peak / MIB:.0f} MiB"
        tasks = await (await c.get("/api/v0/tasks?detail=1&limit=100")).json()
        assert tasks["data"]["result"]["result"], "the session's tasks are still served"
        nodes = await (await c.get("/nodes?view=summary")).json()
        assert nodes["result"] is True
        text = await (await c.get("/metrics")).text()
        assert 'kuberay_history_server_event_files_skipped_total{reason="too_large"}' in text
