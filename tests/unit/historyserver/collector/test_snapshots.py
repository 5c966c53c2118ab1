"""Dashboard snapshots with KubeRay's keys, the finished-job snapshot, and auth."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from kuberay.historyserver.collector.auth import AuthRejected
from kuberay.historyserver.collector.config import AuthSettings
from kuberay.historyserver.collector.dashboard import DashboardClient
from kuberay.historyserver.collector.nodeid import fetch_node_id
from kuberay.historyserver.collector.snapshots import Snapshots
from kuberay.historyserver.layout import ClusterRef, Layout
from tests.helpers import eventually
from tests.unit.historyserver.collector.fake_dashboard import FakeDashboard
from tests.unit.historyserver.memstore import MemoryStore

S = "session_2026-12-04_21-06-04_046894_18728"
LAYOUT = Layout(ClusterRef("default", "raycluster-hs"))
FE = f"cluster-history/raycluster/default/raycluster-hs/{S}/fetched_endpoints"


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def _snap(
    http: aiohttp.ClientSession, fake: FakeDashboard, auth: AuthSettings | None = None
) -> tuple[Snapshots, MemoryStore]:
    base = await fake.start()
    store = MemoryStore()
    client = DashboardClient(http, base, auth or AuthSettings())
    snap = Snapshots(
        store,
        LAYOUT,
        client,
        lambda: S,
        poll_interval=3600,
        additional=("/api/v0/cluster_metadata", "/api/serve/applications/"),
        retry_interval=0.01,
        after_finish_delays=(0.0,),
    )
    return snap, store


async def test_poll_stores_kuberays_keys_and_the_jobs_list(http: aiohttp.ClientSession) -> None:
    fake = FakeDashboard()
    snap, store = await _snap(http, fake)
    fake.datasets["03000000"] = [{"dataset": "ds_1", "state": "FINISHED"}]
    try:
        assert await snap.fetch_once("/timezone")
        assert await snap.fetch_once("/api/v0/cluster_metadata")
        await snap.poll_once()
    finally:
        await fake.close()
    assert sorted(store.objects) == sorted(
        f"{FE}/{k}"
        for k in (
            "restful__timezone",
            "restful__api__v0__cluster_metadata",
            "restful__api__serve__applications",
            "restful__api__v0__placement_groups?detail=1&limit=10000",
            "restful__api__jobs",
            "restful__api__data__datasets__03000000",
        )
    )
    assert store.objects[f"{FE}/restful__timezone"] == fake.bodies["/timezone"].encode()
    assert json.loads(store.objects[f"{FE}/restful__api__jobs"]) == fake.jobs
    # additional endpoints are deduplicated against the built-in ones
    assert fake.requests.count("/api/serve/applications/") == 1


async def test_empty_datasets_of_a_terminal_job_stop_after_two_polls(
    http: aiohttp.ClientSession,
) -> None:
    fake = FakeDashboard()
    snap, store = await _snap(http, fake)
    try:
        for _ in range(4):
            await snap.poll_once()
    finally:
        await fake.close()
    assert not [k for k in store.objects if "datasets" in k]
    assert fake.requests.count("/api/data/datasets/03000000") == 2


async def test_final_poll_skips_an_empty_serve_answer(http: aiohttp.ClientSession) -> None:
    fake = FakeDashboard()
    snap, store = await _snap(http, fake)
    try:
        await snap.final_poll()
    finally:
        await fake.close()
    assert f"{FE}/restful__api__serve__applications" not in store.objects
    assert f"{FE}/restful__api__jobs" in store.objects


async def test_a_finished_job_is_snapshotted_at_once(http: aiohttp.ClientSession) -> None:
    fake = FakeDashboard()
    fake.jobs[0]["status"] = "RUNNING"
    snap, store = await _snap(http, fake)
    run = __import__("asyncio").create_task(snap.run())
    try:
        await eventually(lambda: f"{FE}/restful__api__jobs" in store.objects, timeout=10)
        fake.jobs[0]["status"] = "SUCCEEDED"
        fake.datasets[fake.jobs[0]["job_id"]] = [{"dataset": "d"}]
        snap.job_finished()  # poll interval is an hour: only the trigger can store this
        await eventually(
            lambda: (
                json.loads(store.objects[f"{FE}/restful__api__jobs"])[0]["status"] == "SUCCEEDED"
            ),
            timeout=10,
        )
        await eventually(
            lambda: f"{FE}/restful__api__data__datasets__{fake.jobs[0]['job_id']}" in store.objects,
            timeout=10,
        )
    finally:
        run.cancel()
        await fake.close()


async def test_rejected_token_stops_every_retry(http: aiohttp.ClientSession) -> None:
    fake = FakeDashboard(token="right")
    snap, store = await _snap(http, fake, AuthSettings(token="wrong"))
    try:
        assert await snap.fetch_once("/timezone") is False
        await snap.run()  # returns by itself: no retry loop on 401
        with pytest.raises(AuthRejected):
            await fetch_node_id(snap.client, "192.0.2.2")
    finally:
        await fake.close()
    assert snap.auth_failed and store.objects == {}
    assert len(fake.requests) <= 5


async def test_token_from_secret_env_or_projected_file(
    http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    fake = FakeDashboard(token="s3cret")
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    base = await fake.start()
    try:
        for auth in (
            AuthSettings(token="s3cret"),
            AuthSettings(k8s_token_auth=True, token_path=str(token_file)),
        ):
            node = await fetch_node_id(DashboardClient(http, base, auth), "192.0.2.2")
            assert node == fake.node_id
    finally:
        await fake.close()
