"""The dashboard's History route: the object read as the caller first (a refusal passed
back and the history server not asked; a deleted object's 404 still shows its sessions),
the history server read without anything of the caller's, its answer capped, the sessions
cut to the object's, and no route nor History section without ``--history-server-url``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kuberay.apiserver.app import make_app
from kuberay.apiserver.dashboard import history as history_module
from kuberay.apiserver.options import CALLER, ApiServerOptions
from kuberay.apiserver.upstream import Upstream
from kuberay.kube.restconfig import RestConfig

CLUSTER = "/apis/ray.io/v1/namespaces/ns/rayclusters/rc"
JOB = "/apis/ray.io/v1/namespaces/ns/rayjobs/job"
ENTRIES: list[dict[str, Any]] = [
    {"name": "rc", "namespace": "ns", "sessionName": "session_2026-01-02_03-04-05_000001_1",
     "createTime": "2026-01-02T03:04:05Z", "ownerKind": "", "ownerName": ""},
    {"name": "rc", "namespace": "other", "sessionName": "session_x", "ownerKind": "",
     "ownerName": ""},
    {"name": "job-raycluster-abc", "namespace": "ns", "sessionName": "session_j",
     "ownerKind": "rayjob", "ownerName": "job"},
]  # fmt: skip


class Fake:
    """One loopback server playing the kube-apiserver and the history server, recording
    the headers of every request by path."""

    def __init__(self) -> None:
        self.objects: dict[str, int] = {CLUSTER: 200, JOB: 404}
        self.listing: bytes = json.dumps(ENTRIES).encode()
        self.seen: list[tuple[str, dict[str, str]]] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append((request.path, dict(request.headers)))
        if request.path == "/clusters":
            return web.Response(body=self.listing, content_type="application/json")
        code = self.objects.get(request.path, 404)
        return web.json_response({"kind": "Status", "code": code, "message": "m"}, status=code)


@pytest.fixture
async def fake() -> AsyncIterator[tuple[Fake, str]]:
    fake = Fake()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield fake, f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def _server(upstream_url: str, history_url: str) -> tuple[web.AppRunner, Upstream, str]:
    options = ApiServerOptions(
        auth_mode=CALLER, enable_dashboard=True, history_server_url=history_url
    )
    upstream = Upstream(RestConfig(upstream_url))
    runner = web.AppRunner(make_app(options, upstream))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, upstream, f"http://127.0.0.1:{runner.addresses[0][1]}"


@pytest.fixture
async def server(fake: tuple[Fake, str]) -> AsyncIterator[str]:
    runner, upstream, url = await _server(fake[1], fake[1])
    try:
        yield url
    finally:
        await runner.cleanup()
        await upstream.close()


async def _get(url: str, token: str | None = "t") -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession() as session,
        session.get(aiohttp.client.URL(url, encoded=True), headers=headers) as r,
    ):
        text = await r.text()
        return r.status, json.loads(text) if text.startswith("{") else text


async def test_the_sessions_of_a_cluster_and_nothing_of_the_caller_reaches_the_history_server(
    fake: tuple[Fake, str], server: str
) -> None:
    status, body = await _get(f"{server}/dashboard/api/namespaces/ns/rayclusters/rc/history")
    assert status == 200
    assert [i["sessionName"] for i in body["items"]] == [ENTRIES[0]["sessionName"]]
    item = body["items"][0]
    assert item["url"] == (
        f"{fake[1]}/enter_cluster/ns/raycluster/rc/session_2026-01-02_03-04-05_000001_1"
    )
    assert [p for p, _ in fake[0].seen] == [CLUSTER, "/clusters"]
    kube_headers, history_headers = (h for _, h in fake[0].seen)
    assert kube_headers["Authorization"] == "Bearer t"  # the rights check: as the caller
    assert "Authorization" not in history_headers and "Cookie" not in history_headers


async def test_a_deleted_rayjob_s_sessions_by_owner(fake: tuple[Fake, str], server: str) -> None:
    status, body = await _get(f"{server}/dashboard/api/namespaces/ns/rayjobs/job/history")
    assert status == 200 and body["exists"] is False  # 404: the caller may get rayjobs there
    assert [(i["cluster"], i["sessionName"]) for i in body["items"]] == [
        ("job-raycluster-abc", "session_j")
    ]


async def test_a_caller_who_may_not_get_it_is_refused_and_the_history_server_not_asked(
    fake: tuple[Fake, str], server: str
) -> None:
    fake[0].objects[CLUSTER] = 403
    status, body = await _get(f"{server}/dashboard/api/namespaces/ns/rayclusters/rc/history")
    assert status == 403 and body["code"] == 403
    assert [p for p, _ in fake[0].seen] == [CLUSTER]
    status, _ = await _get(f"{server}/dashboard/api/namespaces/ns/rayclusters/rc/history", None)
    assert status == 401


async def test_an_oversized_listing_is_a_502_not_a_buffered_answer(
    fake: tuple[Fake, str], server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_module, "MAX_LISTING", 1000)
    fake[0].listing = json.dumps(ENTRIES * 50).encode()
    status, body = await _get(f"{server}/dashboard/api/namespaces/ns/rayclusters/rc/history")
    assert status == 502 and "history server" in body["message"]


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("ns/rayclusters/../history", 400),
        ("../rayclusters/rc", 400),
        ("ns/rayclusters/a%0D%0AX:%201", 400),
        ("ns/secrets/s", 404),
    ],
)
async def test_hostile_names_are_refused_before_anything_is_sent(
    fake: tuple[Fake, str], server: str, path: str, status: int
) -> None:
    url = f"{server}/dashboard/api/namespaces/{path}/history"
    assert (await _get(url))[0] == status
    assert fake[0].seen == []


async def test_without_the_flag_there_is_no_route_and_no_history_section(
    fake: tuple[Fake, str],
) -> None:
    runner, upstream, url = await _server(fake[1], "")
    try:
        status, _ = await _get(f"{url}/dashboard/api/namespaces/ns/rayclusters/rc/history")
        assert status == 404 and fake[0].seen == []
        assert (await _get(f"{url}/dashboard/config.json"))[1]["historyServer"] is False
    finally:
        await runner.cleanup()
        await upstream.close()
    runner, upstream, url = await _server(fake[1], fake[1])
    try:
        assert (await _get(f"{url}/dashboard/config.json"))[1]["historyServer"] is True
    finally:
        await runner.cleanup()
        await upstream.close()
