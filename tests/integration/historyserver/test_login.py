"""``--kubernetes-login`` on the real apiserver: callers show ServiceAccount tokens (made with
TokenRequest), the server checks them with TokenReview and sees only the namespaces where a
SubjectAccessReview lets them ``get`` RayClusters."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import aiohttp
import pytest

from kuberay.historyserver.layout import ClusterRef, Layout
from kuberay.historyserver.server.login import KubeLogin, add_routes, login_middleware
from kuberay.historyserver.storage.local import LocalStore
from kuberay.kube import Client
from tests.integration.historyserver.live_helpers import serve

SESSION = "session_2026-03-04_05-06-07_000008_9"


@pytest.fixture
async def other_namespace(kclient: Client) -> AsyncIterator[str]:
    name = f"t-{uuid.uuid4().hex[:8]}"
    await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        await kclient.delete("v1", "Namespace", name)


async def _service_account_token(kube: Client, namespace: str, name: str) -> str:
    await kube.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace},
        }
    )
    answer = await kube.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        verb="create",
        body={
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 600},
        },
    )
    return str(answer["status"]["token"])


async def _grant_raycluster_get(kube: Client, namespace: str, sa_namespace: str, sa: str) -> None:
    await kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "raycluster-reader", "namespace": namespace},
            "rules": [{"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": ["get"]}],
        }
    )
    await kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "raycluster-reader", "namespace": namespace},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "raycluster-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sa_namespace}],
        }
    )


def _session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def test_login_limits_callers_to_namespaces_they_may_read(
    kclient: Client, namespace: str, other_namespace: str, tmp_path: Path
) -> None:
    store = LocalStore(tmp_path / "store")
    for ns in (namespace, other_namespace):
        await store.put(Layout(ClusterRef(ns, "rc")).session_marker_key(SESSION), b"")
    reader = await _service_account_token(kclient, namespace, "reader")
    nobody = await _service_account_token(kclient, namespace, "nobody")
    await _grant_raycluster_get(kclient, namespace, namespace, "reader")

    login = KubeLogin(kclient)
    async with serve(
        tmp_path,
        middlewares=(login_middleware(login),),
        extra_routes=partial(add_routes, login=login),
    ) as url:
        mine = {namespace, other_namespace}

        async def listed(http: aiohttp.ClientSession, token: str | None) -> tuple[int, set[str]]:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            async with http.get(f"{url}/clusters", headers=headers) as resp:
                if resp.status != 200:
                    return resp.status, set()
                return 200, {c["namespace"] for c in await resp.json()} & mine

        async with _session() as http:
            async with http.get(f"{url}/readz") as resp:
                assert resp.status == 200
            async with http.get(f"{url}/metrics") as resp:  # Prometheus holds no user token
                assert resp.status == 200
                assert "kuberay_history_server_event_files_skipped_total" in await resp.text()
            assert await listed(http, None) == (401, set())
            async with http.get(f"{url}/clusters") as resp:
                assert resp.headers["WWW-Authenticate"].startswith("Bearer")
            async with http.get(f"{url}/select_cluster", headers={"Accept": "text/html"}) as r:
                assert r.url.path == "/login"  # a browser is sent to the login form
            assert await listed(http, "not-a-token") == (401, set())
            assert await listed(http, reader) == (200, {namespace})
            assert await listed(http, nobody) == (200, set())

            auth = {"Authorization": f"Bearer {reader}"}
            enter = f"{url}/enter_cluster/{{}}/raycluster/rc/{SESSION}"
            async with http.get(enter.format(other_namespace), headers=auth) as resp:
                assert resp.status == 403
                assert "may not get RayClusters" in (await resp.json())["msg"]
            async with http.get(enter.format(namespace), headers=auth) as resp:
                assert resp.status == 200
            async with http.get(f"{url}/api/jobs/", headers=auth) as resp:
                assert resp.status == 200
            # a cookie naming a namespace the caller may not read is refused
            forged = {
                **auth,
                "Cookie": f"cluster_namespace={other_namespace}; cluster_name=rc; "
                f"session_name={SESSION}",
            }
            bare = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
            async with bare, bare.get(f"{url}/api/jobs/", headers=forged) as resp:
                assert resp.status == 403
            async with http.get(
                enter.format(namespace), headers={"Authorization": f"Bearer {nobody}"}
            ) as resp:
                assert resp.status == 403

        async with _session() as browser:
            async with browser.post(f"{url}/login", json={"token": "wrong"}) as resp:
                assert resp.status == 401
            async with browser.post(f"{url}/login", json={"token": reader}) as resp:
                assert resp.status == 200
                assert (await resp.json())["user"] == f"system:serviceaccount:{namespace}:reader"
            assert await listed(browser, None) == (200, {namespace})  # the cookie alone
            async with browser.get(f"{url}/logout") as resp:
                assert resp.status == 200
            assert await listed(browser, None) == (401, set())
    # a page's burst of requests does not review the token each time
    assert login.reviews < 12
    await store.close()
