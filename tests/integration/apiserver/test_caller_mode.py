"""``--auth-mode=caller`` on the real apiserver: each request acts as its caller, so RBAC
applies per caller; ``service-account`` acts as the server. Watches stream; hostile paths
are refused before anything is sent."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

import aiohttp
import pytest
from yarl import URL

from kuberay.apiserver.options import SERVICE_ACCOUNT
from kuberay.kube import Client

from .bodies import raycluster
from .conftest import StartServer, grant, service_account_token

pytestmark = pytest.mark.usefixtures("crds_installed")

READ_CLUSTERS = [
    {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": ["get", "list", "watch"]}
]


@pytest.fixture
async def other_namespace(kclient: Client) -> AsyncIterator[str]:
    name = f"t-{uuid.uuid4().hex[:8]}"
    await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        await kclient.delete("v1", "Namespace", name)


async def _status(http: aiohttp.ClientSession, url: str, token: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http.get(url, headers=headers) as resp:
        await resp.read()
        return resp.status


async def test_rbac_applies_to_each_caller(
    start_apiserver: StartServer, kclient: Client, namespace: str, other_namespace: str
) -> None:
    reader = await service_account_token(kclient, namespace, "reader")
    nobody = await service_account_token(kclient, namespace, "nobody")
    await grant(kclient, namespace, "reader", READ_CLUSTERS)
    await kclient.create(raycluster("c", namespace))
    url = await start_apiserver()
    mine = f"{url}/apis/ray.io/v1/namespaces/{namespace}/rayclusters"
    theirs = f"{url}/apis/ray.io/v1/namespaces/{other_namespace}/rayclusters"
    async with aiohttp.ClientSession() as http:
        assert await _status(http, mine, reader) == 200
        assert await _status(http, f"{mine}/c", reader) == 200
        # the server's kubeconfig presents cluster-admin's client certificate: were it on
        # the callers' connections, these would be 200
        assert await _status(http, mine, nobody) == 403
        assert await _status(http, theirs, reader) == 403
        assert await _status(http, mine, "not-a-token") == 401  # refused by the apiserver
        async with http.post(mine, json=raycluster("d", namespace), headers={}) as resp:
            assert resp.status == 401
            assert resp.headers["WWW-Authenticate"].startswith("Bearer")
            assert (await resp.json())["reason"] == "Unauthorized"
        # the probes and the counts need no credentials
        assert await _status(http, f"{url}/healthz") == 200
        async with http.get(f"{url}/metrics") as resp:
            text = await resp.text()
        assert 'kuberay_apiserver_requests_total{code="403",method="GET",route="ray"}' in text
        # the Service check is made as the caller, who may not read Services
        async with http.get(
            f"{url}/api/v1/namespaces/{namespace}/services/head/proxy/",
            headers={"Authorization": f"Bearer {reader}"},
        ) as resp:
            assert resp.status == 403
    listed = await kclient.list("ray.io/v1", "RayCluster", namespace)
    assert [c["metadata"]["name"] for c in listed["items"]] == ["c"]  # the 401 POST made none


async def test_service_account_mode_acts_as_the_server(
    start_apiserver: StartServer, kclient: Client, namespace: str
) -> None:
    nobody = await service_account_token(kclient, namespace, "nobody")
    await kclient.create(raycluster("c", namespace))
    url = await start_apiserver(auth_mode=SERVICE_ACCOUNT)
    mine = f"{url}/apis/ray.io/v1/namespaces/{namespace}/rayclusters/c"
    async with aiohttp.ClientSession() as http:
        assert await _status(http, mine) == 200
        # a caller's own token is not what goes upstream in this mode
        assert await _status(http, mine, nobody) == 200


async def test_a_watch_streams_through_the_proxy(
    start_apiserver: StartServer, kclient: Client, namespace: str
) -> None:
    reader = await service_account_token(kclient, namespace, "reader")
    await grant(kclient, namespace, "reader", READ_CLUSTERS)
    url = await start_apiserver()
    watch = f"{url}/apis/ray.io/v1/namespaces/{namespace}/rayclusters?watch=true"
    headers = {"Authorization": f"Bearer {reader}"}
    async with (
        aiohttp.ClientSession(headers=headers) as http,
        http.get(watch, timeout=aiohttp.ClientTimeout(total=60)) as resp,
    ):
        assert resp.status == 200
        for name in ("first", "second"):
            await kclient.create(raycluster(name, namespace, worker=False))
            # each event arrives while the watch stays open (the answer never ends)
            line = await asyncio.wait_for(resp.content.readline(), 10)
            event = json.loads(line)
            assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", name)


@pytest.mark.parametrize(
    "path",
    [
        "/apis/ray.io/v1/namespaces/{ns}/rayclusters/../../../../api/v1/secrets",
        "/apis/ray.io/v1/namespaces/{ns}/rayclusters/%2e%2e/x",
        "/apis/ray.io/v1/namespaces/{ns}%2Frayclusters",
        "/api/v1/namespaces/{ns}/services/head/proxy/%2F..%2F..%2Fsecrets",
        "/apis/ray.io/v1/namespaces/{ns}/rayclusters/a%0d%0aX-Injected:%201",
        "/apis/ray.io/v1/namespaces/{ns}/rayclusters//x",
    ],
)
async def test_hostile_paths_are_refused_before_anything_is_sent(
    start_apiserver: StartServer, namespace: str, path: str
) -> None:
    url = await start_apiserver(auth_mode=SERVICE_ACCOUNT)
    async with aiohttp.ClientSession() as http:
        target = URL(url + path.format(ns=namespace), encoded=True)
        async with http.get(target) as resp:
            assert resp.status == 400
            text = await resp.text()
    assert text.startswith("invalid path: ")
    assert "secrets" not in text and "Injected" not in text
