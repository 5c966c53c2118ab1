"""The live proxy stays inside the dashboard's read-only subtree: a path that would climb out
of the apiserver's service proxy (``..``, encoded or not, an encoded ``/`` or ``\\``) is a 400
and nothing reaches upstream; a dashboard path arrives byte for byte; a direct dial reads the
head Service through the API and refuses an ``ExternalName``; with the Kubernetes login the
caller must be allowed ``get services/proxy`` on the head Service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kuberay.historyserver.server.identity import LOGIN_USER, User
from kuberay.historyserver.server.live import LiveClusters
from kuberay.historyserver.server.live_access import PROXY_ACCESS_TTL, ProxyAccess
from kuberay.historyserver.server.live_proxy import LiveProxy
from tests.unit.historyserver.server.live_fakes import (
    HEAD_SVC,
    LIVE_COOKIES,
    NS,
    FakeKube,
    get_raw,
    history_server,
    raycluster,
    service,
    upstream,
)

PROXY_PREFIX = f"/api/v1/namespaces/{NS}/services/{HEAD_SVC}:dashboard/proxy"

ESCAPES = [
    "/../../../../api/v1/namespaces/kube-system/secrets/x",
    "/api/../../../../../api/v1/namespaces/kube-system/secrets/x",
    "/%2e%2e/%2E%2E/%2e%2e/%2e%2e/api/v1/namespaces/kube-system/secrets/x",
    "/api/.%2e/.%2e/.%2e/.%2e/.%2e/api/v1/secrets",
    "/api/..%2f..%2f..%2f..%2fapi/v1/secrets",
    "/api%2f..%2f..%2f..%2f..%2fapi/v1/secrets",
    "/api/v0%2Flogs",
    "/api/%5c..%5c..%5csecrets",
    "/api/\\../secrets",
    "/api/%252e%252e/secrets",
    "/./api/jobs/",
    "/api//jobs/",
]


def _proxy(kube: FakeKube, *, via_apiserver: str = "", **kwargs: Any) -> LiveProxy:
    live = LiveClusters(kube)
    if via_apiserver:
        return LiveProxy(live, use_kubernetes_proxy=True, apiserver=via_apiserver, **kwargs)
    return LiveProxy(live, **kwargs)


@pytest.mark.parametrize("raw", ESCAPES)
async def test_a_path_leaving_the_service_proxy_is_refused_and_never_sent(
    raw: str, tmp_path: Path
) -> None:
    async with upstream() as up:
        kube = FakeKube({("RayCluster", "rc"): raycluster(8265)})
        async with history_server(tmp_path, _proxy(kube, via_apiserver=up.url)) as url:
            status, body = await get_raw(url, raw)
    assert status == 400, (raw, body)
    assert "refusing to forward" in body["msg"]
    assert up.lines == []


@pytest.mark.parametrize(
    "raw", ["/memory_profile?pid=1", "/worker/traceback?pid=1", "/api/actors/kill?x=1"]
)
async def test_a_path_outside_the_dashboard_pages_is_refused(raw: str, tmp_path: Path) -> None:
    async with upstream() as up:
        kube = FakeKube({("RayCluster", "rc"): raycluster(8265)})
        async with history_server(tmp_path, _proxy(kube, via_apiserver=up.url)) as url:
            status, body = await get_raw(url, raw)
    assert status == 403, body
    assert up.lines == []


async def test_metrics_are_the_history_servers_own_never_the_clusters(tmp_path: Path) -> None:
    async with upstream() as up:
        kube = FakeKube({("RayCluster", "rc"): raycluster(8265)})
        async with (
            history_server(tmp_path, _proxy(kube, via_apiserver=up.url)) as url,
            aiohttp.ClientSession() as http,
            http.get(
                f"{url}/metrics",
                headers={"Cookie": "; ".join(f"{k}={v}" for k, v in LIVE_COOKIES.items())},
            ) as resp,
        ):
            status, text = resp.status, await resp.text()
    assert status == 200 and "kuberay_history_server_event_files_skipped_total" in text
    assert up.lines == []


DASHBOARD_PATHS = [
    "/api/v0/tasks?detail=1&filter_keys=job_id&filter_predicates=%3D&filter_values=02000000",
    "/api/v0/logs/file?node_id=ab&filename=worker-%7E1.out&lines=1000",
    "/nodes?view=summary",
    "/logical/actors/4f7a",
    "/static/js/main.9a8b.js",
    "/",
]


async def test_dashboard_paths_arrive_byte_for_byte_through_the_apiserver(
    tmp_path: Path,
) -> None:
    async with upstream() as up:
        kube = FakeKube({("RayCluster", "rc"): raycluster(8265)})
        async with history_server(tmp_path, _proxy(kube, via_apiserver=up.url)) as url:
            for raw in DASHBOARD_PATHS:
                assert (await get_raw(url, raw))[0] == 200, raw
    # percent-escapes stay as sent (``%7E`` is not re-quoted to ``~``), nothing is dropped
    assert up.lines == [f"GET {PROXY_PREFIX}{raw} HTTP/1.1" for raw in DASHBOARD_PATHS]


async def test_direct_mode_dials_the_cluster_ip_read_through_the_api(tmp_path: Path) -> None:
    async with upstream() as up:
        svc = service(
            {
                "type": "ClusterIP",
                "clusterIP": "127.0.0.1",
                "ports": [{"name": "dashboard", "port": up.port, "targetPort": 8265}],
            }
        )
        kube = FakeKube({("RayCluster", "rc"): raycluster(8265), ("Service", HEAD_SVC): svc})
        async with history_server(tmp_path, _proxy(kube)) as url:
            status, _ = await get_raw(url, DASHBOARD_PATHS[1])
    assert status == 200
    assert up.lines == [f"GET {DASHBOARD_PATHS[1]} HTTP/1.1"]
    assert ("get", ("Service", NS, HEAD_SVC)) in kube.calls


async def test_direct_mode_dials_a_ready_endpoint_of_a_headless_service(tmp_path: Path) -> None:
    async with upstream() as up:
        svc = service({"clusterIP": "None", "ports": [{"name": "dashboard", "port": 8265}]})
        kube = FakeKube({("RayCluster", "rc"): raycluster(up.port), ("Service", HEAD_SVC): svc})
        kube.slices = [
            {
                "ports": [{"name": "dashboard", "port": up.port}],
                "endpoints": [
                    {"addresses": ["10.9.9.9"], "conditions": {"ready": False}},
                    {"addresses": ["127.0.0.1"], "conditions": {"ready": True}},
                ],
            }
        ]
        async with history_server(tmp_path, _proxy(kube)) as url:
            status, _ = await get_raw(url, "/api/jobs/")
    assert status == 200
    assert up.lines == ["GET /api/jobs/ HTTP/1.1"]


async def test_an_external_name_head_service_is_refused(tmp_path: Path) -> None:
    async with upstream() as up:
        svc = service({"type": "ExternalName", "externalName": "127.0.0.1"})
        kube = FakeKube({("RayCluster", "rc"): raycluster(up.port), ("Service", HEAD_SVC): svc})
        async with history_server(tmp_path, _proxy(kube)) as url:
            status, body = await get_raw(url, "/api/jobs/")
    assert status == 502
    assert "ExternalName" in body["msg"] and HEAD_SVC in body["msg"]
    assert up.lines == []


def _as_user(user: User) -> Callable[..., Awaitable[web.StreamResponse]]:
    """What the login middleware does for an accepted token: names the caller."""

    @web.middleware
    async def login(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        request[LOGIN_USER] = user
        return await handler(request)

    return login


@pytest.mark.parametrize("via_apiserver", [True, False])
async def test_a_caller_without_services_proxy_is_refused(
    via_apiserver: bool, tmp_path: Path
) -> None:
    alice = User("alice", uid="u1", groups=("devs", "system:authenticated"))
    clock = [0.0]
    allowed = {"bob"}
    async with upstream() as up:
        svc = service({"clusterIP": "127.0.0.1", "ports": [{"name": "dashboard", "port": up.port}]})
        kube = FakeKube(
            {("RayCluster", "rc"): raycluster(8265), ("Service", HEAD_SVC): svc},
            allow=lambda body: body["spec"]["user"] in allowed,
        )
        access = ProxyAccess(kube, clock=lambda: clock[0])
        proxy = _proxy(kube, via_apiserver=up.url if via_apiserver else "", access=access)
        async with history_server(tmp_path, proxy, (_as_user(alice),)) as url:
            status, body = await get_raw(url, "/api/jobs/")
            assert status == 403, body
            assert "services/proxy" in body["msg"]
            assert up.lines == []
            allowed.add("alice")  # still denied while the answer is kept
            assert (await get_raw(url, "/api/jobs/"))[0] == 403
            clock[0] += PROXY_ACCESS_TTL + 0.1
            assert (await get_raw(url, "/api/jobs/"))[0] == 200
    reviews = [body for kind, body in kube.calls if kind == "request"]
    assert len(reviews) == 2
    assert reviews[0]["kind"] == "SubjectAccessReview"
    assert reviews[0]["spec"] == {
        "user": "alice",
        "uid": "u1",
        "groups": ["devs", "system:authenticated"],
        "resourceAttributes": {
            "namespace": NS,
            "verb": "get",
            "group": "",
            "resource": "services",
            "subresource": "proxy",
            "name": HEAD_SVC,
        },
    }
    assert len(up.lines) == 1
