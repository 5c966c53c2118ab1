"""Helpers of the incremental-upgrade tests: the manifest, the gateway controller's part
(Gateway status; HTTPRoute status kept at the route's current generation, as a real controller
does, with a way to hold a generation back), and a record of the HTTPRoute weights the operator
wrote."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from kuberay.kube import Client, NotFound
from kuberay.testing import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayservice.conftest import ServiceOperator
from tests.integration.rayservice.helpers import (
    active_name,
    pending_name,
    rayservice,
    run_apps,
    serve_head,
    wait_put,
    wait_rs,
)

GW = "gateway.networking.k8s.io/v1"
T = "2026-01-01T00:00:00Z"


def incremental_rayservice(
    name: str, namespace: str, *, step: int = 50, interval: int = 1, surge: int = 50, **spec: Any
) -> dict[str, Any]:
    """A RayService with ``NewClusterWithIncrementalUpgrade`` (autoscaling on, as required)."""
    body = rayservice(
        name,
        namespace,
        upgradeStrategy={
            "type": "NewClusterWithIncrementalUpgrade",
            "clusterUpgradeOptions": {
                "gatewayClassName": "test-class",
                "stepSizePercent": step,
                "intervalSeconds": interval,
                "maxSurgePercent": surge,
            },
        },
        **spec,
    )
    body["spec"]["rayClusterConfig"]["enableInTreeAutoscaling"] = True
    return body


def _cond(
    ctype: str, ok: bool, reason: str, message: str = "", generation: int = 1
) -> dict[str, Any]:
    return {
        "type": ctype,
        "status": "True" if ok else "False",
        "reason": reason,
        "message": message or reason,
        "lastTransitionTime": T,
        "observedGeneration": generation,
    }


async def _get(client: Client, kind: str, name: str, namespace: str) -> dict[str, Any]:
    async def find() -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = await client.get(GW, kind, name, namespace)
        except NotFound:
            return None
        return found

    obj: dict[str, Any] = await eventually(find, timeout=60, message=f"{kind} {name}")
    return obj


async def set_gateway(
    client: Client, namespace: str, name: str, *, programmed: bool = True, why: str = ""
) -> None:
    """What a gateway controller writes: Accepted, and Programmed (or not, with ``why``)."""
    gw = await _get(client, "Gateway", name, namespace)
    gw["status"] = {
        "conditions": [
            _cond("Accepted", True, "Accepted"),
            _cond(
                "Programmed",
                programmed,
                "Programmed" if programmed else "AddressNotAssigned",
                why,
            ),
        ]
    }
    await client.update_status(gw)


class FakeRouteController:
    """The HTTPRoute half of a gateway controller: every ``interval`` it reads the route and,
    when its generation is newer than the one it last accepted, writes Accepted + ResolvedRefs
    with ``observedGeneration`` = that generation, unless ``hold(weights)`` is True for the
    route's weights (the data plane lagging). ``observed`` lists the weights accepted, in
    order."""

    def __init__(self, client: Client, namespace: str, route: str, gateway: str) -> None:
        self.client, self.namespace, self.route, self.gateway = client, namespace, route, gateway
        self.hold: Callable[[tuple[int, ...]], bool] = lambda _weights: False
        self.observed: list[tuple[int, ...]] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin accepting the route's generations in the background."""
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """End the background task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self, interval: float = 0.2) -> None:
        accepted = 0
        while True:
            try:
                route = await self.client.get(GW, "HTTPRoute", self.route, self.namespace)
            except NotFound:
                route = None
            if route is not None:
                generation = int(route["metadata"].get("generation", 1))
                weights = weights_of(route)
                if generation > accepted and not self.hold(weights):
                    await self._accept(route, generation)
                    accepted = generation
                    self.observed.append(weights)
            await asyncio.sleep(interval)

    async def _accept(self, route: dict[str, Any], generation: int) -> None:
        route["status"] = {
            "parents": [
                {
                    "parentRef": {
                        "group": "gateway.networking.k8s.io",
                        "kind": "Gateway",
                        "name": self.gateway,
                        "namespace": self.namespace,
                    },
                    "controllerName": "example.com/test-gateway-controller",
                    "conditions": [
                        _cond("Accepted", True, "Accepted", generation=generation),
                        _cond("ResolvedRefs", True, "ResolvedRefs", generation=generation),
                    ],
                }
            ]
        }
        await self.client.update_status(route)


def weights_of(route: dict[str, Any]) -> tuple[int, ...]:
    """The backend weights of the route's (only) rule, in order."""
    backends = route["spec"]["rules"][0]["backendRefs"]
    return tuple(int(b.get("weight", 1)) for b in backends)


def record_route_writes(op: ServiceOperator) -> list[tuple[int, ...]]:
    """Every HTTPRoute spec the operator writes (create, update, or a patch of its spec), as
    its weights."""
    seen: list[tuple[int, ...]] = []
    client: Any = op.client

    def wrap(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def recording(obj: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            result = await method(obj, *args, **kwargs)
            if obj.get("kind") == "HTTPRoute":
                seen.append(weights_of(obj))
            return result

        return recording

    async def patching(
        api_version: str, kind: str, name: str, patch: Any, *args: Any, **kwargs: Any
    ) -> Any:
        result = await original_patch(api_version, kind, name, patch, *args, **kwargs)
        if kind == "HTTPRoute" and isinstance(patch, dict) and "spec" in patch:
            seen.append(weights_of(result))
        return result

    original_patch = client.patch
    client.create = wrap(client.create)
    client.update = wrap(client.update)
    client.patch = patching
    return seen


def capacities(fake: FakeDashboard) -> list[Any]:
    """The ``target_capacity`` of every Serve config the fake accepted, consecutive repeats
    collapsed (a config re-sent with the same capacity is not a step)."""
    out: list[Any] = []
    for body in fake.serve_config_history:
        value = body.get("target_capacity")
        if not out or out[-1] != value:
            out.append(value)
    return out


async def deploy_incremental(
    client: Client,
    namespace: str,
    name: str,
    fake: FakeDashboard,
    routes: FakeRouteController,
    **spec: Any,
) -> dict[str, Any]:
    """Create an incremental RayService, serve it from ``fake``, program its Gateway and
    start ``routes`` accepting its HTTPRoute; returns the RayService once the route gives
    the active cluster all traffic."""
    await client.create(incremental_rayservice(name, namespace, **spec))
    rs = await wait_rs(client, namespace, name, pending_name, message="pending cluster named")
    cluster = pending_name(rs)
    await serve_head(client, namespace, cluster, fake)
    await wait_put(fake)
    run_apps(fake)
    await wait_rs(client, namespace, name, lambda r: active_name(r) == cluster, message="promoted")
    await set_gateway(client, namespace, f"{name}-gateway")
    routes.start()
    return await wait_rs(
        client,
        namespace,
        name,
        lambda r: r["status"]["activeServiceStatus"].get("trafficRoutedPercent") == 100,
        message="active traffic 100",
    )
