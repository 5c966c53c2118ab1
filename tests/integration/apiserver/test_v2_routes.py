"""KubeRay's V2 routes through the API server on the real apiserver (the behaviour of
upstream's ``apiserversdk/proxy_test.go``), as a caller with a Role."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from kuberay.apiserver.retry import RetryPolicy
from kuberay.kube import Client

from .bodies import raycluster, rayjob, rayservice
from .conftest import StartServer, grant, service_account_token

pytestmark = pytest.mark.usefixtures("crds_installed")

RAY_RULES = [
    {
        "apiGroups": ["ray.io"],
        "resources": ["rayclusters", "rayjobs", "rayservices"],
        "verbs": ["*"],
    },
    {"apiGroups": [""], "resources": ["services", "services/proxy"], "verbs": ["get"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
]
FAST = RetryPolicy(initial=0.01, max_backoff=0.02)


@pytest.fixture
async def editor(kclient: Client, namespace: str) -> str:
    token = await service_account_token(kclient, namespace, "editor")
    await grant(kclient, namespace, "editor", RAY_RULES)
    return token


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    ("plural", "make"),
    [("rayclusters", raycluster), ("rayjobs", rayjob), ("rayservices", rayservice)],
)
async def test_create_get_list_update_delete_through_the_proxy(
    start_apiserver: StartServer, namespace: str, editor: str, plural: str, make: object
) -> None:
    url = await start_apiserver()
    # a name past upstream's 41-character breaking point (#2169), at the label-value limit
    name = "n" * 47
    base = f"{url}/apis/ray.io/v1/namespaces/{namespace}/{plural}"
    body = make(name, namespace)  # type: ignore[operator]
    async with aiohttp.ClientSession(headers=_auth(editor)) as http:
        async with http.post(base, json=body) as resp:
            assert resp.status == 201, await resp.text()
        async with http.get(f"{base}/{name}") as resp:
            assert resp.status == 200
            got = await resp.json()
        assert got["metadata"]["name"] == name
        got["metadata"].setdefault("labels", {})["touched"] = "yes"
        async with http.put(f"{base}/{name}", json=got) as resp:
            assert resp.status == 200, await resp.text()
        async with http.get(base, params={"labelSelector": "touched=yes"}) as resp:
            assert [i["metadata"]["name"] for i in (await resp.json())["items"]] == [name]
        async with http.delete(f"{base}/{name}") as resp:
            assert resp.status == 200
        async with http.get(f"{base}/{name}") as resp:
            assert resp.status == 404
            assert (await resp.json())["reason"] == "NotFound"


async def test_long_lists_paginate_with_limit_and_continue(
    start_apiserver: StartServer, kclient: Client, namespace: str, editor: str
) -> None:
    for i in range(3):
        await kclient.create(raycluster(f"c{i}", namespace, worker=False))
    url = await start_apiserver()
    base = f"{url}/apis/ray.io/v1/namespaces/{namespace}/rayclusters"
    names: list[str] = []
    params = {"limit": "2"}
    async with aiohttp.ClientSession(headers=_auth(editor)) as http:
        while True:
            async with http.get(base, params=params) as resp:
                page = await resp.json()
            names += [i["metadata"]["name"] for i in page["items"]]
            if not page["metadata"].get("continue"):
                break
            params = {"limit": "2", "continue": page["metadata"]["continue"]}
    assert names == ["c0", "c1", "c2"]


def _core_event(namespace: str, api_version: str) -> dict[str, object]:
    """A core/v1 Event about RayCluster ``c`` whose involvedObject has ``api_version``."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"ev-{api_version.replace('/', '-') or 'none'}-"},
        "involvedObject": {
            "kind": "RayCluster",
            "namespace": namespace,
            "name": "c",
            "apiVersion": api_version,
        },
        "reason": "Testing",
        "message": "a test event",
        "type": "Normal",
        "source": {"component": "test"},
    }


async def test_events_route_answers_only_kuberay_events_and_only_get(
    start_apiserver: StartServer, kclient: Client, namespace: str, editor: str
) -> None:
    for api_version in ("ray.io/v1", ""):
        await kclient.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/events",
            verb="create",
            body=_core_event(namespace, api_version),
        )
    url = await start_apiserver()
    events = f"{url}/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    async with aiohttp.ClientSession(headers=_auth(editor)) as http:
        async with http.get(events) as resp:
            items = (await resp.json())["items"]
        assert [e["regarding"]["apiVersion"] for e in items] == ["ray.io/v1"]
        # the caller's own selector is kept beside the route's, never instead of it
        async with http.get(events, params={"fieldSelector": "regarding.apiVersion="}) as resp:
            assert (await resp.json())["items"] == []
        async with http.post(events, json={}) as resp:
            assert resp.status == 405
        # a Pod list (the caller may list Pods) is not a route of this server
        async with http.get(f"{url}/api/v1/namespaces/{namespace}/pods") as resp:
            assert resp.status == 404
            assert await resp.text() == "404 page not found\n"


async def test_events_route_streams_a_watch_of_kuberay_events_only(
    start_apiserver: StartServer, kclient: Client, namespace: str, editor: str
) -> None:
    url = await start_apiserver()
    events = f"{url}/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    async with aiohttp.ClientSession(headers=_auth(editor)) as http:
        async with http.get(events) as resp:
            version = (await resp.json())["metadata"]["resourceVersion"]
        params = {"watch": "true", "resourceVersion": version, "fieldSelector": "regarding.name=c"}
        async with http.get(events, params=params) as resp:
            assert resp.status == 200, await resp.text()
            # an Event about another group's object first, then one about a ray.io object:
            # the stream brings only the second (the route's selector holds for watches)
            for api_version in ("", "ray.io/v1"):
                await kclient.request(
                    "POST",
                    f"/api/v1/namespaces/{namespace}/events",
                    verb="create",
                    body=_core_event(namespace, api_version),
                )
            async with asyncio.timeout(10):
                line = await resp.content.readline()
        first = json.loads(line)
        assert first["type"] == "ADDED"
        assert first["object"]["regarding"]["apiVersion"] == "ray.io/v1"
        assert first["object"]["note"] == "a test event"


async def test_service_proxy_reaches_only_kuberay_services(
    start_apiserver: StartServer, kclient: Client, namespace: str, editor: str
) -> None:
    for name, labels in (("head-svc", {"app.kubernetes.io/name": "kuberay"}), ("other", {})):
        await kclient.create(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "spec": {"ports": [{"name": "dashboard", "port": 8265}]},
            }
        )
    url = await start_apiserver(policy=FAST)
    services = f"{url}/api/v1/namespaces/{namespace}/services"
    async with aiohttp.ClientSession(headers=_auth(editor)) as http:
        for path in ("head-svc/proxy", "head-svc/proxy/", "http:head-svc:8265/proxy/api/version"):
            async with http.get(f"{services}/{path}") as resp:
                # passed on: the kube-apiserver answers (no endpoints in a bare control
                # plane), with its Status, not this server's plain-text refusal
                assert resp.content_type == "application/json", (path, await resp.text())
                assert (await resp.json())["kind"] == "Status"
        async with http.get(f"{services}/other/proxy/") as resp:
            assert (resp.status, await resp.text()) == (404, "kuberay service not found\n")
        async with http.get(f"{services}/missing/proxy") as resp:
            assert (resp.status, await resp.text()) == (404, "kuberay service not found\n")
        async with http.get(f"{services}/a:b:c:d/proxy") as resp:
            assert (resp.status, await resp.text()) == (400, "invalid service format: a:b:c:d\n")
