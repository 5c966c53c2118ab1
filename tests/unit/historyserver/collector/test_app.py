"""The whole collector against a fake dashboard, a fake /tmp/ray and an in-memory store."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from kuberay.historyserver.collector.app import Collector
from kuberay.historyserver.collector.config import CollectorOptions
from tests.helpers import eventually
from tests.unit.historyserver.collector.fake_dashboard import FakeDashboard
from tests.unit.historyserver.fixtures import camel_bodies
from tests.unit.historyserver.memstore import MemoryStore

S = "session_2026-12-04_21-06-04_046894_18728"
OLD = "session_2026-12-01_10-00-00_000001_1"


@pytest.fixture
def ray_tmp() -> Iterator[Path]:
    """A /tmp/ray look-alike with a live raylet socket (short path: unix sockets are capped)."""
    root = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))
    (root / S / "sockets").mkdir(parents=True)
    (root / S / "logs" / "events").mkdir(parents=True)
    (root / S / "logs" / "raylet.out").write_text("raylet\n")
    (root / OLD / "logs").mkdir(parents=True)
    (root / OLD / "logs" / "gcs_server.out").write_text("old gcs\n")
    os.symlink(root / S, root / "session_latest")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(root / S / "sockets" / "raylet"))
    sock.listen(8)
    yield root
    sock.close()
    shutil.rmtree(root, ignore_errors=True)


async def test_collector_end_to_end(ray_tmp: Path) -> None:
    fake = FakeDashboard(node_ip="10.1.2.3")
    base = await fake.start()
    store = MemoryStore()
    options = CollectorOptions(
        role="Head",
        storage_backend="local",
        cluster_name="raycluster-hs",
        owner_kind="rayjob",
        owner_name="my-job",
        events_port=0,
        events_hosts=("127.0.0.1",),
        dashboard_address=base,
        event_data_dir=str(ray_tmp / "event-data"),
        pod_ip="10.1.2.3",
        fq_ray_ip=base,
        tmp_root=str(ray_tmp),
        log_upload_interval=0.2,
        poll_interval=3600,
    )
    collector = Collector(options, store, watch_interval=0.2, startup_interval=0.01)
    stop = asyncio.Event()
    run = asyncio.create_task(collector.run(stop))
    node = fake.node_id
    prefix = f"cluster-history/rayjob/default/my-job/raycluster-hs/{S}"
    try:
        await eventually(lambda: collector.ports, timeout=10)
        url = f"http://127.0.0.1:{collector.ports[0]}/v1/events"
        async with aiohttp.ClientSession() as http:
            for body in camel_bodies():
                async with http.post(url, data=json.dumps(body)) as resp:
                    assert resp.status == 200
            # the live log scan puts raylet.out while the cluster runs
            await eventually(lambda: f"{prefix}/{node}/logs/raylet.out" in store.objects)
            with open(ray_tmp / S / "logs" / "raylet.out", "a") as f:
                f.write("more\n")
            await eventually(
                lambda: store.objects.get(f"{prefix}/{node}/logs/raylet.out") == b"raylet\nmore\n"
            )
            stop.set()  # SIGTERM
            await asyncio.wait_for(run, 30)
            async with http.post(url, data="[]") as resp:
                pytest.fail(f"still accepting after shutdown: {resp.status}")
    except aiohttp.ClientConnectionError:
        pass
    finally:
        stop.set()
        await fake.close()
        if not run.done():
            run.cancel()
    keys = set(store.objects)
    assert f"cluster-metadata/rayjob/default_my-job_raycluster-hs/{S}" in keys
    assert f"cluster-metadata/rayjob/default_my-job_raycluster-hs/{OLD}" in keys
    old_prefix = f"cluster-history/rayjob/default/my-job/raycluster-hs/{OLD}"
    assert store.objects[f"{old_prefix}/{node}/logs/gcs_server.out"] == b"old gcs\n"
    assert f"{prefix}/fetched_endpoints/restful__api__v0__cluster_metadata" in keys
    assert f"{prefix}/fetched_endpoints/restful__timezone" in keys
    assert f"{prefix}/fetched_endpoints/restful__api__jobs" in keys
    events = [k for k in keys if "/node_events/" in k or "/job_events/" in k]
    stored = sum(len(store.objects[k].splitlines()) for k in events)
    assert stored == sum(map(len, camel_bodies()))
    assert all(k.startswith(f"{prefix}/{node}/") for k in events)
    assert not [p for p in (ray_tmp / "event-data").rglob("*") if p.is_file()]
