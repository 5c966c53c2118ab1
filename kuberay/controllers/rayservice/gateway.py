"""Writes of the incremental upgrade's Gateway and HTTPRoute (KubeRay ``reconcileGateway`` /
``reconcileHTTPRoute``): create when missing, replace the spec when it differs in what KubeRay
compares, else nothing (an unchanged world gives zero writes).

The desired objects come from the pure builders in
``kuberay.controllers.rayservice.gateway_builder``; the caller passes the live object (from
its cache, or None) and emits KubeRay's Events (``CreatedGateway`` / ``UpdatedGateway`` /
``CreatedHTTPRoute`` / ``UpdatedHTTPRoute``) from the returned action (see
``traffic.TrafficReconciler``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Literal

from kuberay.controllers.rayservice.gateway_builder import (
    gateway_needs_update,
    http_route_needs_update,
)
from kuberay.kube import ApiError, Client
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import RequeueError

__all__ = ["Action", "apply_gateway", "apply_http_route"]

Action = Literal["created", "updated"] | None


async def _apply(
    client: Client,
    live: Mapping[str, Any] | None,
    desired: Mapping[str, Any],
    differs: Callable[[Mapping[str, Any], Mapping[str, Any]], bool],
) -> tuple[Obj, Action]:
    if live is None:
        try:
            return await client.create(copy.deepcopy(dict(desired))), "created"
        except ApiError as exc:
            if exc.status == 409:
                raise RequeueError(f"{desired['kind']} appeared while it was created") from None
            raise
    if not differs(live, desired):
        return dict(live), None
    updated = copy.deepcopy(dict(live))
    updated["spec"] = copy.deepcopy(desired["spec"])
    try:
        return await client.update(updated), "updated"
    except ApiError as exc:
        if exc.status == 409:
            raise RequeueError(f"{desired['kind']} changed while it was updated") from None
        raise


async def apply_gateway(
    client: Client, live: Mapping[str, Any] | None, desired: Mapping[str, Any]
) -> tuple[Obj, Action]:
    """Create or update the Gateway; the object as the server holds it and what was done."""
    return await _apply(client, live, desired, gateway_needs_update)


async def apply_http_route(
    client: Client, live: Mapping[str, Any] | None, desired: Mapping[str, Any]
) -> tuple[Obj, Action]:
    """Create or update the HTTPRoute (weights included); the server's object and the action."""
    return await _apply(client, live, desired, http_route_needs_update)
