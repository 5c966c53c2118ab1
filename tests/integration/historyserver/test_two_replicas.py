"""Two history server processes over one S3 store (moto, as ``hack/cluster/object_store.py`` starts
it) answer alike, as two replicas behind one Service would: the same ``/clusters``, the same
tasks, and the cookies ``/enter_cluster`` set on one select the same session on the other
(the server keeps nothing but caches)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from hack.cluster import history_server, object_store
from kuberay.historyserver.storage.config import open_store, storage_settings
from tests.unit.historyserver.server.stores import SESSION, collector_store

ENTER = f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}"
TASKS = "/api/v0/tasks?detail=1&limit=10000"


@pytest.fixture
def replicas(
    tmp_path: Path,
) -> Iterator[tuple[object_store.ObjectStoreServer, list[history_server.HistoryServer]]]:
    store = object_store.ObjectStoreServer(tmp_path / "store", "127.0.0.1")
    servers: list[history_server.HistoryServer] = []
    try:
        info = store.start()
        for i in range(2):
            workdir = tmp_path / f"replica-{i}"
            workdir.mkdir()
            server = history_server.HistoryServer(
                workdir, info.env(), extra_args=("--cluster-list-ttl=0",)
            )
            servers.append(server)
            server.start()
        yield store, servers
    finally:
        for server in servers:
            server.stop()
        store.stop()


async def _json(http: aiohttp.ClientSession, url: str, **kwargs: Any) -> tuple[int, Any]:
    async with http.get(url, **kwargs) as resp:
        return resp.status, await resp.json()


async def test_two_replicas_answer_alike(
    replicas: tuple[object_store.ObjectStoreServer, list[history_server.HistoryServer]],
    tmp_path: Path,
) -> None:
    store, (a, b) = replicas
    assert store.info is not None and a.url and b.url and a.url != b.url
    fixture = await collector_store(tmp_path / "fixture")
    s3 = await open_store(storage_settings(env=store.info.env()))
    try:
        for key, body in fixture.objects.items():
            await s3.put(key, body)
    finally:
        await s3.close()

    async with aiohttp.ClientSession() as plain:
        status_a, clusters_a = await _json(plain, f"{a.url}/clusters")
        status_b, clusters_b = await _json(plain, f"{b.url}/clusters")
    assert status_a == status_b == 200
    assert clusters_a == clusters_b and [c["sessionName"] for c in clusters_a] == [SESSION]

    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as browser:
        async with browser.get(f"{a.url}{ENTER}") as resp:
            assert resp.status == 200
        cookies = {c.key: c.value for c in jar}
        assert cookies["session_name"] == SESSION
        status_a, tasks_a = await _json(browser, f"{a.url}{TASKS}")
    # replica B never saw /enter_cluster: A's cookies alone select the session there
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as other:
        header = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}
        status_b, tasks_b = await _json(other, f"{b.url}{TASKS}", headers=header)
        status_jobs_a, jobs_a = await _json(other, f"{a.url}/api/jobs/", headers=header)
        status_jobs_b, jobs_b = await _json(other, f"{b.url}/api/jobs/", headers=header)
    assert status_a == status_b == 200
    assert tasks_a["data"]["result"]["total"] > 0
    assert tasks_a == tasks_b
    assert status_jobs_a == status_jobs_b == 200 and jobs_a == jobs_b
