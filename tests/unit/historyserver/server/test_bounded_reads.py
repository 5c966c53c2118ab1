"""The pieces behind the memory bounds: ``decompress``'s limit, the stored-size skip,
``tail_chunks``' cap, the streamed ANSI filter and a store failing half-way through a
streamed log."""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.layout import Layout
from kuberay.historyserver.server import event_files
from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.event_files import (
    DecodeStats,
    EventFile,
    EventFileTooLarge,
    decompress,
    find_event_files,
    read_session_events,
)
from kuberay.historyserver.server.legacy_events import parse_lines, parse_stream, read_log_events
from kuberay.historyserver.server.log_reads import read_tail, tail_chunks
from kuberay.historyserver.server.log_stream import strip_ansi_stream
from kuberay.historyserver.server.logs import strip_ansi, tail_lines
from kuberay.historyserver.storage.errors import StorageError
from tests.unit.historyserver.memstore import MemoryStore
from tests.unit.historyserver.server.stores import CLUSTER, NODE, SESSION, collector_store

Client = TestClient[Any, Any]


def test_decompress_matches_gzip_within_the_limit() -> None:
    a, b = b'{"a": 1}\n' * 50_000, b'{"b": 2}\n' * 3
    members = gzip.compress(a) + gzip.compress(b)
    assert decompress(members) == gzip.decompress(members) == a + b
    assert decompress(members + b"\0\0\0\0") == a + b  # padding after the last member
    assert decompress(b"plain\n") == b"plain\n"
    truncated = gzip.compress(a)[:-100]
    got = decompress(truncated)
    assert got and a.startswith(got)  # what could be decoded
    corrupt = gzip.compress(a) + gzip.compress(b)[:10] + b"\xff" * 40
    assert decompress(corrupt) == a  # the member that decodes, not the corrupt one
    assert decompress(members, limit=len(a + b)) == a + b


@pytest.mark.parametrize("data", [gzip.compress(bytes(5000)), bytes(5000)])
def test_decompress_stops_past_the_limit(data: bytes) -> None:
    with pytest.raises(EventFileTooLarge):
        decompress(data, limit=4999)


class CountingStore(MemoryStore):
    """Records every GET."""

    def __init__(self) -> None:
        super().__init__()
        self.gets: list[tuple[str, tuple[int, int] | None]] = []

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        self.gets.append((key, byte_range))
        return await super().get(key, byte_range=byte_range)


async def test_an_event_file_stored_over_the_limit_is_not_read() -> None:
    store = CountingStore()
    small = b'{"eventType": "X"}\n'
    store.objects = {"n/big": b'{"eventType": "Y"}\n' * 100, "n/small": small}
    files = [EventFile("n/big", 1900, "n"), EventFile("n/small", len(small), "n")]
    stats = DecodeStats()
    events = await read_session_events(store, files, stats, limit=1000)
    assert events == [{"eventType": "X"}]
    assert stats.too_large == 1 and stats.files == 1
    assert store.gets == [("n/small", (0, 1001))]  # the big one never fetched
    # grown since it was listed: the bounded read sees it is over the limit
    files = [EventFile("n/big", 10, "n")]
    assert await read_session_events(store, files, stats, limit=1000) == []
    assert stats.too_large == 2


async def test_tail_stops_at_the_cap() -> None:
    store = CountingStore()
    body = b"x" * 10_000 + b"\n" + b"y" * 300 + b"\n"
    store.objects["k"] = body
    tail = await tail_chunks(store, "k", 5, 0, len(body), window=64, cap=1000)
    assert tail.truncated and b"".join(tail.chunks) == body[-1000:]
    assert sum(r[1] - r[0] for _, r in store.gets if r) == 1000  # never read past the cap
    # the lines fit: equal to tail_lines over the whole, not truncated
    tail = await tail_chunks(store, "k", 1, 0, len(body), window=64, cap=1000)
    assert not tail.truncated and b"".join(tail.chunks) == tail_lines(body, 1)
    # the cap reaches the start of the slice: everything, not truncated
    tail = await tail_chunks(store, "k", 5, 9_500, len(body), window=64, cap=1000)
    assert not tail.truncated and b"".join(tail.chunks) == body[9_500:]
    assert await read_tail(store, "k", 2, 0, len(body), cap=1 << 20) == tail_lines(body, 2)


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 10_000])
async def test_strip_ansi_stream_equals_strip_ansi(size: int) -> None:
    data = b"\x1b[31mred\x1b[0m plain \x1b[1;32;40mbold\x1b[K\x1bX end \x1b[12"
    got = b"".join([c async for c in strip_ansi_stream(_chunks(data, size))])
    assert got == strip_ansi(data)


class FailingStore(MemoryStore):
    """``open`` of ``fail_key`` gives one chunk, then fails."""

    fail_key = ""

    async def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        first = True
        async for chunk in super().open(key, chunk_size=chunk_size):
            if not first and key == self.fail_key:
                raise StorageError("injected failure", key=key)
            first = False
            yield chunk


