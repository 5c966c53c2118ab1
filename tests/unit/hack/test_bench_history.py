"""``hack/bench_history.py``'s synthetic store is what the benchmark claims: KubeRay's layout,
Ray 2.60's event shapes, decoded by the server into M finished, named tasks of one job."""

from __future__ import annotations

from collections import Counter

from hack import bench_history
from kuberay.historyserver.layout import Layout, parse_session_marker
from kuberay.historyserver.server.session import SessionKey, load_session
from tests.unit.historyserver.memstore import MemoryStore


async def test_a_big_session_decodes_into_its_tasks() -> None:
    store = MemoryStore()
    objects = bench_history.big_session_objects(3, tasks=7, per_file=10)
    for key, body in objects:
        await store.put(key, body)
    ref = bench_history.cluster_of(3)
    session = bench_history.session_name(3)
    await store.put(Layout(ref).session_marker_key(session), b"")
    job_files = [k for k, _ in objects if "/job_events/02000000/" in k]
    assert len(job_files) == 4  # 2 job events + 7 tasks x 5 events, 10 per file
    assert all(
        k.startswith(f"cluster-history/rayjob/bench-3/job-3/{ref.name}/") for k, _ in objects
    )

    snap = await load_session(store, SessionKey(Layout(ref), session))
    assert len(snap.tasks) == 7
    assert Counter(t["state"] for t in snap.tasks) == {"FINISHED": 7}
    assert {t["name"] for t in snap.tasks} == {f"work_{n % 7}" for n in range(7)}
    assert all(t["job_id"] == "02000000" and t["profiling_data"] for t in snap.tasks)
    assert [n["node_ip"] for n in snap.nodes] == ["10.0.0.1"]
    assert snap.stats.skipped == 0


def test_markers_and_sessions_are_distinct_and_ordered() -> None:
    names = [bench_history.session_name(i) for i in range(1000)]
    assert len(set(names)) == 1000 and names == sorted(names, reverse=True)
    for i in (0, 1, 3):
        key = Layout(bench_history.cluster_of(i)).session_marker_key(names[i])
        assert parse_session_marker(key) == (bench_history.cluster_of(i), names[i])


def test_percentile_is_nearest_rank() -> None:
    values = list(range(1, 101))
    assert bench_history.percentile(values, 0.50) == 50
    assert bench_history.percentile(values, 0.99) == 99
    assert bench_history.percentile([5.0], 0.99) == 5.0
