"""``--enable-live-clusters`` on the real apiserver: live RayClusters are listed and entered,
their dashboard (a fake one on loopback; the server's resolver is pointed at 127.0.0.1, since
no Service can proxy to loopback) answers GET and HEAD with the token from the cluster's
Secret, never a client's credentials, and never anything but a read. Through the apiserver's
service proxy (``--use-kubernetes-proxy``) the apiserver's own answer comes back: this
apiserver has no endpoints for the Service, so it answers 503, and a client's bogus
``Authorization`` does not turn that into a 401."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from kuberay.historyserver.server.kube_access import bearer_headers
from kuberay.historyserver.server.live import LiveClusters
from kuberay.historyserver.server.live_proxy import LiveProxy
from kuberay.kube import Client
from tests.integration.historyserver.live_helpers import (
    create_head_service,
    create_live_cluster,
    create_token_secret,
    fake_dashboard,
    loopback_resolver,
    raycluster,
    serve,
)

pytestmark = pytest.mark.usefixtures("crds_installed")

TOKEN = "ray-token-from-the-secret"


def _session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def test_live_cluster_is_listed_entered_and_read_through_its_dashboard(
    kclient: Client, namespace: str, tmp_path: Path
) -> None:
    asked: list[str] = []
    async with fake_dashboard() as dash:
        await create_live_cluster(
            kclient,
            raycluster(namespace, "live-rc", dashboard_port=dash.port, auth={"mode": "token"}),
            head_service="live-rc-head-svc",
        )
        await create_token_secret(kclient, namespace, "live-rc", TOKEN)
        await create_head_service(kclient, namespace, "live-rc-head-svc")
        live = LiveClusters(kclient, auth_token_mode=True, list_ttl=0)
        proxy = LiveProxy(live, resolver=loopback_resolver(kclient, asked))
        async with serve(tmp_path, live=live, proxy=proxy) as url, _session() as http:
            async with http.get(f"{url}/clusters") as resp:
                listed = [c for c in await resp.json() if c["namespace"] == namespace]
            assert listed == [
                {
                    "name": "live-rc",
                    "namespace": namespace,
                    "sessionName": "live",
                    "createTime": listed[0]["createTime"],
                    "createTimeStamp": listed[0]["createTimeStamp"],
                    "ownerKind": "",
                    "ownerName": "",
                }
            ]
            assert listed[0]["createTimeStamp"] > 0

            async with http.get(f"{url}/enter_cluster/{namespace}/raycluster/live-rc") as resp:
                assert resp.status == 200
                assert (await resp.json())["session"] == "live"

            headers = {
                "Authorization": "Bearer the-users-kubernetes-token",
                "x-ray-authorization": "Bearer a-token-the-client-made-up",
                "Host": "evil.example.com",
            }
            async with http.get(f"{url}/api/jobs/?x=1", headers=headers) as resp:
                assert resp.status == 200
                assert await resp.json() == [{"job_id": "02000000", "status": "RUNNING"}]
                assert resp.headers["X-Ray"] == "live"
            async with http.head(f"{url}/api/jobs/") as resp:
                assert resp.status == 200
            for method in ("POST", "PUT", "DELETE", "PATCH"):
                async with http.request(method, f"{url}/api/jobs/", json={"entrypoint": "x"}) as r:
                    assert r.status == 405, method
                    assert r.headers["Allow"] == "GET, HEAD"

            # the server adds the token: Ray's UI is told it needs none
            async with http.get(f"{url}/api/authentication_mode") as resp:
                assert await resp.json() == {"authentication_mode": "disabled"}
            # the server's own routes stay its own while a live cluster is selected
            async with http.get(f"{url}/clusters") as resp:
                assert resp.status == 200 and isinstance(await resp.json(), list)
        await proxy.close()

    assert [(s.method, s.path_qs) for s in dash.seen] == [
        ("GET", "/api/jobs/?x=1"),
        ("HEAD", "/api/jobs/"),
    ]
    got = dash.seen[0].headers
    assert got["x-ray-authorization"] == f"Bearer {TOKEN}"
    assert "authorization" not in got and "cookie" not in got
    assert got["host"] == f"live-rc-head-svc.{namespace}.svc.cluster.local:{dash.port}"
    # the address came from the Service object (its cluster IP), not from DNS
    service = await kclient.get("v1", "Service", "live-rc-head-svc", namespace)
    assert set(asked) == {service["spec"]["clusterIP"]}


async def test_rayjob_cluster_is_found_by_its_labels_and_errors_are_named(
    kclient: Client, namespace: str, tmp_path: Path
) -> None:
    async with fake_dashboard() as dash:
        labels = {
            "ray.io/originated-from-cr-name": "my-job",
            "ray.io/originated-from-crd": "RayJob",
        }
        await create_live_cluster(
            kclient,
            raycluster(namespace, "my-job-x2b4c", dashboard_port=dash.port, labels=labels),
            head_service=None,  # the operator has not created the head Service yet
        )
        await create_live_cluster(
            kclient,
            raycluster(
                namespace,
                "k8s-auth",
                dashboard_port=dash.port,
                auth={"mode": "token", "enableK8sTokenAuth": True},
            ),
            head_service="k8s-auth-head-svc",
        )
        live = LiveClusters(kclient, auth_token_mode=True, list_ttl=0, target_ttl=0)
        await create_head_service(
            kclient,
            namespace,
            "k8s-auth-head-svc",
            type="ExternalName",
            externalName="dashboard.example.com",
        )
        proxy = LiveProxy(live, resolver=loopback_resolver(kclient, []))
        async with serve(tmp_path, live=live, proxy=proxy) as url, _session() as http:
            async with http.get(f"{url}/enter_cluster/{namespace}/rayjob/my-job") as resp:
                assert resp.status == 200
                body = await resp.json()
            assert (body["name"], body["session"]) == ("my-job-x2b4c", "live")
            cookies = {c.key: c.value for c in http.cookie_jar}
            assert (cookies["owner_kind"], cookies["owner_name"]) == ("rayjob", "my-job")
            async with http.get(f"{url}/api/jobs/") as resp:
                assert resp.status == 503
                assert "head service not ready" in (await resp.json())["msg"]

            async with http.get(f"{url}/enter_cluster/{namespace}/raycluster/k8s-auth/live") as r:
                assert r.status == 200
            async with http.get(f"{url}/api/jobs/") as resp:
                assert resp.status == 502
                assert "enableK8sTokenAuth" in (await resp.json())["msg"]

            # without token auth the ExternalName head Service is what stops the request
            live.auth_token_mode = False
            async with http.get(f"{url}/api/jobs/") as resp:
                assert resp.status == 502
                assert "ExternalName" in (await resp.json())["msg"]
            live.auth_token_mode = True

            async with http.get(f"{url}/enter_cluster/{namespace}/raycluster/gone/live") as r:
                assert r.status == 404
            # not live and nothing stored
            async with http.get(f"{url}/enter_cluster/{namespace}/rayservice/my-job") as r:
                assert r.status == 404
        await proxy.close()
    assert dash.seen == []


async def test_apiserver_service_proxy_answers_come_back(
    kclient: Client, namespace: str, tmp_path: Path
) -> None:
    await create_live_cluster(
        kclient,
        raycluster(namespace, "via-api", dashboard_port=8265),
        head_service="via-api-head-svc",
    )

    async def credentials() -> dict[str, str]:
        return dict(await bearer_headers(kclient))

    live = LiveClusters(kclient, list_ttl=0, target_ttl=0)
    proxy = LiveProxy(
        live,
        use_kubernetes_proxy=True,
        apiserver=kclient.host,
        apiserver_session=kclient.session,
        apiserver_credentials=credentials,
    )
    bogus = {"Authorization": "Bearer not-a-kubernetes-token"}
    async with serve(tmp_path, live=live, proxy=proxy) as url, _session() as http:
        async with http.get(f"{url}/enter_cluster/{namespace}/raycluster/via-api") as resp:
            assert resp.status == 200
        # no such Service yet: the apiserver's 404, passed through
        async with http.get(f"{url}/api/jobs/", headers=bogus) as resp:
            assert resp.status == 404
            assert "via-api-head-svc" in await resp.text()
        await kclient.create(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "via-api-head-svc", "namespace": namespace},
                "spec": {
                    "selector": {"ray.io/cluster": "via-api"},
                    "ports": [{"name": "dashboard", "port": 8265}],
                },
            }
        )
        # no endpoint controller runs here, and without an Endpoints object the apiserver
        # still answers that the service is not found (404)
        async with http.get(f"{url}/api/jobs/", headers=bogus) as resp:
            assert resp.status == 404
            assert "via-api-head-svc" in await resp.text()
        await kclient.create(
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {"name": "via-api-head-svc", "namespace": namespace},
                "subsets": [],
            }
        )
        # no ready endpoint: the apiserver says so with a 503
        async with http.get(f"{url}/api/jobs/", headers=bogus) as resp:
            assert resp.status == 503
            assert "no endpoints available" in await resp.text()
        async with http.post(f"{url}/api/jobs/", json={}) as resp:
            assert resp.status == 405
