"""The API server on real Ray (upstream's ``apiserver/test/e2e/apiserversdk`` behaviour): a
caller with a Role creates a RayCluster through it, reaches the real Ray dashboard of that
cluster through its KubeRay Service proxy, lists the cluster's Events through the events
route, and deletes it. The server runs in this process in caller mode with the real
cluster's admin kubeconfig, which the caller's requests never use."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from kuberay.apiserver.options import ApiServerOptions
from kuberay.apiserver.upstream import Upstream
from kuberay.kube import Client
from kuberay.kube.kubeconfig import load
from tests.apiserver_serving import api_server
from tests.e2e.harness import OperatorProcess, cluster_pods, node_type, pod_ready
from tests.e2e.realcluster import RealCluster, diagnose_namespace, wait_for
from tests.e2e.test_real_node import real_operator  # noqa: F401  (module fixture)
from tests.integration.apiserver.conftest import grant, service_account_token

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")

RAY_IMAGE = "rayproject/ray:2.52.0"  # built locally by hack/release/images.py
USER_RULES = [
    {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": ["*"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["services", "services/proxy"], "verbs": ["get"]},
]


@pytest.fixture
async def apiserver_url(real_cluster: RealCluster) -> AsyncIterator[str]:
    upstream = Upstream(load(str(real_cluster.kubeconfig)))
    options = ApiServerOptions(http_host="127.0.0.1", http_port=0)
    async with api_server(options, upstream, wired=True) as url:
        yield url


def head_only(name: str, ns: str) -> dict[str, Any]:
    resources = {
        "limits": {"cpu": "1", "memory": "2Gi"},
        "requests": {"cpu": "500m", "memory": "1Gi"},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "rayVersion": "2.52.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "ray-head", "image": RAY_IMAGE, "resources": resources}
                        ]
                    }
                },
            },
        },
    }


async def test_a_caller_creates_a_cluster_and_reaches_its_dashboard_through_the_server(
    real_cluster: RealCluster,
    real_admin: Client,
    real_operator: OperatorProcess,  # noqa: F811
    rns: str,
    apiserver_url: str,
) -> None:
    token = await service_account_token(real_admin, rns, "ray-user")
    await grant(real_admin, rns, "ray-user", USER_RULES)
    clusters = f"{apiserver_url}/apis/ray.io/v1/namespaces/{rns}/rayclusters"
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as http:
        async with http.post(clusters, json=head_only("via-api", rns)) as resp:
            assert resp.status == 201, await resp.text()

        async def head_ready() -> bool:
            pods = await cluster_pods(real_admin, rns, "via-api")
            return any(node_type(p) == "head" and pod_ready(p) for p in pods)

        async def explain() -> str:
            return await diagnose_namespace(real_admin, real_cluster, rns, "RayCluster", "via-api")

        await wait_for("the head pod ready", head_ready, 300, explain)

        dashboard = (
            f"{apiserver_url}/api/v1/namespaces/{rns}/services/"
            "via-api-head-svc:dashboard/proxy/api/version"
        )

        async def dashboard_answers() -> bool:
            async with http.get(dashboard) as resp:
                return resp.status == 200 and "ray_version" in await resp.text()

        await wait_for("Ray's dashboard through the Service proxy", dashboard_answers, 120, explain)
        async with http.get(dashboard) as resp:
            assert (await resp.json())["ray_version"] == "2.52.0"

        events = f"{apiserver_url}/apis/events.k8s.io/v1/namespaces/{rns}/events"
        async with http.get(events) as resp:
            assert resp.status == 200
            items = (await resp.json())["items"]
        assert any(e["regarding"]["name"] == "via-api" for e in items), items
        assert all(e["regarding"]["apiVersion"] == "ray.io/v1" for e in items)

        async with http.delete(f"{clusters}/via-api") as resp:
            assert resp.status == 200
