"""A Ray job swaps an event file (the data dir is on the shared /tmp/ray volume) between its
rotation and its upload, or while it is live: the collector never uploads what the swap
points at, never blocks on a FIFO, and drains."""

from __future__ import annotations

import asyncio
import gzip
import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kuberay.historyserver.collector.event_collector import EventCollector
from kuberay.historyserver.collector.event_files import EventFiles
from kuberay.historyserver.collector.event_upload import EventUploader
from kuberay.historyserver.layout import ClusterRef, Layout
from tests.unit.historyserver.collector.swaps import (
    SECRET,
    Swap,
    secret_file,
    to_fifo,
    to_new_file,
    to_symlink,
    unblocking,
)
from tests.unit.historyserver.fixtures import camel_bodies
from tests.unit.historyserver.memstore import MemoryStore

NODE = "72671b9b9704e37837a0c1dbe67f5b48f92ed718c77faf03ce819bf3"
SESSION = "session_2026-12-04_21-06-04_046894_18728"
TIMEOUT = 5.0


def make(tmp_path: Path, store: MemoryStore, *, compression: bool = False) -> EventCollector:
    files = EventFiles(
        tmp_path / "event-data",
        "raycluster-hs_default",
        node_id=NODE,
        max_file_size=100 << 20,
        rotation_interval=300.0,
        max_disk=200 << 20,
    )
    layout = Layout(ClusterRef("default", "raycluster-hs"))
    uploader = EventUploader(store, layout, files, compression=compression, retry_backoff=0.01)
    return EventCollector(files, uploader, flush_interval=0)


def plain(store: MemoryStore) -> bytes:
    """Every stored byte, gunzipped where gzipped."""
    return b"\n".join(
        gzip.decompress(body) if key.endswith(".gz") else body
        for key, body in store.objects.items()
    )


def refusals(captured: list[dict[str, object]]) -> list[object]:
    return [e["reason"] for e in captured if "not safe to read" in str(e["event"])]


def write_events(ec: EventCollector) -> None:
    body = camel_bodies()[0]
    ec.files.write([(SESSION, "node_events", e) for e in body])
    assert ec.files.active["node_events"].size > len(SECRET)


@pytest.mark.parametrize("compression", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize(
    ("swap", "reason"),
    [("symlink", "symlink"), ("fifo", "not a regular file"), ("replaced", "replaced since scan")],
)
async def test_rotated_event_file_swapped_before_upload_is_not_uploaded(
    tmp_path: Path, compression: bool, swap: str, reason: str
) -> None:
    """Refused: not put, not retried, left on disk; a restart's crash recovery looks at the
    data dir afresh (a link or a FIFO is never queued; a regular file that replaced ours is
    a leftover like any other)."""
    store = MemoryStore()
    ec = make(tmp_path, store, compression=compression)
    ec.start()
    write_events(ec)
    (rotated,) = ec.files.rotate_all()
    swaps: dict[str, Swap] = {
        "symlink": to_symlink(secret_file(tmp_path)),
        "fifo": to_fifo,
        "replaced": to_new_file,
    }
    swaps[swap](rotated.path)
    ec.uploader.submit([rotated])
    with unblocking(rotated.path), capture_logs() as captured:
        await asyncio.wait_for(ec.drain(), TIMEOUT)  # a FIFO does not block the drain
    assert SECRET not in plain(store)
    assert store.objects == {}  # nothing of the swapped-in file either
    assert refusals(captured) == [reason]
    assert ec.uploader.refused == 1

    restarted = make(tmp_path, store, compression=compression)
    restarted.start()
    await asyncio.wait_for(restarted.drain(), TIMEOUT)
    assert SECRET not in plain(store)
    assert plain(store) == (b"a different file\n" if swap == "replaced" else b"")


async def test_live_event_file_swapped_for_a_symlink_is_not_flushed(tmp_path: Path) -> None:
    """The active file is read while it grows (live flush) and at its rotation on drain."""
    store = MemoryStore()
    ec = make(tmp_path, store)
    ec.start()
    write_events(ec)
    to_symlink(secret_file(tmp_path))(ec.files.active["node_events"].path)
    with capture_logs() as captured:
        assert ec.uploader.flush_live(0.0) == 1
        await asyncio.wait_for(ec.drain(), TIMEOUT)
    assert SECRET not in plain(store)
    assert refusals(captured) == ["symlink", "symlink"]


async def test_leftover_symlink_is_not_uploaded_at_restart(tmp_path: Path) -> None:
    """A link planted in the data dir, named as a crash's leftover, is never queued."""
    store = MemoryStore()
    ec = make(tmp_path, store)
    node_dir = ec.files.root / SESSION / "node_events"
    node_dir.mkdir(parents=True)
    os.symlink(secret_file(tmp_path), node_dir / f"{NODE}_1764882373000000001.jsonl")
    ec.start()
    await asyncio.wait_for(ec.drain(), TIMEOUT)
    assert SECRET not in plain(store)
    assert store.objects == {}


async def test_event_file_name_taken_by_a_planted_link_is_not_written_through(
    tmp_path: Path,
) -> None:
    """The collector creates each event file new: a link planted at the next name (the
    names are predictable) makes that write fail instead of writing through the link."""
    store = MemoryStore()
    ec = make(tmp_path, store)
    ns = 1_764_882_373_000_000_000
    ec.files.wall_ns = lambda: ns
    victim = tmp_path / "victim"
    victim.write_bytes(b"untouched")
    node_dir = ec.files.root / SESSION / "node_events"
    node_dir.mkdir(parents=True)
    os.symlink(victim, node_dir / f"{NODE}_{ns}.jsonl")
    with pytest.raises(OSError):
        write_events(ec)
    assert victim.read_bytes() == b"untouched"