async def test_a_store_failing_half_way_closes_the_connection(tmp_path: Path) -> None:
    memory = await collector_store(tmp_path)
    store = FailingStore()
    store.objects = memory.objects
    key = Layout(CLUSTER).log_key(SESSION, NODE, "big.log")
    store.objects[key] = b"z" * (3 << 20)
    store.fail_key = key
    async with TestClient(TestServer(make_app(store), host="127.0.0.1")) as c:
        assert (await c.get(f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}")).ok
        url = f"/api/v0/logs/file?node_id={NODE}&filename=big.log&lines=-1"
        r = await c.get(url)
        assert r.status == 200 and r.headers["Content-Length"] == str(1 + (3 << 20))
        with pytest.raises(aiohttp.ClientPayloadError):
            await r.read()
        r = await c.get(f"/api/v0/logs/file?node_id={NODE}&filename=missing.log&lines=-1")
        assert r.status == 404
        r = await c.get(f"/api/v0/logs/file?node_id={NODE}&filename=raylet.out&lines=-1")
        assert await r.read() == b"1a\nb\nc\nd\n"


async def test_a_64_mib_one_line_legacy_event_file_is_never_held_whole() -> None:
    """``logs/events/event_*.log``: a 64 MiB line (a Ray job's) is skipped while streaming;
    the normal lines around it, split over chunk boundaries, are still parsed."""
    layout = Layout(CLUSTER)
    prefix = f"{layout.node_prefix(SESSION, NODE)}/logs/events/"
    ok = b'{"event_id": "a", "message": "first", "custom_fields": {"job_id": "01000000"}}'
    last = b'{"event_id": "b", "message": "after", "custom_fields": {}}'
    store = MemoryStore()
    store.objects[prefix + "event_GCS.log"] = ok + b"\n" + b"x" * (64 << 20) + b"\r\n" + last
    store.objects[prefix + "event_RAYLET.log"] = b"\n".join([ok.replace(b'"a"', b'"c"')] * 3)
    tracemalloc.start()
    try:
        events = await read_log_events(store, layout, SESSION, (NODE,))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"peak {peak >> 20} MiB"
    assert [e["message"] for e in events["01000000"]] == ["first", "first"]  # a, c
    assert [e["message"] for e in events["global"]] == ["after"]


async def test_streamed_legacy_lines_match_the_whole_file_parse() -> None:
    """Chunk boundaries anywhere (even inside ``\\r\\n``) give what ``parse_lines`` gives on
    the whole file, over-long lines included."""
    lines = [b'{"event_id": "%d", "message": "m%d"}' % (i, i) for i in range(40)]
    data = b"\n".join(lines[:20]) + b"\r\n" + b"y" * 300 + b"\n[1]\r" + b"\n".join(lines[20:])

    async def pieces(size: int) -> AsyncIterator[bytes]:
        for i in range(0, len(data), size):
            yield data[i : i + size]

    whole: dict[str, Any] = {}
    want = parse_lines(data, whole, max_line=200)
    for size in (1, 2, 7, 64, 250, 1000):
        into: dict[str, Any] = {}
        assert await parse_stream(pieces(size), into, max_line=200) == want == 2, size
        assert into == whole, size


class InFlightStore(MemoryStore):
    """Records the most bytes being fetched at once (each GET takes a moment)."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = self.max_in_flight = 0

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        data = await super().get(key, byte_range=byte_range)
        self.in_flight += len(data)
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.005)
        finally:
            self.in_flight -= len(data)
        return data


async def test_event_reads_share_a_byte_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a budget smaller than two files, the reads run one at a time and every event
    still loads; with the default budget they overlap."""
    memory = await collector_store(tmp_path)
    store = InFlightStore()
    store.objects = memory.objects
    files = await find_event_files(store, Layout(CLUSTER), SESSION)
    assert len(files) > 2
    everything = await read_session_events(store, files)
    assert store.max_in_flight > max(f.size for f in files)  # overlapping without a budget
    store.max_in_flight = 0
    monkeypatch.setattr(event_files, "EVENT_BYTES_IN_FLIGHT", 2 * min(f.size for f in files) - 1)
    stats = DecodeStats()
    assert await read_session_events(store, files, stats) == everything
    assert store.max_in_flight == max(f.size for f in files)  # one file at a time
    assert stats.files == len(files) and stats.too_large == 0
    # same-size files: a budget of one and a half files lets one through at a time
    store.objects = {f"n/{i}": b'{"eventType": "X"}\n' * 50 for i in range(6)}
    same = [EventFile(f"n/{i}", 950, "n") for i in range(6)]
    store.max_in_flight = 0
    events = await read_session_events(store, same, budget=1400)
    assert len(events) == 6 * 50 and store.max_in_flight == 950
