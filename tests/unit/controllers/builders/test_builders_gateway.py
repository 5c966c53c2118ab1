"""Gateway / HTTPRoute builders of the RayService incremental upgrade. Expectations follow
KubeRay's Go unit tests ``TestCreateGateway`` / ``TestCreateHTTPRoute`` (names, class, one
``http`` listener on 80, parent ref, PathPrefix ``/``, serve Service backends with the ``serve``
port or 8000) and the Gateway API status conditions a gateway controller sets."""

from __future__ import annotations

from typing import Any

from kuberay.controllers.rayservice.gateway_builder import (
    build_gateway,
    build_http_route,
    is_gateway_ready,
    is_http_route_current,
    is_http_route_ready,
    serve_port,
)

RS: dict[str, Any] = {
    "apiVersion": "ray.io/v1",
    "kind": "RayService",
    "metadata": {"name": "incremental-ray-service", "namespace": "test-ns", "uid": "u1"},
    "spec": {
        "upgradeStrategy": {
            "type": "NewClusterWithIncrementalUpgrade",
            "clusterUpgradeOptions": {
                "gatewayClassName": "gateway-class",
                "stepSizePercent": 10,
                "intervalSeconds": 30,
            },
        }
    },
}


def _cluster(name: str, ports: list[dict[str, Any]] | None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "ray-head"}
    if ports is not None:
        container["ports"] = ports
    return {
        "metadata": {"name": name, "namespace": "test-ns"},
        "spec": {"headGroupSpec": {"template": {"spec": {"containers": [container]}}}},
    }


def test_gateway_named_after_the_rayservice_with_one_http_listener() -> None:
    gw = build_gateway(RS)
    assert gw["metadata"]["name"] == "incremental-ray-service-gateway"
    assert gw["metadata"]["namespace"] == "test-ns"
    assert gw["spec"] == {
        "gatewayClassName": "gateway-class",
        "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
    }
    (owner,) = gw["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == (
        "RayService",
        "incremental-ray-service",
        True,
    )


def test_http_route_splits_traffic_between_the_serve_services() -> None:
    active = _cluster("rs-aaaaa", [{"name": "serve", "containerPort": 9000}])
    pending = _cluster("rs-bbbbb", None)
    route = build_http_route(RS, build_gateway(RS), active, pending, 70, 30)
    assert route["metadata"]["name"] == "incremental-ray-service-httproute"
    assert route["spec"]["parentRefs"] == [
        {"name": "incremental-ray-service-gateway", "namespace": "test-ns"}
    ]
    (rule,) = route["spec"]["rules"]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
    assert rule["backendRefs"] == [
        {"name": "rs-aaaaa-serve-svc", "namespace": "test-ns", "port": 9000, "weight": 70},
        {"name": "rs-bbbbb-serve-svc", "namespace": "test-ns", "port": 8000, "weight": 30},
    ]
    only_active = build_http_route(RS, build_gateway(RS), active, None, 100, 0)
    assert [b["name"] for b in only_active["spec"]["rules"][0]["backendRefs"]] == [
        "rs-aaaaa-serve-svc"
    ]


def test_serve_port_defaults_to_8000() -> None:
    assert serve_port(None) == 8000
    assert serve_port(_cluster("c", [{"name": "dashboard", "containerPort": 8265}])) == 8000
    assert serve_port(_cluster("c", [{"name": "serve", "containerPort": 8001}])) == 8001


def _cond(ctype: str, status: str = "True") -> dict[str, str]:
    return {"type": ctype, "status": status}


def test_readiness_follows_the_gateway_controller_conditions() -> None:
    assert not is_gateway_ready(build_gateway(RS))
    assert not is_gateway_ready({"status": {"conditions": [_cond("Accepted")]}})
    assert is_gateway_ready({"status": {"conditions": [_cond("Accepted"), _cond("Programmed")]}})
    ok_parent = {"conditions": [_cond("Accepted"), _cond("ResolvedRefs")]}
    bad_parent = {"conditions": [_cond("Accepted"), _cond("ResolvedRefs", "False")]}
    assert is_http_route_ready({"status": {"parents": [ok_parent]}})
    assert not is_http_route_ready({"status": {"parents": [bad_parent]}})
    assert not is_http_route_ready({})
    # only the parent entry of the given Gateway counts (KubeRay IsHTTPRouteReady)
    gw = {"metadata": {"name": "svc-gateway", "namespace": "ns"}}
    mine = {**ok_parent, "parentRef": {"name": "svc-gateway", "namespace": "ns"}}
    other = {**ok_parent, "parentRef": {"name": "other-gateway", "namespace": "ns"}}
    elsewhere = {**ok_parent, "parentRef": {"name": "svc-gateway", "namespace": "other"}}
    unset_ns = {**ok_parent, "parentRef": {"name": "svc-gateway"}}
    assert is_http_route_ready({"status": {"parents": [other, mine]}}, gw)
    assert not is_http_route_ready({"status": {"parents": [other, elsewhere]}}, gw)
    assert is_http_route_ready({"status": {"parents": [unset_ns]}}, gw)


def test_a_route_is_current_once_its_gateway_accepted_its_generation() -> None:
    def route(generation: int, *observed: int | None) -> dict[str, Any]:
        parents = []
        for seen in observed:
            accepted: dict[str, Any] = _cond("Accepted")
            if seen is not None:
                accepted["observedGeneration"] = seen
            parents.append({"conditions": [accepted, _cond("ResolvedRefs")]})
        return {"metadata": {"generation": generation}, "status": {"parents": parents}}

    assert is_http_route_current(route(3, 3))
    assert is_http_route_current(route(3, 4))
    # weights written (generation 4) but the gateway still reports generation 3
    assert is_http_route_ready(route(4, 3))
    assert not is_http_route_current(route(4, 3))
    assert is_http_route_current(route(4, 3, 4))  # another parent has seen it
    # a controller that does not report observedGeneration cannot be waited for
    assert is_http_route_current(route(4, None))
    assert not is_http_route_current({"metadata": {"generation": 1}})
