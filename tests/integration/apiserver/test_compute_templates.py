"""Compute templates through their V1 routes on the real apiserver: the ConfigMap is
KubeRay's, and the template reads back, lists, applies and deletes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kuberay.apiserver.kube_calls import KubeAnswer
from kuberay.apiserver.templates import add_routes, rewrite_body, template_fetcher
from kuberay.kube import Client
from kuberay.kube.errors import ApiError

VERBS = {"GET": "get", "POST": "create", "PUT": "update", "DELETE": "delete"}


class ClientCall:
    """A KubeCall over kuberay's client (the test's stand-in for the server's own): refusals
    become answers carrying the apiserver's Status."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def __call__(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
    ) -> KubeAnswer:
        try:
            result = await self.client.request(
                method, path, verb=VERBS[method], params=dict(params or {}), body=body
            )
        except ApiError as exc:
            refusal = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "message": exc.message,
                "reason": exc.reason,
                "code": exc.status,
            }
            return KubeAnswer(exc.status, json.dumps(refusal).encode())
        return KubeAnswer(200, json.dumps(result).encode())


TEMPLATE = {
    "name": "gpu-small",
    "cpu": 2,
    "memory": 4,
    "gpu": 1,
    "extendedResources": {"custom.io/special": 2},
    "tolerations": [
        {"key": "ray.io/node-type", "operator": "Equal", "value": "worker", "effect": "NoSchedule"}
    ],
}


async def test_template_lifecycle_through_the_routes(kclient: Client, namespace: str) -> None:
    call = ClientCall(kclient)
    app = web.Application()
    add_routes(app.router, lambda _request: call)
    base = f"/apis/v1/namespaces/{namespace}/compute_templates"
    expected = {**TEMPLATE, "namespace": namespace, "memoryUnit": "Gi"}
    async with TestClient(TestServer(app, host="127.0.0.1")) as http:
        resp = await http.post(base, json={**TEMPLATE, "namespace": namespace})
        assert (resp.status, await resp.json()) == (200, expected)
        resp = await http.post(base, json={**TEMPLATE, "namespace": namespace})
        assert resp.status == 409

        configmap = await kclient.get("v1", "ConfigMap", "gpu-small", namespace)
        assert configmap["metadata"]["labels"] == {
            "ray.io/config-type": "compute-template",
            "ray.io/compute-template": "gpu-small",
        }
        assert configmap["data"] == {
            "name": "gpu-small",
            "namespace": namespace,
            "cpu": "2",
            "memory": "4",
            "memory_unit": "Gi",
            "gpu": "1",
            "gpu_accelerator": "",
            "extended_resources": '{"custom.io/special":2}',
            "tolerations": '[{"key":"ray.io/node-type","operator":"Equal","value":"worker",'
            '"effect":"NoSchedule"}]',
        }

        resp = await http.get(f"{base}/gpu-small")
        assert (resp.status, await resp.json()) == (200, expected)
        resp = await http.get(base)
        assert await resp.json() == {"computeTemplates": [expected]}
        resp = await http.get("/apis/v1/compute_templates")
        assert expected in (await resp.json())["computeTemplates"]

        cluster = {
            "kind": "RayCluster",
            "spec": {
                "headGroupSpec": {
                    "computeTemplate": "gpu-small",
                    "template": {"spec": {"containers": [{"name": "ray-head"}]}},
                }
            },
        }
        fetch = template_fetcher(call, namespace)
        out = json.loads(
            await rewrite_body(
                "RayCluster", "application/json", json.dumps(cluster).encode(), fetch
            )
        )
        head = out["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
        assert head["resources"]["limits"] == {
            "cpu": "2",
            "memory": "4Gi",
            "nvidia.com/gpu": 1,
            "custom.io/special": 2,
        }

        resp = await http.delete(f"{base}/gpu-small")
        assert (resp.status, await resp.json()) == (200, {})
        resp = await http.get(f"{base}/gpu-small")
        assert resp.status == 404 and (await resp.json())["code"] == 5
        resp = await http.get(base)
        assert await resp.json() == {}
        assert await fetch("gpu-small") is None
