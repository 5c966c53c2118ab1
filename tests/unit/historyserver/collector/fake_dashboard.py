"""A small fake Ray dashboard (aiohttp on 127.0.0.1) serving the recorded 2.60 answers."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.unit.historyserver.fixtures import dashboard


class FakeDashboard:
    """Answers like the recorded head; ``token`` set means 401 without the right header."""

    def __init__(self, *, node_ip: str = "192.0.2.2", token: str = "") -> None:
        rec = dashboard()
        self.bodies: dict[str, str] = {p: r["body"] for p, r in rec.items() if r["status"] == 200}
        self.bodies["/api/serve/applications/"] = json.dumps({"applications": {}})
        nodes = json.loads(self.bodies["/api/v0/nodes?limit=10000"])
        self.node_id = nodes["data"]["result"]["result"][0]["node_id"]
        nodes["data"]["result"]["result"][0]["node_ip"] = node_ip
        self.bodies["/api/v0/nodes?limit=10000"] = json.dumps(nodes)
        self.jobs: list[dict[str, Any]] = json.loads(self.bodies["/api/jobs/"])
        self.datasets: dict[str, Any] = {}
        self.token = token
        self.requests: list[str] = []
        self.server: TestServer | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        path = request.path_qs
        self.requests.append(path)
        if self.token and request.headers.get("x-ray-authorization") != f"Bearer {self.token}":
            return web.Response(status=401, text="unauthorized")
        if path == "/api/jobs/":
            return web.json_response(self.jobs)
        if request.path.startswith("/api/data/datasets/"):
            job = request.path.rsplit("/", 1)[1]
            return web.json_response({"datasets": self.datasets.get(job, [])})
        if path in self.bodies:
            return web.Response(text=self.bodies[path], content_type="application/json")
        return web.Response(status=404)

    async def start(self) -> str:
        """Serve; returns the base URL."""
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._handle)
        self.server = TestServer(app, host="127.0.0.1")
        await self.server.start_server()
        return f"http://127.0.0.1:{self.server.port}"

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close()
