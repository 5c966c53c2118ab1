"""Helpers for the live-cluster and login tests on the real apiserver: a fake Ray dashboard on
loopback that records what reaches it, RayClusters as the operator would leave them, and the
history server's app run on loopback."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
from aiohttp import web

from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.live import DashboardTarget
from kuberay.historyserver.server.live_dial import Address, ServiceAddresses
from kuberay.historyserver.server.live_proxy import Resolver
from kuberay.historyserver.storage.local import LocalStore
from kuberay.kube import Client


@attrs.define
class Seen:
    """One request the fake dashboard received."""

    method: str
    path_qs: str
    headers: dict[str, str]


@attrs.define
class FakeDashboard:
    """A dashboard answering ``/api/jobs/`` and ``/``; ``seen`` lists every request."""

    port: int = 0
    seen: list[Seen] = attrs.field(factory=list)


@asynccontextmanager
async def fake_dashboard() -> AsyncIterator[FakeDashboard]:
    """Start the fake dashboard on 127.0.0.1 (a free port)."""
    dash = FakeDashboard()

    async def any_request(request: web.Request) -> web.StreamResponse:
        dash.seen.append(
            Seen(
                request.method, request.path_qs, {k.lower(): v for k, v in request.headers.items()}
            )
        )
        if request.path == "/api/jobs/":
            return web.json_response(
                [{"job_id": "02000000", "status": "RUNNING"}], headers={"X-Ray": "live"}
            )
        return web.Response(text="<html>live dashboard</html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", any_request)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    dash.port = int(runner.addresses[0][1])
    try:
        yield dash
    finally:
        await runner.cleanup()


def raycluster(
    namespace: str,
    name: str,
    *,
    dashboard_port: int,
    auth: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A minimal RayCluster whose head container declares the ``dashboard`` port."""
    spec: dict[str, Any] = {
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "ray-head",
                            "image": "rayproject/ray:2.60.0",
                            "ports": [{"name": "dashboard", "containerPort": dashboard_port}],
                        }
                    ]
                }
            },
        }
    }
    if auth is not None:
        spec["authOptions"] = auth
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
    }


async def create_live_cluster(
    kube: Client, obj: dict[str, Any], *, head_service: str | None
) -> dict[str, Any]:
    """Create ``obj`` and, as the operator would, write ``status.head.serviceName``."""
    created = await kube.create(obj)
    if head_service is not None:
        created["status"] = {"head": {"serviceName": head_service}}
        created = await kube.update_status(created)
    return created


async def create_token_secret(kube: Client, namespace: str, name: str, token: str) -> None:
    """The cluster's auth Secret (key ``auth_token``)."""
    await kube.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace},
            "data": {"auth_token": base64.b64encode(token.encode()).decode()},
        }
    )


@asynccontextmanager
async def serve(tmp_path: Path, **app_kwargs: Any) -> AsyncIterator[str]:
    """The history server's app over an empty local store on 127.0.0.1; yields its URL."""
    store = LocalStore(tmp_path / "store")
    app = make_app(store, cluster_list_ttl=0, **app_kwargs)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
        await store.close()


def loopback_resolver(kube: Client, dialled: list[str]) -> Resolver:
    """The server's own resolver (the head Service read through the API: ExternalName
    refused, its cluster IP found), with the address it would dial recorded in ``dialled``
    and 127.0.0.1 dialled instead (tests dial loopback only)."""
    addresses = ServiceAddresses(kube, ttl=0)

    async def resolve(target: DashboardTarget) -> Address:
        found = await addresses(target)
        dialled.append(found.host)
        return Address("127.0.0.1", target.port)

    return resolve


async def create_head_service(kube: Client, namespace: str, name: str, **spec: Any) -> None:
    """A head Service ``name`` (a cluster IP one unless ``spec`` says otherwise)."""
    await kube.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec or {"ports": [{"name": "dashboard", "port": 8265}]},
        }
    )
