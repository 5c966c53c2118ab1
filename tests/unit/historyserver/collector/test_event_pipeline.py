"""Events from POST to objects: filing, rotation, compression, backpressure, crash recovery."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.collector.event_collector import MAX_BODY, EventCollector
from kuberay.historyserver.collector.event_files import EventFiles
from kuberay.historyserver.collector.event_upload import EventUploader
from kuberay.historyserver.layout import EVENT_FILE_RE, ClusterRef, Layout
from tests.helpers import eventually
from tests.unit.historyserver.fixtures import camel_bodies, snake_as_camel, snake_bodies
from tests.unit.historyserver.memstore import MemoryStore

NODE = "72671b9b9704e37837a0c1dbe67f5b48f92ed718c77faf03ce819bf3"
SESSION = "session_2026-12-04_21-06-04_046894_18728"
PREFIX = f"cluster-history/raycluster/default/raycluster-hs/{SESSION}/{NODE}"


class Clock:
    """Wall and monotonic time the test moves by hand."""

    def __init__(self) -> None:
        self.ns = 1_764_882_373_000_000_000
        self.mono = 1000.0

    def wall(self) -> int:
        self.ns += 1
        return self.ns

    def monotonic(self) -> float:
        return self.mono


def make(
    tmp_path: Path,
    store: MemoryStore,
    clock: Clock,
    *,
    compression: bool = False,
    max_disk: int = 200 << 20,
    max_file: int = 100 << 20,
) -> EventCollector:
    files = EventFiles(
        tmp_path / "event-data",
        "raycluster-hs_default",
        node_id=NODE,
        max_file_size=max_file,
        rotation_interval=300.0,
        max_disk=max_disk,
        wall_ns=clock.wall,
        monotonic=clock.monotonic,
    )
    layout = Layout(ClusterRef("default", "raycluster-hs"))
    uploader = EventUploader(store, layout, files, compression=compression, retry_backoff=0.01)
    return EventCollector(files, uploader, flush_interval=0)


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[EventCollector], Any]]:
    clients: list[TestClient[Any, Any]] = []

    async def start(ec: EventCollector) -> TestClient[Any, Any]:
        app = web.Application(client_max_size=MAX_BODY)
        ec.routes(app)
        client: TestClient[Any, Any] = TestClient(TestServer(app, host="127.0.0.1"))
        await client.start_server()
        clients.append(client)
        return client

    yield start
    for c in clients:
        await c.close()


def canon(events: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(e, sort_keys=True) for e in events)


def lines(store: MemoryStore, key: str) -> list[dict[str, Any]]:
    body = store.objects[key]
    if key.endswith(".gz"):
        body = gzip.decompress(body)
    return [json.loads(line) for line in body.splitlines()]


async def post_all(client: TestClient[Any, Any], bodies: list[list[dict[str, Any]]]) -> None:
    for body in bodies:
        resp = await client.post("/v1/events", data=json.dumps(body))
        assert resp.status == 200, await resp.text()


async def test_recorded_events_are_filed_by_node_and_job(tmp_path: Path, serve: Any) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock)
    ec.start()
    client = await serve(ec)
    bodies = camel_bodies()
    await post_all(client, bodies)
    await ec.drain()

    keys = sorted(store.objects)
    dirs = sorted(k.rsplit("/", 1)[0] for k in keys)
    assert dirs == [f"{PREFIX}/job_events/0{i}000000" for i in range(1, 6)] + [
        f"{PREFIX}/node_events"
    ]
    for key in keys:
        name = key.rsplit("/", 1)[1]
        assert EVENT_FILE_RE.search(name), name
        assert name.startswith(f"{NODE}-2025-12-04-21-") or name.startswith(f"{NODE}-2025-12-04-")
    node_events = lines(store, next(k for k in keys if "/node_events/" in k))
    assert {e["eventType"] for e in node_events} >= {
        "NODE_DEFINITION_EVENT",
        "ACTOR_LIFECYCLE_EVENT",
    }
    stored = [e for k in keys for e in lines(store, k)]
    sent = [e for b in bodies for e in b]
    assert canon(stored) == canon(sent)
    assert not list((tmp_path / "event-data").rglob("*.jsonl*"))


async def test_snake_case_is_stored_as_camel_case(tmp_path: Path, serve: Any) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock)
    ec.start()
    client = await serve(ec)
    await post_all(client, snake_bodies())
    await ec.drain()
    stored = [e for k in sorted(store.objects) for e in lines(store, k)]
    expected = [e for b in snake_as_camel() for e in b]
    assert canon(stored) == canon(expected)


async def test_bad_batch_answers_400_and_writes_nothing(tmp_path: Path, serve: Any) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock)
    ec.start()
    client = await serve(ec)
    good = camel_bodies()[0][0]
    bad = dict(good, sessionName="../../etc")
    resp = await client.post("/v1/events", data=json.dumps([good, bad]))
    assert resp.status == 400
    assert "invalid sessionName" in await resp.text()
    resp = await client.post("/v1/events", data=b"not json")
    assert resp.status == 400
    await ec.drain()
    assert store.objects == {}


async def test_a_1000_event_batch_over_1_mib_is_accepted(tmp_path: Path, serve: Any) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock)
    ec.start()
    client = await serve(ec)
    template = next(
        e for b in camel_bodies() for e in b if e["eventType"] == "TASK_DEFINITION_EVENT"
    )
    batch = [dict(template, message="x" * 1500) for _ in range(1000)]
    data = json.dumps(batch)
    assert len(data) > 1 << 20
    resp = await client.post("/v1/events", data=data)
    assert resp.status == 200
    await ec.drain()
    assert sum(len(lines(store, k)) for k in store.objects) == 1000


async def test_disk_pressure_and_draining_answer_503_with_retry_after(
    tmp_path: Path, serve: Any
) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock, max_disk=10_000)
    ec.start()
    client = await serve(ec)
    body = camel_bodies()[0]
    # 80 % of 10,000 bytes: fill past it (nothing is uploaded before rotation)
    while not ec.files.under_disk_pressure():
        assert (await client.post("/v1/events", data=json.dumps(body))).status == 200
    resp = await client.post("/v1/events", data=json.dumps(body))
    assert resp.status == 503
    assert resp.headers["Retry-After"] == "10"

    await ec.drain()
    resp = await client.post("/v1/events", data=json.dumps(body))
    assert resp.status == 503
    assert resp.headers["Retry-After"] == "5"


async def test_rotation_by_age_and_size_and_empty_files_dropped(tmp_path: Path) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock, max_file=5_000)
    files = ec.files
    event = camel_bodies()[0][0]
    files.write([(SESSION, "node_events", event)])
    assert files.rotate_due() == []
    clock.mono += 300
    (rotated,) = files.rotate_due()
    assert rotated.path.exists()
    # size: a file over max_file rotates at the next check
    files.write([(SESSION, "node_events", event)] * 30)
    assert len(files.rotate_due()) == 1
    # an opened but empty file is dropped, not uploaded
    files._open("node_events", SESSION)
    assert files.rotate_all() == []
    assert len(list((files.root / SESSION / "node_events").glob("*.jsonl"))) == 2


async def test_session_and_node_changes_rotate(tmp_path: Path) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock)
    ec.start()
    event = camel_bodies()[0][0]
    ec.uploader.submit(ec.files.write([(SESSION, "node_events", event)]))
    ec.set_node_id("abcd")
    ec.uploader.submit(ec.files.write([(SESSION, "node_events", event)]))
    ec.uploader.submit(ec.files.write([("session_2", "node_events", event)]))
    await ec.drain()
    dirs = sorted(k.rsplit("/", 2)[0] for k in store.objects)
    base = "cluster-history/raycluster/default/raycluster-hs"
    assert dirs == sorted(
        [f"{base}/{SESSION}/{NODE}", f"{base}/{SESSION}/abcd", f"{base}/session_2/abcd"]
    )


async def test_compressed_upload_uses_gz_names(tmp_path: Path, serve: Any) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock, compression=True)
    ec.start()
    client = await serve(ec)
    await post_all(client, camel_bodies()[:3])
    await ec.drain()
    assert store.objects and all(k.endswith(".jsonl.gz") for k in store.objects)
    assert sum(len(lines(store, k)) for k in store.objects) == sum(map(len, camel_bodies()[:3]))
    assert not list((tmp_path / "event-data").rglob("*.gz*"))


async def test_failed_uploads_are_retried(tmp_path: Path) -> None:
    store, clock = MemoryStore(), Clock()
    store.fail_puts = 2
    ec = make(tmp_path, store, clock)
    ec.start()
    ec.uploader.submit(ec.files.write([(SESSION, "node_events", camel_bodies()[0][0])]))
    ec.uploader.submit(ec.files.rotate_all())
    await eventually(lambda: len(store.objects) == 1, timeout=10)
    await ec.drain()
    assert len(store.objects) == 1 and ec.uploader.failed == 2


async def test_live_flush_puts_growing_files_at_their_final_key(tmp_path: Path) -> None:
    store, clock = MemoryStore(), Clock()
    ec = make(tmp_path, store, clock, compression=True)
    ec.start()
    body = camel_bodies()[0]
    ec.files.write([(SESSION, "node_events", e) for e in body])
    clock.mono += 10
    assert ec.uploader.flush_live(10.0) == 1
    await eventually(lambda: len(store.objects) == 1, timeout=10)
    (key,) = store.objects
    assert len(lines(store, key)) == len(body)
    ec.files.write([(SESSION, "node_events", e) for e in body])
    assert ec.uploader.flush_live(10.0) == 0  # too soon
    await ec.drain()
    assert list(store.objects) == [key]
    assert len(lines(store, key)) == 2 * len(body)


async def test_crash_leftovers_are_uploaded_once_at_restart(tmp_path: Path) -> None:
    """A crash leaves an active .jsonl, a rotated .jsonl, a .jsonl with its .jsonl.gz and a
    half-written .gz.tmp: the restart uploads each event file exactly once, at the key a
    clean run would have used, and the live-flushed partial object is overwritten."""
    store, clock = MemoryStore(), Clock()
    first = make(tmp_path, store, clock)
    first.start()
    bodies = camel_bodies()
    first.files.write([(SESSION, "node_events", e) for e in bodies[0]])
    clock.mono += 10
    first.uploader.flush_live(10.0)
    await eventually(lambda: len(store.objects) == 1, timeout=10)
    partial_key = next(iter(store.objects))
    first.files.write([(SESSION, "node_events", e) for e in bodies[1]])
    job_rotated = first.files.write([(SESSION, "job_events/01000000", e) for e in bodies[2]])
    assert job_rotated == []
    (rotated,) = [r for r in first.files.rotate_all() if "job_events" in r.category]
    # gzipped copy next to its source, as a crash between rename and cleanup leaves them
    gz = rotated.path.with_name(rotated.path.name + ".gz")
    gz.write_bytes(gzip.compress(rotated.path.read_bytes()))
    (rotated.path.parent / "junk.jsonl.gz.tmp").write_bytes(b"half")
    for task in first._tasks:
        task.cancel()  # the process dies: nothing drained

    expected_partial = canon(bodies[0] + bodies[1])
    restarted = make(tmp_path, store, clock)
    restarted.start()
    await restarted.drain()
    keys = sorted(store.objects)
    assert len(keys) == 2, keys
    assert partial_key in keys
    assert canon(lines(store, partial_key)) == expected_partial
    (job_key,) = [k for k in keys if "/job_events/01000000/" in k]
    assert job_key.endswith(".jsonl.gz")
    assert len(lines(store, job_key)) == len(bodies[2])
    assert not [p for p in (tmp_path / "event-data").rglob("*") if p.is_file()]

    # a second restart finds nothing left and puts nothing
    puts = len(store.puts)
    again = make(tmp_path, store, clock)
    again.start()
    await again.drain()
    assert len(store.puts) == puts
