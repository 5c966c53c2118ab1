"""Trust boundaries part 1, item 2 (Names): a RayCluster whose head Service name or
``authOptions.secretName`` cannot name the object it names gets the ``InvalidSpec`` condition
and an ``InvalidRayClusterSpec`` Warning naming the field, and no child object; the operator
keeps serving other clusters and never rewrites the user's spec."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import (
    condition,
    pods_of,
    raycluster,
    wait_event_reasons,
    wait_status,
)

HOSTILE = "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api/v1/namespaces/kube-system/configmaps/c HTTP/1.1"


def _head_service(body: dict[str, Any]) -> str:
    body["spec"]["headGroupSpec"]["headService"] = {"metadata": {"name": HOSTILE}}
    return "spec.headGroupSpec.headService.metadata.name"


def _secret_name(body: dict[str, Any]) -> str:
    body["spec"]["rayVersion"] = "2.52.0"
    body["spec"]["authOptions"] = {"mode": "token", "secretName": "../../configmaps/c"}
    return "spec.authOptions.secretName"


def _at(obj: Any, path: str) -> Any:
    for key in path.split("."):
        obj = obj[key]
    return obj


@pytest.mark.parametrize("mutate", [_head_service, _secret_name], ids=["headService", "secret"])
async def test_a_hostile_name_is_an_invalid_spec_with_no_children(
    operator: Operator, kclient: Client, namespace: str, mutate: Any
) -> None:
    body = raycluster("hostile", namespace, replicas=1)
    field = mutate(body)
    await kclient.create(body)

    def invalid(rc: dict[str, Any]) -> bool:
        cond = condition(rc, "InvalidSpec")
        return cond is not None and cond["status"] == "True"

    rc = await wait_status(kclient, namespace, "hostile", invalid, message="InvalidSpec")
    message = condition(rc, "InvalidSpec")["message"]  # type: ignore[index]
    assert field in message and "\r" not in message
    events = await wait_event_reasons(kclient, namespace, "hostile", {"InvalidRayClusterSpec"})
    notes = [e["message"] for e in events if e["reason"] == "InvalidRayClusterSpec"]
    assert any(field in n for n in notes), notes
    assert all(e["type"] == "Warning" for e in events if e["reason"] == "InvalidRayClusterSpec")

    assert await pods_of(kclient, namespace, "hostile") == []
    for kind in ("Service", "Secret"):
        items, _ = await kclient.list_all("v1", kind, namespace, label_selector="ray.io/cluster")
        assert items == [], kind
    live = await kclient.get("ray.io/v1", "RayCluster", "hostile", namespace)
    assert _at(live, field) == _at(body, field)  # the user's value, not rewritten

    await kclient.create(raycluster("fine", namespace, replicas=0))
    await eventually(
        lambda: pods_of(kclient, namespace, "fine", **{"ray.io/node-type": "head"}),
        timeout=60,
        message="head pod of a valid cluster created afterwards",
    )
