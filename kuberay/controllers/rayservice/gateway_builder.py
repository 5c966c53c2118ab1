"""Pure Gateway API builders for the RayService incremental upgrade (KubeRay
``createGateway`` / ``createHTTPRoute``) and their readiness checks.

* :func:`build_gateway`: Gateway ``<rs>-gateway`` in the RayService's namespace, class from
  ``upgradeStrategy.clusterUpgradeOptions.gatewayClassName``, one listener ``http`` HTTP:80,
  controller owner reference to the RayService.
* :func:`build_http_route`: HTTPRoute ``<rs>-httproute`` in the Gateway's namespace, attached to
  the Gateway, one rule matching PathPrefix ``/`` whose backends are the active cluster's serve
  Service (weight ``active_weight``) and, when there is one, the pending cluster's
  (``pending_weight``); each backend's port is the head container's ``serve`` port or 8000.
* :func:`serve_port`: KubeRay ``GetServePort``.
* :func:`is_gateway_ready` (Accepted and Programmed) / :func:`is_http_route_ready` (some parent,
  optionally the given Gateway, Accepted and ResolvedRefs) / :func:`is_http_route_current`
  (ready, and observed at the route's current generation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.controllers.builders.names import serve_service_name
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.controllers.common.objects import as_list, as_map, as_str, metadata, spec

__all__ = [
    "GATEWAY_API_VERSION",
    "build_gateway",
    "build_http_route",
    "gateway_name",
    "http_route_name",
    "is_gateway_ready",
    "is_http_route_current",
    "is_http_route_ready",
    "serve_port",
]

GATEWAY_API_VERSION: Final = "gateway.networking.k8s.io/v1"
LISTENER_NAME: Final = "http"
LISTENER_PORT: Final = 80


def gateway_name(rs_name: str) -> str:
    """``<rs>-gateway``."""
    return f"{rs_name}-gateway"


def http_route_name(rs_name: str) -> str:
    """``<rs>-httproute``."""
    return f"{rs_name}-httproute"


def _upgrade_options(ray_service: Mapping[str, Any]) -> Mapping[str, Any]:
    strategy = as_map(spec(ray_service).get("upgradeStrategy"))
    return as_map(strategy.get("clusterUpgradeOptions"))


def build_gateway(ray_service: Mapping[str, Any]) -> dict[str, Any]:
    """The Gateway KubeRay creates for ``ray_service`` (owner reference included)."""
    meta = metadata(ray_service)
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "Gateway",
        "metadata": {
            "name": gateway_name(as_str(meta.get("name"))),
            "namespace": as_str(meta.get("namespace")),
            "ownerReferences": [controller_owner_reference(ray_service, c.KIND_RAYSERVICE)],
        },
        "spec": {
            "gatewayClassName": as_str(_upgrade_options(ray_service).get("gatewayClassName")),
            "listeners": [{"name": LISTENER_NAME, "protocol": "HTTP", "port": LISTENER_PORT}],
        },
    }


def serve_port(cluster: Mapping[str, Any] | None) -> int:
    """The head (first) container's port named ``serve``, else 8000."""
    head = as_map(as_map(spec(cluster or {}).get("headGroupSpec")).get("template"))
    containers = as_list(as_map(head.get("spec")).get("containers"))
    if not containers:
        return c.DEFAULT_SERVING_PORT
    for port in as_list(as_map(containers[0]).get("ports")):
        port_map = as_map(port)
        if port_map.get("name") == c.SERVING_PORT_NAME:
            value = port_map.get("containerPort")
            if isinstance(value, int):
                return value
    return c.DEFAULT_SERVING_PORT


def _backend(cluster: Mapping[str, Any], namespace: str, weight: int) -> dict[str, Any]:
    return {
        "name": serve_service_name(as_str(metadata(cluster).get("name"))),
        "namespace": namespace,
        "port": serve_port(cluster),
        "weight": weight,
    }


def build_http_route(
    ray_service: Mapping[str, Any],
    gateway: Mapping[str, Any],
    active_cluster: Mapping[str, Any],
    pending_cluster: Mapping[str, Any] | None,
    active_weight: int,
    pending_weight: int,
) -> dict[str, Any]:
    """The HTTPRoute splitting traffic ``active_weight``/``pending_weight`` between the
    clusters' serve Services (owner reference to the RayService included)."""
    gw_meta = metadata(gateway)
    namespace = as_str(gw_meta.get("namespace"))
    backends = [_backend(active_cluster, namespace, active_weight)]
    if pending_cluster is not None:
        backends.append(_backend(pending_cluster, namespace, pending_weight))
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "HTTPRoute",
        "metadata": {
            "name": http_route_name(as_str(metadata(ray_service).get("name"))),
            "namespace": namespace,
            "ownerReferences": [controller_owner_reference(ray_service, c.KIND_RAYSERVICE)],
        },
        "spec": {
            "parentRefs": [{"name": as_str(gw_meta.get("name")), "namespace": namespace}],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": backends,
                }
            ],
        },
    }


def _true(conditions: Any, ctype: str) -> bool:
    return any(
        as_map(cond).get("type") == ctype and as_map(cond).get("status") == "True"
        for cond in as_list(conditions)
    )


def is_gateway_ready(gateway: Mapping[str, Any] | None) -> bool:
    """The Gateway's status has Accepted and Programmed True."""
    conditions = as_map(as_map(gateway or {}).get("status")).get("conditions")
    return _true(conditions, "Accepted") and _true(conditions, "Programmed")


def _ready_parents(
    route: Mapping[str, Any] | None, gateway: Mapping[str, Any] | None
) -> list[Mapping[str, Any]]:
    """The route's status parents (only those naming ``gateway`` when given) with Accepted
    and ResolvedRefs True."""
    parents = as_list(as_map(as_map(route or {}).get("status")).get("parents"))
    gw_meta = metadata(gateway) if gateway is not None else {}
    found = []
    for parent in parents:
        ref = as_map(as_map(parent).get("parentRef"))
        if gateway is not None:
            if ref.get("name") != gw_meta.get("name"):
                continue
            if ref.get("namespace") is not None and ref.get("namespace") != gw_meta.get(
                "namespace"
            ):
                continue
        conds = as_map(parent).get("conditions")
        if _true(conds, "Accepted") and _true(conds, "ResolvedRefs"):
            found.append(as_map(parent))
    return found


def is_http_route_ready(
    route: Mapping[str, Any] | None, gateway: Mapping[str, Any] | None = None
) -> bool:
    """Some parent of the HTTPRoute's status has Accepted and ResolvedRefs True; with
    ``gateway``, only a parent entry naming that Gateway (and, when given, its namespace)
    counts (KubeRay ``IsHTTPRouteReady``)."""
    return bool(_ready_parents(route, gateway))


def is_http_route_current(
    route: Mapping[str, Any] | None, gateway: Mapping[str, Any] | None = None
) -> bool:
    """:func:`is_http_route_ready`, and that parent's Accepted condition was written for the
    route's current ``metadata.generation`` (its ``observedGeneration`` is at least that; a
    condition without one counts as current): the gateway's controller has seen the spec
    last written, weights included. Beyond KubeRay, which moves ``target_capacity`` as soon
    as the route is written."""
    generation = metadata(route or {}).get("generation")
    for parent in _ready_parents(route, gateway):
        if not isinstance(generation, int):
            return True
        accepted = [
            as_map(c)
            for c in as_list(parent.get("conditions"))
            if as_map(c).get("type") == "Accepted"
        ]
        observed = accepted[0].get("observedGeneration") if accepted else None
        if not isinstance(observed, int) or observed >= generation:
            return True
    return False
