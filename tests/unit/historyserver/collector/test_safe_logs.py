"""A Ray job swaps a log file between the collector's scan and its read: the collector never
uploads what the swap points at, never blocks on a FIFO, and keeps going."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kuberay.historyserver.collector import logs as logs_module
from kuberay.historyserver.collector.app import Collector
from kuberay.historyserver.collector.config import CollectorOptions
from kuberay.historyserver.collector.logs import LogUploader, walk_files
from kuberay.historyserver.collector.sessions import resolve_session_latest
from kuberay.historyserver.layout import ClusterRef, Layout
from tests.unit.historyserver.collector.swaps import (
    SECRET,
    Swap,
    parent_to_symlink,
    secret_file,
    stored,
    to_fifo,
    to_new_file,
    to_symlink,
    unblocking,
)
from tests.unit.historyserver.memstore import MemoryStore

S = "session_2026-12-04_21-06-04_046894_18728"
OLD = "session_2026-12-01_10-00-00_000001_1"
NODE = "abc123"
LAYOUT = Layout(ClusterRef("default", "c"))
TIMEOUT = 5.0
RAYLET = b"raylet log line\n" * 8
WORKER = b"worker log line\n" * 8


def key(rel: str, session: str = S) -> str:
    return LAYOUT.log_key(session, NODE, rel)


def swap_after_scan(monkeypatch: pytest.MonkeyPatch, rel: str, swap: Swap) -> None:
    """The next scan that lists ``rel`` sees the real file; right after it, ``swap`` runs."""

    def scan_then_swap(root: Path) -> list[tuple[str, os.stat_result]]:
        found = walk_files(root)
        if any(r == rel for r, _ in found):
            swap(root / rel)
        return found

    monkeypatch.setattr(logs_module, "walk_files", scan_then_swap)


def live(tmp_path: Path) -> tuple[MemoryStore, LogUploader, Path]:
    logs = tmp_path / S / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "raylet.out").write_bytes(RAYLET)  # longer than the secret: read whole
    (logs / "sub" / "worker.log").write_bytes(WORKER)
    (logs / "gcs_server.out").write_text("gcs\n")
    store = MemoryStore()
    up = LogUploader(store, LAYOUT, tmp_path, interval=0.0, budget=64 << 20)
    return store, up, tmp_path / S


def prev(tmp_path: Path) -> tuple[MemoryStore, LogUploader, Path]:
    logs = tmp_path / "prev-logs" / OLD / NODE / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "raylet.out").write_bytes(RAYLET)  # longer than the secret: read whole
    (logs / "sub" / "worker.log").write_bytes(WORKER)
    (logs / "gcs_server.out").write_text("gcs\n")
    store = MemoryStore()
    return store, LogUploader(store, LAYOUT, tmp_path, interval=0.0, budget=64 << 20), logs


def refusals(captured: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(e["path"], e["reason"]) for e in captured if "not safe to read" in str(e["event"])]


@pytest.mark.parametrize("final", [False, True])
async def test_live_log_swapped_for_a_symlink_to_secrets_is_not_uploaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, final: bool
) -> None:
    store, up, session = live(tmp_path)
    swap_after_scan(monkeypatch, "raylet.out", to_symlink(secret_file(tmp_path)))
    with capture_logs() as captured:
        await asyncio.wait_for(up.scan_session(session, NODE, final=final), TIMEOUT)
    assert SECRET not in stored(store.objects)
    assert key("raylet.out") not in store.objects
    assert store.objects[key("gcs_server.out")] == b"gcs\n"  # the rest still goes up
    assert refusals(captured) == [("raylet.out", "symlink")]
    assert up.refused == 1


async def test_live_log_under_a_symlinked_parent_is_not_uploaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, up, session = live(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "worker.log").write_bytes(SECRET)
    swap_after_scan(monkeypatch, "sub/worker.log", parent_to_symlink(elsewhere))
    with capture_logs() as captured:
        await asyncio.wait_for(up.scan_session(session, NODE), TIMEOUT)
    assert SECRET not in stored(store.objects)
    assert refusals(captured) == [("sub/worker.log", "symlink")]


async def test_live_log_swapped_for_a_fifo_does_not_block_the_shutdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collector's shutdown path (last prev-logs pass, last unbounded scan) finishes."""
    store, up, session = live(tmp_path)
    fifo = session / "logs" / "raylet.out"
    swap_after_scan(monkeypatch, "raylet.out", to_fifo)
    options = CollectorOptions(role="Worker", storage_backend="local", cluster_name="c")
    collector = Collector(options, store)
    collector.logs, collector.session_dir, collector.node_id = up, session, NODE
    with unblocking(fifo), capture_logs() as captured:
        await asyncio.wait_for(collector.shutdown(), TIMEOUT)
    assert refusals(captured) == [("raylet.out", "not a regular file")]
    assert store.objects[key("gcs_server.out")] == b"gcs\n"


