"""``hack/cluster/history_server.py``: the history server ``up --history-server`` starts over the
local S3 store, started here the same way (moto via ``ObjectStoreServer``, then
``HistoryServer`` with the store's env), without a control plane. A cluster's session marker
put in KubeRay's layout is listed by the server's ``/clusters``; only loopback is bound."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from hack.cluster import history_server, object_store
from kuberay.historyserver.layout import ClusterRef, Layout
from kuberay.historyserver.storage.config import open_store, storage_settings
from tests.listening import listening_sockets, wildcard

SESSION = "session_2026-01-02_03-04-05_000006_77"
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str) -> tuple[int, bytes]:
    with OPENER.open(url, timeout=10) as resp:
        return resp.status, resp.read()


@pytest.fixture
def servers(
    tmp_path: Path,
) -> Iterator[tuple[object_store.ObjectStoreServer, history_server.HistoryServer]]:
    store = object_store.ObjectStoreServer(tmp_path, "127.0.0.1")
    server: history_server.HistoryServer | None = None
    try:
        info = store.start()
        server = history_server.HistoryServer(
            tmp_path, info.env(), extra_args=("--cluster-list-ttl=0",)
        )
        server.start()
        yield store, server
    finally:
        if server is not None:
            server.stop()
        store.stop()


async def test_server_lists_the_store_s_clusters(
    servers: tuple[object_store.ObjectStoreServer, history_server.HistoryServer], tmp_path: Path
) -> None:
    store, server = servers
    assert store.info is not None and server.url is not None and server.pid is not None
    url = server.url
    assert url.startswith("http://127.0.0.1:")
    assert history_server.read_url(tmp_path) == url
    assert (tmp_path / history_server.URL_FILE).read_text() == url + "\n"
    assert _get(f"{url}/readz") == (200, b"ok")
    assert _get(f"{url}/livez") == (200, b"ok")

    listeners = listening_sockets([server.pid])
    assert listeners, "the history server listens on nothing"
    assert not [x for x in listeners if wildcard(x.address)], listeners
    port = int(url.rsplit(":", 1)[1])
    assert {(x.address, x.port) for x in listeners if x.proto.startswith("tcp")} == {
        ("127.0.0.1", port)
    }

    # a collector's marker, through the store's own env (what a sidecar would be given)
    objects = await open_store(storage_settings(env=store.info.env()))
    try:
        for ref in (
            ClusterRef("default", "raycluster-hs"),
            ClusterRef("team", "rayjob-x-abc", "rayjob", "rayjob-x"),
        ):
            await objects.put(Layout(ref).session_marker_key(SESSION), b"")
    finally:
        await objects.close()
    status, body = _get(f"{url}/clusters")
    assert status == 200
    entries = json.loads(body)
    assert {(e["namespace"], e["name"], e["sessionName"], e["ownerKind"]) for e in entries} == {
        ("default", "raycluster-hs", SESSION, ""),
        ("team", "rayjob-x-abc", SESSION, "rayjob"),
    }
    assert entries[0]["createTime"] == "2026-01-02T03:04:05Z"

    pid = server.pid
    server.stop()
    assert not (tmp_path / history_server.URL_FILE).exists()
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


def test_refuses_wildcard_and_storeless(tmp_path: Path) -> None:
    env = object_store.store_env("http://127.0.0.1:1")
    for host in ("0.0.0.0", "::", ""):
        with pytest.raises(history_server.HistoryServerError, match="every interface"):
            history_server.HistoryServer(tmp_path, env, host=host)
    with pytest.raises(history_server.HistoryServerError, match="STORAGE_BACKEND"):
        history_server.HistoryServer(tmp_path, {})


def test_a_failing_server_reports_its_log(tmp_path: Path) -> None:
    env = {**object_store.store_env("http://127.0.0.1:1"), "STORAGE_BACKEND": "nonesuch"}
    server = history_server.HistoryServer(tmp_path, env, start_timeout=30)
    with pytest.raises(history_server.HistoryServerError, match="exited with code 1"):
        server.start()
    assert not (tmp_path / history_server.URL_FILE).exists()
    assert server.pid is None
