"""Live log uploads (incremental, rotation-safe) and prev-logs handling."""

from __future__ import annotations

import os
from pathlib import Path

from kuberay.historyserver.collector.logs import LogUploader
from kuberay.historyserver.collector.sessions import move_leftover_session_logs
from kuberay.historyserver.layout import ClusterRef, Layout
from tests.unit.historyserver.memstore import MemoryStore

S = "session_2026-12-04_21-06-04_046894_18728"
NODE = "abc123"
LAYOUT = Layout(ClusterRef("default", "c"))


def key(rel: str, session: str = S, node: str = NODE) -> str:
    return LAYOUT.log_key(session, node, rel)


def setup(tmp_path: Path, budget: int = 64 << 20) -> tuple[MemoryStore, LogUploader, Path]:
    store = MemoryStore()
    logs = tmp_path / S / "logs"
    (logs / "events").mkdir(parents=True)
    return store, LogUploader(store, LAYOUT, tmp_path, interval=0.0, budget=budget), tmp_path / S


async def test_only_new_or_grown_files_are_put(tmp_path: Path) -> None:
    store, up, session = setup(tmp_path)
    logs = session / "logs"
    (logs / "raylet.out").write_text("a\n")
    (logs / "events" / "event_GCS.log").write_text("{}\n")
    os.symlink(logs / "raylet.out", logs / "link.out")
    assert await up.scan_session(session, NODE) == 2
    assert set(store.objects) == {key("raylet.out"), key("events/event_GCS.log")}
    assert await up.scan_session(session, NODE) == 0  # nothing changed: no put
    with open(logs / "raylet.out", "a") as f:
        f.write("b\n")
    assert await up.scan_session(session, NODE) == 1
    assert store.objects[key("raylet.out")] == b"a\nb\n"


async def test_rotated_logs_are_all_kept(tmp_path: Path) -> None:
    """Ray renames worker.log to worker.log.1 when it rotates: both names end up stored
    with what they held, nothing is lost."""
    store, up, session = setup(tmp_path)
    logs = session / "logs"
    (logs / "worker.log").write_text("first\n")
    await up.scan_session(session, NODE)
    with open(logs / "worker.log", "a") as f:
        f.write("more\n")
    os.rename(logs / "worker.log", logs / "worker.log.1")
    (logs / "worker.log").write_text("second\n")
    await up.scan_session(session, NODE)
    os.rename(logs / "worker.log.1", logs / "worker.log.2")
    os.rename(logs / "worker.log", logs / "worker.log.1")
    (logs / "worker.log").write_text("third\n")
    await up.scan_session(session, NODE, final=True)
    assert store.objects[key("worker.log.2")] == b"first\nmore\n"
    assert store.objects[key("worker.log.1")] == b"second\n"
    assert store.objects[key("worker.log")] == b"third\n"


async def test_a_scan_puts_at_most_the_budget(tmp_path: Path) -> None:
    store, up, session = setup(tmp_path, budget=1000)
    for i in range(5):
        (session / "logs" / f"f{i}.log").write_bytes(b"x" * 600)
    assert await up.scan_session(session, NODE) == 1
    assert await up.scan_session(session, NODE) == 1
    assert await up.scan_session(session, NODE, final=True) == 3  # shutdown: no budget
    assert len(store.objects) == 5


async def test_big_files_stream_in_chunks(tmp_path: Path) -> None:
    store, up, session = setup(tmp_path)
    data = os.urandom(3 << 20)
    (session / "logs" / "big.log").write_bytes(data)
    await up.scan_session(session, NODE)
    assert store.objects[key("big.log")] == data


async def test_prev_logs_are_uploaded_moved_and_cleaned(tmp_path: Path) -> None:
    """Earlier sessions' logs go to prev-logs/<session>/<node>/logs (KubeRay), are put, moved
    to persist-complete-logs, and the node dir is removed; a second pass puts nothing."""
    store, up, _ = setup(tmp_path)
    old = "session_2026-12-01_10-00-00_000001_1"
    (tmp_path / old / "logs" / "old").mkdir(parents=True)
    (tmp_path / old / "logs" / "raylet.out").write_text("old\n")
    (tmp_path / old / "logs" / "old" / "gcs_server.out").write_text("gcs\n")
    os.symlink(tmp_path / S, tmp_path / "session_latest")
    assert move_leftover_session_logs(tmp_path, tmp_path / S, NODE) == [old]
    assert (tmp_path / "prev-logs" / old / NODE / "logs" / "raylet.out").is_file()
    assert (tmp_path / S / "logs").is_dir()  # the active session is untouched

    assert await up.process_prev_logs() == [old]
    assert store.objects == {
        key("raylet.out", old): b"old\n",
        key("old/gcs_server.out", old): b"gcs\n",
    }
    assert not (tmp_path / "prev-logs" / old / NODE).exists()
    done = tmp_path / "persist-complete-logs" / old / NODE / "logs"
    assert (done / "raylet.out").read_text() == "old\n"
    puts = len(store.puts)
    await up.process_prev_logs()
    assert len(store.puts) == puts


async def test_prev_logs_with_unsafe_names_are_skipped(tmp_path: Path) -> None:
    store, up, _ = setup(tmp_path)
    bad = tmp_path / "prev-logs" / "bad name" / NODE / "logs"
    bad.mkdir(parents=True)
    (bad / "x.log").write_text("x")
    assert await up.process_prev_logs() == []
    assert store.objects == {}
