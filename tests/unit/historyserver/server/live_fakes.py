"""Doubles for the live-proxy tests: an upstream on 127.0.0.1 that records each request line
exactly as it arrives (the dashboard, or the apiserver's service proxy), a Kubernetes client
answering from a dict, and the history server's app around a ``LiveProxy``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import yarl
from aiohttp import web

from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.storage.local import LocalStore

NS = "team-a"
CLUSTER = "rc"
HEAD_SVC = "rc-head-svc"
LIVE_COOKIES = {"cluster_namespace": NS, "cluster_name": CLUSTER, "session_name": "live"}


@attrs.define
class Upstream:
    """What arrived: the request lines (``GET /x?y HTTP/1.1``), in order."""

    port: int = 0
    lines: list[str] = attrs.field(factory=list)

    @property
    def url(self) -> str:
        """Its base URL."""
        return f"http://127.0.0.1:{self.port}"


@asynccontextmanager
async def upstream() -> AsyncIterator[Upstream]:
    """A raw HTTP/1.1 server on 127.0.0.1 recording request lines, answering 200 ``{}``."""
    seen = Upstream()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                seen.lines.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 2\r\n\r\n{}"
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    seen.port = server.sockets[0].getsockname()[1]
    try:
        yield seen
    finally:
        server.close()
        await server.wait_closed()


class NotFound(Exception):
    """A 404 from the fake apiserver."""

    status = 404


def raycluster(dashboard_port: int) -> dict[str, Any]:
    """A RayCluster whose head Service is ``HEAD_SVC`` and dashboard port ``dashboard_port``."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": CLUSTER, "namespace": NS},
        "spec": {
            "headGroupSpec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-head",
                                "ports": [{"name": "dashboard", "containerPort": dashboard_port}],
                            }
                        ]
                    }
                }
            }
        },
        "status": {"head": {"serviceName": HEAD_SVC}},
    }


def service(spec: dict[str, Any]) -> dict[str, Any]:
    """The head Service with ``spec``."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": HEAD_SVC}, "spec": spec}


@attrs.define
class FakeKube:
    """``get``/``list`` from ``objects`` (keyed by (kind, name)), ``request`` answering
    SubjectAccessReviews with ``allow(body)``; every call recorded."""

    objects: dict[tuple[str, str], dict[str, Any]] = attrs.field(factory=dict)
    slices: list[dict[str, Any]] = attrs.field(factory=list)
    allow: Callable[[dict[str, Any]], bool] = lambda _body: True
    calls: list[tuple[str, Any]] = attrs.field(factory=list)

    async def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any]:
        """One object, or ``NotFound``."""
        self.calls.append(("get", (kind, namespace, name)))
        try:
            return self.objects[(kind, name)]
        except KeyError:
            raise NotFound(f"{kind} {name} not found") from None

    async def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
    ) -> dict[str, Any]:
        """EndpointSlices (``slices``), nothing else."""
        self.calls.append(("list", (kind, namespace, label_selector)))
        return {"items": self.slices if kind == "EndpointSlice" else []}

    async def request(self, method: str, path: str, *, verb: str, body: Any = None) -> Any:
        """A SubjectAccessReview answered by ``allow``."""
        self.calls.append(("request", body))
        return {"status": {"allowed": self.allow(body)}}


@asynccontextmanager
async def history_server(
    tmp_path: Path,
    proxy: Any,
    middlewares: tuple[Callable[..., Awaitable[web.StreamResponse]], ...] = (),
) -> AsyncIterator[str]:
    """The history server's app with ``proxy`` on 127.0.0.1; yields its URL."""
    store = LocalStore(tmp_path / "store")
    app = make_app(store, live=proxy.live, proxy=proxy, middlewares=middlewares)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
        await proxy.close()
        await store.close()


async def get_raw(url: str, raw_target: str) -> tuple[int, Any]:
    """``GET`` ``raw_target`` exactly as written (no client-side normalisation) with the live
    cookies; the status and the JSON body."""
    target = yarl.URL(url + raw_target, encoded=True)
    cookie = "; ".join(f"{k}={v}" for k, v in LIVE_COOKIES.items())
    async with (
        aiohttp.ClientSession() as http,
        http.get(target, headers={"Cookie": cookie}) as resp,
    ):
        return resp.status, await resp.json(content_type=None)
