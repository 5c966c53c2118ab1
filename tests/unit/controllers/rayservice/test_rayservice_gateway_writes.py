"""The incremental upgrade's Gateway and HTTPRoute writes (``gateway.apply_*``) without an
apiserver: what the apiserver or a gateway controller defaults is no difference (no request),
a changed class or weight is one update (PUT, never a patch: KubeRay's role may not patch
Gateway API objects) of the live object with the desired spec, at the live
``resourceVersion``, and a write that lost a race is a quiet requeue. (The real apiserver's
side is ``tests/integration/rayservice/test_rayservice_gateway_objects.py``.)"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuberay.controllers.rayservice.gateway import apply_gateway, apply_http_route
from kuberay.controllers.rayservice.gateway_builder import build_gateway, build_http_route
from kuberay.kube import AlreadyExists, Conflict
from kuberay.reconcile import RequeueError

RS: dict[str, Any] = {
    "apiVersion": "ray.io/v1",
    "kind": "RayService",
    "metadata": {"name": "svc", "namespace": "ns", "uid": "u1"},
    "spec": {
        "upgradeStrategy": {
            "type": "NewClusterWithIncrementalUpgrade",
            "clusterUpgradeOptions": {"gatewayClassName": "gateway-class"},
        }
    },
}
ACTIVE: dict[str, Any] = {"metadata": {"name": "svc-aaaaa", "namespace": "ns"}, "spec": {}}


class Recorder:
    """Answers like an apiserver holding ``stored``; records every request."""

    def __init__(self, stored: dict[str, Any] | None = None, *, conflict: bool = False) -> None:
        self.stored = stored
        self.conflict = conflict
        self.calls: list[tuple[str, Any]] = []

    async def get(self, api_version: str, kind: str, name: str, namespace: Any = None) -> Any:
        self.calls.append(("get", name))
        return copy.deepcopy(self.stored)

    async def create(self, obj: dict[str, Any], **kw: Any) -> Any:
        self.calls.append(("create", obj["metadata"]["name"]))
        if self.stored is not None:
            raise AlreadyExists(409, "AlreadyExists", obj["metadata"]["name"])
        self.stored = {**obj, "metadata": {**obj["metadata"], "resourceVersion": "1"}}
        return copy.deepcopy(self.stored)

    async def patch(self, *args: Any, **kw: Any) -> Any:
        self.calls.append(("patch", args))
        raise AssertionError("patch is forbidden: the role grants update only")

    async def update(self, obj: dict[str, Any], **kw: Any) -> Any:
        self.calls.append(("update", copy.deepcopy(obj)))
        assert self.stored is not None
        if self.conflict or obj["metadata"].get("resourceVersion") != self.stored["metadata"].get(
            "resourceVersion"
        ):
            raise Conflict(409, "Conflict", "the object has been modified")
        self.stored = copy.deepcopy(obj)
        self.stored["metadata"]["resourceVersion"] = "8"
        return copy.deepcopy(self.stored)


def served_gateway() -> dict[str, Any]:
    """The Gateway as the apiserver holds it: a listener default added."""
    gw = build_gateway(RS)
    gw["metadata"]["resourceVersion"] = "7"
    gw["spec"]["listeners"][0]["allowedRoutes"] = {"namespaces": {"from": "Same"}}
    return gw


def served_route(active_weight: int) -> dict[str, Any]:
    """The HTTPRoute as the apiserver holds it: group/kind defaults on refs."""
    route = build_http_route(RS, build_gateway(RS), ACTIVE, None, active_weight, 0)
    route["metadata"]["resourceVersion"] = "7"
    spec = route["spec"]
    spec["parentRefs"][0].update(group="gateway.networking.k8s.io", kind="Gateway")
    for backend in spec["rules"][0]["backendRefs"]:
        backend.update(group="", kind="Service")
    return route


async def test_a_missing_gateway_is_created_with_one_request() -> None:
    client = Recorder()
    _, action = await apply_gateway(client, None, build_gateway(RS))  # type: ignore[arg-type]
    assert action == "created"
    assert client.calls == [("create", "svc-gateway")]


async def test_server_defaults_are_no_difference() -> None:
    client = Recorder(served_gateway())
    live, action = await apply_gateway(client, served_gateway(), build_gateway(RS))  # type: ignore[arg-type]
    assert action is None and client.calls == []
    assert live["spec"]["listeners"][0]["allowedRoutes"]
    route = served_route(100)
    desired = build_http_route(RS, build_gateway(RS), ACTIVE, None, 100, 0)
    _, action = await apply_http_route(Recorder(route), route, desired)  # type: ignore[arg-type]
    assert action is None


async def test_a_changed_class_or_weight_is_one_update_of_the_live_object() -> None:
    live = served_gateway()
    live["spec"]["gatewayClassName"] = "other"
    live["metadata"]["labels"] = {"team": "a"}  # someone else's: kept by the PUT
    client = Recorder(live)
    _, action = await apply_gateway(client, live, build_gateway(RS))  # type: ignore[arg-type]
    assert action == "updated"
    [(verb, sent)] = client.calls
    assert verb == "update"
    assert sent["metadata"]["resourceVersion"] == "7"
    assert sent["metadata"]["labels"] == {"team": "a"}
    assert sent["apiVersion"] == "gateway.networking.k8s.io/v1" and sent["kind"] == "Gateway"
    assert sent["spec"] == build_gateway(RS)["spec"]

    route = served_route(100)
    client = Recorder(route)
    desired = build_http_route(RS, build_gateway(RS), ACTIVE, None, 90, 0)
    written, action = await apply_http_route(client, route, desired)  # type: ignore[arg-type]
    assert action == "updated"
    assert written["spec"]["rules"][0]["backendRefs"][0]["weight"] == 90


async def test_a_gateway_created_meanwhile_is_compared_not_failed() -> None:
    client = Recorder(served_gateway())  # the cache had not seen it yet
    _, action = await apply_gateway(client, None, build_gateway(RS))  # type: ignore[arg-type]
    assert action is None
    assert [verb for verb, _ in client.calls] == ["create", "get"]


async def test_a_lost_race_is_a_quiet_requeue() -> None:
    live = served_gateway()
    live["spec"]["gatewayClassName"] = "other"
    with pytest.raises(RequeueError, match="Gateway changed while it was written"):
        await apply_gateway(Recorder(live, conflict=True), live, build_gateway(RS))  # type: ignore[arg-type]
