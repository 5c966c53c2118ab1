"""A session still being written is reloaded when its objects change; a session that has
ended (a newer session of its cluster, or a cluster Kubernetes no longer has) is not."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.layout import Layout, event_file_name
from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.context import STATE
from kuberay.historyserver.server.live import LiveCluster
from tests.unit.historyserver.memstore import MemoryStore
from tests.unit.historyserver.server.stores import (
    CLUSTER,
    NODE,
    SESSION,
    all_events,
    collector_store,
)

Client = TestClient[Any, Any]
LAYOUT = Layout(CLUSTER)
ENTER = f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}"
TASKS = "/api/v0/tasks?detail=1&limit=10000"
NEW_TASK = base64.b64encode(bytes.fromhex("ab" * 24)).decode()


def _new_task_file() -> bytes:
    definition = next(
        e
        for e in all_events()
        if e["eventType"] == "TASK_DEFINITION_EVENT"
        and e["taskDefinitionEvent"]["jobId"] == "AwAAAA=="
    )
    event = copy.deepcopy(definition)
    event["eventId"] = "bmV3LWV2ZW50"
    event["taskDefinitionEvent"]["taskId"] = NEW_TASK
    event["taskDefinitionEvent"]["taskName"] = "added_later"
    return json.dumps(event).encode() + b"\n"


async def _put_new_task(store: MemoryStore) -> None:
    name = event_file_name(NODE, 1_796_418_999_000_000_000, compressed=False)
    await store.put(LAYOUT.job_events_key(SESSION, NODE, "03000000", name), _new_task_file())


async def _task_names(c: Client) -> set[str]:
    r = await c.get(TASKS)
    assert r.status == 200
    return {t["name"] for t in (await r.json())["data"]["result"]["result"]}


async def _names_after_some_uses(c: Client, rounds: int = 30) -> set[str]:
    names: set[str] = set()
    for _ in range(rounds):
        names = await _task_names(c)
        if "added_later" in names:
            break
        await asyncio.sleep(0.05)
    return names


async def test_a_growing_session_is_reloaded(tmp_path: Path) -> None:
    store = await collector_store(tmp_path)
    app = make_app(store, reload_interval=0.01, cluster_list_ttl=0)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        assert (await c.get(ENTER)).status == 200
        before = await _task_names(c)
        assert "added_later" not in before
        await _put_new_task(store)
        after = await _names_after_some_uses(c, rounds=200)
        assert after == before | {"added_later"}
        freshness = app[STATE].freshness
        assert freshness is not None and freshness.reloads == 1
        # unchanged since: checked again, not reloaded again
        await _names_after_some_uses(c, rounds=5)
        assert freshness.reloads == 1 and app[STATE].cache.loads == 2


async def test_an_ended_session_is_not_rechecked(tmp_path: Path) -> None:
    store = await collector_store(tmp_path)
    await store.put(LAYOUT.session_marker_key("session_2026-12-05_00-00-00_000001_1"), b"")
    app = make_app(store, reload_interval=0.01, cluster_list_ttl=0)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        assert (await c.get(ENTER)).status == 200
        await _put_new_task(store)
        assert "added_later" not in await _names_after_some_uses(c, rounds=10)
        freshness = app[STATE].freshness
        assert freshness is not None and (freshness.checks, freshness.reloads) == (0, 0)
        # a forced reload still sees it
        assert (await c.get(ENTER + "?reload=true")).status == 200
        assert "added_later" in await _task_names(c)


class _Live:
    """Kubernetes' RayClusters, as the live list gives them."""

    def __init__(self, clusters: list[LiveCluster]) -> None:
        self.clusters = clusters

    async def entries(self) -> list[LiveCluster]:
        return self.clusters


async def test_with_live_clusters_only_a_live_cluster_s_session_is_reloaded(
    tmp_path: Path,
) -> None:
    for alive, reloaded in (([], False), ([LiveCluster("default", "raycluster-hs")], True)):
        store = await collector_store(tmp_path / str(alive))
        app = make_app(store, reload_interval=0.01, cluster_list_ttl=0, live=_Live(alive))  # type: ignore[arg-type]
        async with TestClient(TestServer(app, host="127.0.0.1")) as c:
            assert (await c.get(ENTER)).status == 200
            await _put_new_task(store)
            names = await _names_after_some_uses(c, rounds=200 if reloaded else 10)
            assert ("added_later" in names) is reloaded
