"""The V1 compute-template routes' answers, over a scripted kube-apiserver."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kuberay.apiserver.templates import add_routes
from kuberay.apiserver.templates.model import ComputeTemplate
from tests.unit.apiserver.templates.fakes import FakeCall, answer, status

BASE = "/apis/v1/namespaces/ns/compute_templates"
CM = "/api/v1/namespaces/ns/configmaps"
TEMPLATE = ComputeTemplate(name="t", namespace="ns", cpu=2, memory=4)


@pytest.fixture
def call() -> FakeCall:
    return FakeCall({})


@pytest.fixture
async def client(call: FakeCall) -> AsyncIterator[TestClient[Any, Any]]:
    app = web.Application()
    add_routes(app.router, lambda _request: call)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        yield c


async def test_invalid_template_is_kuberays_400_and_nothing_is_sent(
    client: TestClient[Any, Any], call: FakeCall
) -> None:
    resp = await client.post(BASE, json={"name": "t", "namespace": "ns", "cpu": 0, "memory": 4})
    message = "Cpu amount is zero. Please specify a valid value."
    assert resp.status == 400
    assert await resp.json() == {
        "code": 3,
        "message": f"{message}: Validate compute template runtime request failed.: "
        f"Invalid input error: {message}",
    }
    resp = await client.post(BASE, data=b'{"cpu": "two"}')
    assert resp.status == 400 and "field cpu" in (await resp.json())["message"]
    assert call.calls == []


async def test_create_conflict_and_refusal(client: TestClient[Any, Any], call: FakeCall) -> None:
    call.script[("POST", CM)] = [status(409, "AlreadyExists"), status(403, "Forbidden")]
    resp = await client.post(BASE, json=TEMPLATE.to_json())
    message = "Compute template with name t already exists in namespace ns"
    assert resp.status == 409
    assert await resp.json() == {
        "code": 6,
        "message": f"{message}: Create compute template failed.: Already exist error: {message}",
    }
    resp = await client.post(BASE, json=TEMPLATE.to_json())
    assert resp.status == 403 and (await resp.json())["reason"] == "Forbidden"


async def test_a_configmap_that_is_no_template_is_not_found(
    client: TestClient[Any, Any], call: FakeCall
) -> None:
    plain = {"metadata": {"name": "t", "namespace": "ns", "uid": "u"}, "data": {"cpu": "1"}}
    call.script[("GET", f"{CM}/t")] = answer(200, plain)
    for method in ("GET", "DELETE"):
        resp = await client.request(method, f"{BASE}/t")
        assert resp.status == 404
        body = await resp.json()
        assert body["code"] == 5 and body["message"].startswith("Compute template t not found: ")
    assert [c[0] for c in call.calls] == ["GET", "GET"]


async def test_delete_carries_the_uid_it_checked(
    client: TestClient[Any, Any], call: FakeCall
) -> None:
    configmap = TEMPLATE.to_configmap()
    configmap["metadata"]["uid"] = "uid-1"
    call.script[("GET", f"{CM}/t")] = answer(200, configmap)
    call.script[("DELETE", f"{CM}/t")] = answer(200, {"kind": "Status", "status": "Success"})
    resp = await client.delete(f"{BASE}/t")
    assert (resp.status, await resp.json()) == (200, {})
    assert call.calls[-1][2]["preconditions"] == {"uid": "uid-1"}


async def test_lists_follow_continue_and_an_empty_list_is_an_empty_object(
    client: TestClient[Any, Any], call: FakeCall
) -> None:
    other = ComputeTemplate(name="u", namespace="other", cpu=1, memory=1).to_configmap()
    call.script[("GET", "/api/v1/configmaps")] = [
        answer(200, {"items": [TEMPLATE.to_configmap()], "metadata": {"continue": "c1"}}),
        answer(200, {"items": [other], "metadata": {}}),
    ]
    call.script[("GET", CM)] = answer(200, {"items": [], "metadata": {}})
    resp = await client.get("/apis/v1/compute_templates")
    assert [t["name"] for t in (await resp.json())["computeTemplates"]] == ["t", "u"]
    assert call.calls[1][3] == {
        "labelSelector": "ray.io/config-type=compute-template",
        "limit": "500",
        "continue": "c1",
    }
    resp = await client.get(BASE)
    assert (resp.status, await resp.json()) == (200, {})


async def test_a_name_that_is_no_path_segment_is_refused_before_a_call(
    client: TestClient[Any, Any], call: FakeCall
) -> None:
    resp = await client.get(f"{BASE}/a%0D%0Ab")
    assert resp.status == 400
    assert "invalid name" in (await resp.json())["message"]
    assert call.calls == []