async def test_live_log_replaced_since_the_scan_is_put_at_the_next_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another file renamed over the scanned one is not read under the old file's record;
    the next scan sees it as the new file it is and puts it whole."""
    store, up, session = live(tmp_path)
    swap_after_scan(monkeypatch, "raylet.out", to_new_file)
    with capture_logs() as captured:
        await asyncio.wait_for(up.scan_session(session, NODE), TIMEOUT)
    assert key("raylet.out") not in store.objects
    assert refusals(captured) == [("raylet.out", "replaced since scan")]
    monkeypatch.setattr(logs_module, "walk_files", walk_files)
    await asyncio.wait_for(up.scan_session(session, NODE), TIMEOUT)
    assert store.objects[key("raylet.out")] == b"a different file\n"


@pytest.mark.parametrize(
    ("swap", "reason"),
    [
        (lambda tmp: to_symlink(secret_file(tmp)), "symlink"),
        (lambda tmp: to_fifo, "not a regular file"),
        (lambda tmp: to_new_file, "replaced since scan"),
    ],
    ids=["symlink", "fifo", "replaced"],
)
async def test_prev_logs_swaps_are_refused_and_cleaned_up(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    swap: Callable[[Path], Swap],
    reason: str,
) -> None:
    """prev-logs: the swapped file is neither put nor moved to persist-complete-logs, the
    pass does not block, and a later pass finishes the node (a replacement is put then)."""
    store, up, logs = prev(tmp_path)
    swap_after_scan(monkeypatch, "raylet.out", swap(tmp_path))
    with unblocking(logs / "raylet.out"), capture_logs() as captured:
        assert await asyncio.wait_for(up.process_prev_logs(), TIMEOUT) == [OLD]
    assert SECRET not in stored(store.objects)
    assert key("raylet.out", OLD) not in store.objects
    assert store.objects[key("sub/worker.log", OLD)] == WORKER
    assert refusals(captured) == [("raylet.out", reason)]
    done = tmp_path / "persist-complete-logs" / OLD / NODE / "logs"
    assert not (done / "raylet.out").exists()
    monkeypatch.setattr(logs_module, "walk_files", walk_files)
    await asyncio.wait_for(up.process_prev_logs(), TIMEOUT)
    assert not (tmp_path / "prev-logs" / OLD / NODE).exists()
    assert SECRET not in stored(store.objects)
    if reason == "replaced since scan":
        assert store.objects[key("raylet.out", OLD)] == b"a different file\n"


async def test_prev_logs_session_dir_symlinked_elsewhere_is_not_read(tmp_path: Path) -> None:
    """A ``prev-logs/<session>`` that is a symlink (to a tree holding secrets) is not walked."""
    store = MemoryStore()
    up = LogUploader(store, LAYOUT, tmp_path, interval=0.0, budget=64 << 20)
    elsewhere = tmp_path / "elsewhere" / NODE / "logs"
    elsewhere.mkdir(parents=True)
    (elsewhere / "environ").write_bytes(SECRET)
    (tmp_path / "prev-logs").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "prev-logs" / OLD)
    await asyncio.wait_for(up.process_prev_logs(), TIMEOUT)
    assert SECRET not in stored(store.objects)


def test_session_latest_pointing_outside_the_ray_temp_root_is_ignored(tmp_path: Path) -> None:
    root = tmp_path / "ray"
    (root / S).mkdir(parents=True)
    outside = tmp_path / "session_2026-12-04_00-00-00_000000_1"
    (outside / "logs").mkdir(parents=True)
    os.symlink(outside, root / "session_latest")
    assert resolve_session_latest(root) is None
    (root / "session_latest").unlink()
    os.symlink(root / S, root / "session_latest")
    assert resolve_session_latest(root) == (root / S).resolve()
