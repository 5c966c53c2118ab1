"""Stores for the server tests, built from the recorded Ray 2.60 fixtures.

``collector_store`` runs every recorded body through the collector's own filing code
(``parse_batch`` -> ``category_of`` -> ``EventFiles`` -> ``EventUploader``), writes the
dashboard answers where the collector's snapshot poller puts them, a session marker, and a
few log files. ``kuberay_layout_store`` writes KubeRay's shapes by hand: JSON-array event
files, gzipped, names without ``.jsonl``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from kuberay.historyserver.collector.event_check import category_of, parse_batch
from kuberay.historyserver.collector.event_files import EventFiles
from kuberay.historyserver.collector.event_upload import EventUploader
from kuberay.historyserver.layout import ClusterRef, Layout
from tests.unit.historyserver.fixtures import camel_bodies, dashboard
from tests.unit.historyserver.memstore import MemoryStore

NODE = "72671b9b9704e37837a0c1dbe67f5b48f92ed718c77faf03ce819bf3"
SESSION = "session_2026-12-04_21-06-04_046894_18728"
CLUSTER = ClusterRef("default", "raycluster-hs")
WORKER_OUT = "worker-7b3f27d2731c4614b5f2a8217fdf3cbb7ca79bc08f71efc18d6bb81f-03000000-21236.out"
#: A worker log whose bytes line up with the recorded ``taskLogInfo`` offsets of job 03's
#: tasks on pid 21236 (each task prints ``square N`` into its slice).
WORKER_OUT_BODY = b"".join(
    [
        b":job_id:03000000\n".ljust(35, b"#"),
        b"sq first\n",  # 35..44 (+jG4n task)
        b"x" * 18,
        b"sq 2nd..\n",  # 62..71 (RL+k task)
        b"y" * 18,
        b"sq third\n",  # 89..98 (CrAf task)
        b"z" * 18,
        b"parent..\n",  # 116..125
        b"w" * 9,
        b"pg task.\n",  # 134..143 (0fj8 task)
        b"v" * 16,
    ]
)


def all_events() -> list[dict[str, Any]]:
    """Every recorded camelCase event, checked as the collector checks them."""
    return [e for body in camel_bodies() for e in parse_batch(json.dumps(body).encode())]


async def file_events(
    store: MemoryStore, tmp: Path, layout: Layout, events: list[dict[str, Any]], *, gz: bool
) -> None:
    """Run ``events`` through the collector's filing and upload code into ``store``."""
    files = EventFiles(
        tmp / "event-data",
        f"{layout.cluster.name}_{layout.cluster.namespace}",
        node_id=NODE,
        max_file_size=100 << 20,
        rotation_interval=300.0,
        max_disk=1 << 30,
    )
    uploader = EventUploader(store, layout, files, compression=gz, retry_backoff=0.01)
    rotated = files.write([(e["sessionName"], category_of(e), e) for e in events])
    rotated += files.rotate_all()
    for f in rotated:
        assert await uploader._upload(f)


async def collector_store(tmp: Path, *, root: str = "", gz: bool = False) -> MemoryStore:
    """The fixture session as our collector stores it."""
    store = MemoryStore()
    layout = Layout(CLUSTER, root=root)
    await file_events(store, tmp, layout, all_events(), gz=gz)
    recorded = dashboard()
    for endpoint in (
        "/api/jobs/",
        "/api/v0/placement_groups?detail=1&limit=10000",
        "/api/v0/cluster_metadata",
        "/timezone",
    ):
        body = recorded[endpoint]["body"]
        await store.put(layout.endpoint_key(SESSION, endpoint), body.encode())
    await store.put(layout.session_marker_key(SESSION), b"")
    await store.put(layout.log_key(SESSION, NODE, WORKER_OUT), WORKER_OUT_BODY)
    await store.put(layout.log_key(SESSION, NODE, "raylet.out"), b"a\nb\nc\nd\n")
    await store.put(layout.log_key(SESSION, NODE, "events/event_GCS.log"), b"{}\n")
    return store


def kuberay_layout_store(
    events: list[dict[str, Any]],
    *,
    owner: tuple[str, str] = ("rayjob", "my-job"),
    cluster: str = "my-job-raycluster-x",
    store: MemoryStore | None = None,
) -> tuple[MemoryStore, Layout]:
    """The events as KubeRay-era files written by hand: one gzipped JSON array per
    category, names ``<node>-<YYYY-MM-DD-HH>.gz`` (no ``.jsonl``), under the tree of
    ``cluster`` owned by ``owner`` (a RayJob by default), plus its marker, into ``store`` (a
    new one by default). No snapshots."""
    store = MemoryStore() if store is None else store
    layout = Layout(ClusterRef("team-a", cluster, owner[0], owner[1]))
    by_category: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_category.setdefault(category_of(e), []).append(e)
    for category, evs in by_category.items():
        name = f"{NODE}-2026-12-04-21.gz"
        body = gzip.compress(json.dumps(evs).encode())
        if category == "node_events":
            key = layout.node_events_key(SESSION, NODE, name)
        else:
            key = layout.job_events_key(SESSION, NODE, category.split("/", 1)[1], name)
        store.objects[key] = body
    store.objects[layout.session_marker_key(SESSION)] = b""
    return store, layout
