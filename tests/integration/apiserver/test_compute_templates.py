"""Compute templates on the real apiserver, through the API server as a caller: the V1
routes (KubeRay's ConfigMap, read back, listed, deleted) and the V2 middleware applying a
template to a RayCluster, a RayJob and a RayService (upstream's e2e
``compute template on a cluster, a job and a service``)."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from kuberay.kube import Client

from .bodies import raycluster, rayjob, rayservice
from .conftest import StartServer, grant, service_account_token

pytestmark = pytest.mark.usefixtures("crds_installed")

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
RULES = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]},
    {
        "apiGroups": ["ray.io"],
        "resources": ["rayclusters", "rayjobs", "rayservices"],
        "verbs": ["*"],
    },
]


@pytest.fixture
async def caller(kclient: Client, namespace: str) -> dict[str, str]:
    token = await service_account_token(kclient, namespace, "templater")
    await grant(kclient, namespace, "templater", RULES)
    return {"Authorization": f"Bearer {token}"}


async def test_template_lifecycle_through_the_routes(
    start_apiserver: StartServer, kclient: Client, namespace: str, caller: dict[str, str]
) -> None:
    url = await start_apiserver()
    base = f"{url}/apis/v1/namespaces/{namespace}/compute_templates"
    expected = {**TEMPLATE, "namespace": namespace, "memoryUnit": "Gi"}
    async with aiohttp.ClientSession(headers=caller) as http:
        async with http.post(base, json={**TEMPLATE, "namespace": namespace}) as resp:
            assert (resp.status, await resp.json()) == (200, expected)
        async with http.post(base, json={**TEMPLATE, "namespace": namespace}) as resp:
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
        async with http.get(f"{base}/gpu-small") as resp:
            assert (resp.status, await resp.json()) == (200, expected)
        async with http.get(base) as resp:
            assert await resp.json() == {"computeTemplates": [expected]}
        async with http.delete(f"{base}/gpu-small") as resp:
            assert (resp.status, await resp.json()) == (200, {})
        async with http.get(f"{base}/gpu-small") as resp:
            assert resp.status == 404 and (await resp.json())["code"] == 5
        # without a token: refused before any ConfigMap is read
        async with aiohttp.ClientSession() as anonymous, anonymous.get(base) as resp:
            assert resp.status == 401


def _head(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    spec = obj["spec"]
    cluster = {
        "RayCluster": spec,
        "RayJob": spec.get("rayClusterSpec"),
        "RayService": spec.get("rayClusterConfig"),
    }[kind]
    return cluster["headGroupSpec"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("plural", "kind", "make"),
    [
        ("rayclusters", "RayCluster", raycluster),
        ("rayjobs", "RayJob", rayjob),
        ("rayservices", "RayService", rayservice),
    ],
)
async def test_a_template_shapes_what_is_created(
    start_apiserver: StartServer,
    kclient: Client,
    namespace: str,
    caller: dict[str, str],
    plural: str,
    kind: str,
    make: Any,
) -> None:
    url = await start_apiserver()
    async with aiohttp.ClientSession(headers=caller) as http:
        async with http.post(
            f"{url}/apis/v1/namespaces/{namespace}/compute_templates",
            json={**TEMPLATE, "namespace": namespace},
        ) as resp:
            assert resp.status == 200
        body = make("shaped", namespace)
        _head(body, kind)["computeTemplate"] = "gpu-small"
        objects = f"{url}/apis/ray.io/v1/namespaces/{namespace}/{plural}"
        async with http.post(objects, json=body) as resp:
            assert resp.status == 201, await resp.text()
        missing = make("missing", namespace)
        _head(missing, kind)["computeTemplate"] = "no-such-template"
        async with http.post(objects, json=missing) as resp:
            assert resp.status == 422
            assert "no-such-template" in await resp.text()
    stored = await kclient.get("ray.io/v1", kind, "shaped", namespace)
    pod = _head(stored, kind)["template"]
    assert pod["metadata"]["annotations"]["ray.io/compute-template"] == "gpu-small"
    container = pod["spec"]["containers"][0]
    # quantities as the apiserver keeps them (upstream writes GPUs and extended resources
    # as numbers)
    assert {k: str(v) for k, v in container["resources"]["limits"].items()} == {
        "cpu": "2",
        "memory": "4Gi",
        "nvidia.com/gpu": "1",
        "custom.io/special": "2",
    }
    assert container["resources"]["requests"] == container["resources"]["limits"]
    assert pod["spec"]["tolerations"] == TEMPLATE["tolerations"]
    with pytest.raises(Exception, match="not found"):
        await kclient.get("ray.io/v1", kind, "missing", namespace)
