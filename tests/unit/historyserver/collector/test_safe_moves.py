"""A Ray job plants a symlinked directory where the collector creates directories or moves
files (``prev-logs``, ``persist-complete-logs``, the event data dirs): the link's target
receives nothing, the files stay where they were, and the refusal is logged."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kuberay.historyserver.collector.event_files import EventFiles
from kuberay.historyserver.collector.logs import LogUploader
from kuberay.historyserver.collector.safe_dirs import make_dirs, move
from kuberay.historyserver.collector.safe_open import Refused
from kuberay.historyserver.collector.sessions import move_leftover_session_logs
from kuberay.historyserver.layout import ClusterRef, Layout
from tests.unit.historyserver.memstore import MemoryStore

S = "session_2026-12-04_21-06-04_046894_18728"
OLD = "session_2026-12-01_10-00-00_000001_1"
NODE = "abc123"
LAYOUT = Layout(ClusterRef("default", "c"))
TIMEOUT = 5.0


def planted(tmp_path: Path, at: Path) -> Path:
    """A directory outside the Ray temp root, linked from ``at``; returns the directory."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere, at)
    return elsewhere


def everything(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


def refusals(captured: list[dict[str, object]]) -> list[object]:
    return [e["reason"] for e in captured if "not safe" in str(e["event"])]


@pytest.mark.parametrize(
    "link",
    [
        "persist-complete-logs",
        f"persist-complete-logs/{OLD}",
        f"persist-complete-logs/{OLD}/{NODE}",
    ],
)
async def test_prev_logs_are_not_moved_through_a_planted_persist_complete_link(
    tmp_path: Path, link: str
) -> None:
    root = tmp_path / "ray"
    logs = root / "prev-logs" / OLD / NODE / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "raylet.out").write_text("old\n")
    (logs / "sub" / "worker.log").write_text("w\n")
    elsewhere = planted(tmp_path, root / link)
    store = MemoryStore()
    up = LogUploader(store, LAYOUT, root, interval=0.0, budget=64 << 20)
    with capture_logs() as captured:
        assert await asyncio.wait_for(up.process_prev_logs(), TIMEOUT) == [OLD]
    assert everything(elsewhere) == []
    assert (logs / "raylet.out").read_text() == "old\n"  # still where it was
    assert (logs / "sub" / "worker.log").read_text() == "w\n"
    assert refusals(captured) == ["symlink", "symlink"]
    assert len(store.objects) == 2  # put once; a second pass neither puts nor moves
    puts = len(store.puts)
    await asyncio.wait_for(up.process_prev_logs(), TIMEOUT)
    assert len(store.puts) == puts and everything(elsewhere) == []


@pytest.mark.parametrize(
    "link",
    ["prev-logs", f"prev-logs/{OLD}", f"prev-logs/{OLD}/{NODE}", f"prev-logs/{OLD}/{NODE}/logs"],
)
def test_session_logs_are_not_moved_through_a_planted_prev_logs_link(
    tmp_path: Path, link: str
) -> None:
    root = tmp_path / "ray"
    logs = root / OLD / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "raylet.out").write_text("old\n")
    (logs / "sub" / "worker.log").write_text("w\n")
    (root / S / "logs").mkdir(parents=True)
    elsewhere = planted(tmp_path, root / link)
    with capture_logs() as captured:
        assert move_leftover_session_logs(root, root / S, NODE) == []
    assert everything(elsewhere) == []
    assert everything(logs) == ["raylet.out", "sub", "sub/worker.log"]
    assert refusals(captured) == ["symlink"]


def test_event_files_are_not_created_under_a_planted_session_link(tmp_path: Path) -> None:
    files = EventFiles(
        tmp_path / "event-data",
        "c_default",
        node_id=NODE,
        max_file_size=100 << 20,
        rotation_interval=300.0,
        max_disk=200 << 20,
    )
    elsewhere = planted(tmp_path, files.root / S)
    with capture_logs() as captured, pytest.raises(OSError):
        files.write([(S, "job_events/01000000", {"eventType": "X"})])
    assert everything(elsewhere) == []
    assert refusals(captured) == ["symlink"]


def test_move_refuses_a_symlink_source_and_replaces_a_symlink_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    root = tmp_path / "ray"
    make_dirs(root.parent, root / "a" / "b")
    os.symlink(victim, root / "a" / "link")
    with pytest.raises(Refused):
        move(root, root / "a" / "link", root / "c" / "link")
    assert not (root / "c").exists()
    (root / "a" / "file").write_text("moved")
    os.symlink(victim, root / "a" / "b" / "file")
    move(root, root / "a" / "file", root / "a" / "b" / "file")
    assert victim.read_text() == "untouched"
    assert (root / "a" / "b" / "file").read_text() == "moved"
    assert not (root / "a" / "b" / "file").is_symlink()


async def test_a_link_planted_at_the_done_name_does_not_suppress_the_upload(
    tmp_path: Path,
) -> None:
    """``persist-complete-logs/.../raylet.out`` says "already uploaded"; a link planted there
    (to any file) is not taken for it: the prev-logs file is uploaded, then moved over the
    link (which is replaced, not written through)."""
    root = tmp_path / "ray"
    logs = root / "prev-logs" / OLD / NODE / "logs"
    logs.mkdir(parents=True)
    (logs / "raylet.out").write_text("old\n")
    decoy = tmp_path / "decoy"
    decoy.write_text("not the log\n")
    done = root / "persist-complete-logs" / OLD / NODE / "logs" / "raylet.out"
    done.parent.mkdir(parents=True)
    os.symlink(decoy, done)
    store = MemoryStore()
    up = LogUploader(store, LAYOUT, root, interval=0.0, budget=64 << 20)
    assert await asyncio.wait_for(up.process_prev_logs(), TIMEOUT) == [OLD]
    assert [v for v in store.objects.values()] == [b"old\n"]
    assert decoy.read_text() == "not the log\n"
    assert done.is_file() and not done.is_symlink() and done.read_text() == "old\n"
