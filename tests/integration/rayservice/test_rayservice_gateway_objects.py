"""The incremental upgrade's Gateway and HTTPRoute against the real apiserver with the Gateway
API CRDs of sigs.k8s.io/gateway-api: the built objects pass the CRDs' schemas and CEL rules,
re-applying an unchanged desired object writes nothing (after the server's defaulting), a
weight step replaces the route's spec, and readiness follows the statuses a gateway
controller writes (set by the test in its place)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kuberay.controllers.rayservice.gateway import apply_gateway, apply_http_route
from kuberay.controllers.rayservice.gateway_builder import (
    GATEWAY_API_VERSION,
    build_gateway,
    build_http_route,
    is_gateway_ready,
    is_http_route_ready,
)
from kuberay.kube import Client, kubeconfig
from kuberay.kube.overrides import Overrides
from tests.integration.rayservice.helpers import rayservice

REPO = Path(__file__).resolve().parents[3]


def _rs(namespace: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "svc", "namespace": namespace, "uid": uid},
        "spec": {
            "upgradeStrategy": {
                "type": "NewClusterWithIncrementalUpgrade",
                "clusterUpgradeOptions": {
                    "gatewayClassName": "test-class",
                    "stepSizePercent": 10,
                    "intervalSeconds": 1,
                },
            }
        },
    }


def _cluster(name: str, namespace: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "headGroupSpec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-head",
                                "ports": [{"name": "serve", "containerPort": 8000}],
                            }
                        ]
                    }
                }
            }
        },
    }


def _now() -> str:
    return "2026-01-01T00:00:00Z"


async def test_gateway_and_route_are_accepted_and_reapplying_writes_nothing(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    # A real RayService owns them (no operator runs here: it is only the owner).
    owner = await kclient.create(rayservice("svc", namespace))
    rs = _rs(namespace, owner["metadata"]["uid"])

    desired_gw = build_gateway(rs)
    gw, action = await apply_gateway(kclient, None, desired_gw)
    assert action == "created"
    live_gw = await kclient.get(GATEWAY_API_VERSION, "Gateway", "svc-gateway", namespace)
    assert live_gw["spec"]["listeners"][0].get("allowedRoutes")  # the server defaulted it
    again, action = await apply_gateway(kclient, live_gw, desired_gw)
    assert action is None
    assert again["metadata"]["resourceVersion"] == live_gw["metadata"]["resourceVersion"]

    active, pending = _cluster("svc-aaaaa", namespace), _cluster("svc-bbbbb", namespace)
    _, action = await apply_http_route(
        kclient, None, build_http_route(rs, gw, active, pending, 100, 0)
    )
    assert action == "created"
    live_route = await kclient.get(GATEWAY_API_VERSION, "HTTPRoute", "svc-httproute", namespace)
    _, action = await apply_http_route(
        kclient, live_route, build_http_route(rs, gw, active, pending, 100, 0)
    )
    assert action is None
    stepped, action = await apply_http_route(
        kclient, live_route, build_http_route(rs, gw, active, pending, 90, 10)
    )
    assert action == "updated"
    weights = [b["weight"] for b in stepped["spec"]["rules"][0]["backendRefs"]]
    assert weights == [90, 10]

    # A gateway controller's verdicts, written in its place.
    assert not is_gateway_ready(live_gw)
    conds = [
        {
            "type": t,
            "status": "True",
            "reason": t,
            "message": "",
            "lastTransitionTime": _now(),
            "observedGeneration": live_gw["metadata"]["generation"],
        }
        for t in ("Accepted", "Programmed")
    ]
    live_gw = await kclient.get(GATEWAY_API_VERSION, "Gateway", "svc-gateway", namespace)
    live_gw["status"] = {"conditions": conds}
    await kclient.update_status(live_gw)
    assert is_gateway_ready(
        await kclient.get(GATEWAY_API_VERSION, "Gateway", "svc-gateway", namespace)
    )
    route_now = await kclient.get(GATEWAY_API_VERSION, "HTTPRoute", "svc-httproute", namespace)
    assert not is_http_route_ready(route_now)
    route_now["status"] = {
        "parents": [
            {
                "parentRef": {"name": "svc-gateway", "namespace": namespace},
                "controllerName": "example.com/test-gateway",
                "conditions": [
                    {**c, "type": t, "reason": t}
                    for c, t in zip(conds, ("Accepted", "ResolvedRefs"), strict=True)
                ],
            }
        ]
    }
    await kclient.update_status(route_now)
    assert is_http_route_ready(
        await kclient.get(GATEWAY_API_VERSION, "HTTPRoute", "svc-httproute", namespace)
    )


def _operator_rules_for(api_group: str) -> list[dict[str, Any]]:
    """The operator's ClusterRole rules (``manifests/rbac/role.yaml``) for ``api_group``."""
    role = yaml.safe_load((REPO / "manifests" / "rbac" / "role.yaml").read_text())
    return [rule for rule in role["rules"] if api_group in rule.get("apiGroups", [])]


async def test_the_writes_need_no_more_than_the_operators_role(
    crds_installed: None, kclient: Client, namespace: str, kubeconfig_path: Path
) -> None:
    """KubeRay's role may create, get and update Gateways and HTTPRoutes but not patch them:
    the writes, done as a user holding only those rules, create both and step the weights."""
    user = f"gateway-writer-{namespace}"
    rules = _operator_rules_for("gateway.networking.k8s.io")
    assert rules and all("patch" not in rule["verbs"] for rule in rules)
    for kind, body in (("Role", {"rules": rules}), ("RoleBinding", {})):
        obj: dict[str, Any] = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": "gateway-writer", "namespace": namespace},
            **body,
        }
        if kind == "RoleBinding":
            obj["roleRef"] = {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "gateway-writer",
            }
            obj["subjects"] = [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
            ]
        await kclient.create(obj)
    config = kubeconfig.load(kubeconfig_path, Overrides(as_user=user))
    await config.prepare()
    owner = await kclient.create(rayservice("svc", namespace))
    rs = _rs(namespace, owner["metadata"]["uid"])
    active, pending = _cluster("svc-aaaaa", namespace), _cluster("svc-bbbbb", namespace)
    async with Client(config, qps=0) as operator:
        gw, action = await apply_gateway(operator, None, build_gateway(rs))
        assert action == "created"
        _, action = await apply_http_route(
            operator, None, build_http_route(rs, gw, active, pending, 100, 0)
        )
        assert action == "created"
        live_gw = await operator.get(GATEWAY_API_VERSION, "Gateway", "svc-gateway", namespace)
        moved = {
            **rs,
            "spec": {
                "upgradeStrategy": {"clusterUpgradeOptions": {"gatewayClassName": "other-class"}}
            },
        }
        _, action = await apply_gateway(operator, live_gw, build_gateway(moved))
        assert action == "updated"
        route = await operator.get(GATEWAY_API_VERSION, "HTTPRoute", "svc-httproute", namespace)
        stepped, action = await apply_http_route(
            operator, route, build_http_route(rs, gw, active, pending, 90, 10)
        )
        assert action == "updated"
        assert [b["weight"] for b in stepped["spec"]["rules"][0]["backendRefs"]] == [90, 10]
