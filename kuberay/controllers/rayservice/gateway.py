"""Writes of the incremental upgrade's Gateway and HTTPRoute (KubeRay ``reconcileGateway`` /
``reconcileHTTPRoute``): create when missing, replace the spec when it differs, else nothing (an
unchanged world gives zero writes).

Both go through the library's :func:`~kuberay.reconcile.children.create_or_update` on the
``spec``: fields the apiserver or a gateway controller defaults (a listener's
``allowedRoutes``, a backend's ``group``/``kind``) are no difference. A differing spec is
written as KubeRay writes it, with an update (PUT) of the live object at its
``resourceVersion``: KubeRay's ClusterRole (which ours matches) grants ``update`` on Gateway
API objects but not ``patch``. A write that lost a race (``Conflict``: the object changed
since the cache read it, or appeared while it was created) is a quiet requeue.

The desired objects come from the pure builders in
``kuberay.controllers.rayservice.gateway_builder``; the caller passes the live object (from
its cache, or None) and emits KubeRay's Events (``CreatedGateway`` / ``UpdatedGateway`` /
``CreatedHTTPRoute`` / ``UpdatedHTTPRoute``) from the returned action (see
``traffic.TrafficReconciler``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal

from kuberay.kube import Client, Conflict
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import RequeueError
from kuberay.reconcile.children import create_or_update

__all__ = ["Action", "apply_gateway", "apply_http_route"]

Action = Literal["created", "updated"] | None


async def _apply(
    client: Client, live: Mapping[str, Any] | None, desired: Mapping[str, Any]
) -> tuple[Obj, Action]:
    try:
        written, done = await create_or_update(
            client, copy.deepcopy(dict(desired)), current=live, read=False, verb="update"
        )
    except Conflict:
        raise RequeueError(f"{desired['kind']} changed while it was written") from None
    return written, None if done == "unchanged" else done


async def apply_gateway(
    client: Client, live: Mapping[str, Any] | None, desired: Mapping[str, Any]
) -> tuple[Obj, Action]:
    """Create or update the Gateway; the object as the server holds it and what was done."""
    return await _apply(client, live, desired)


async def apply_http_route(
    client: Client, live: Mapping[str, Any] | None, desired: Mapping[str, Any]
) -> tuple[Obj, Action]:
    """Create or update the HTTPRoute (weights included); the server's object and the action."""
    return await _apply(client, live, desired)
