"""The API server's ``/metrics``: requests counted and timed by route, method and code.

The route label is the route's name (``ray``, ``events``, ``service-proxy``,
``compute-templates``, ``healthz``, ``not-found``...), never the path, so the series stay
few whatever callers send. The registry is the server's own (nothing of another component's).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class ApiServerMetrics:
    """The counters and histogram, and the middleware that feeds them."""

    def __init__(self, route_of: Callable[[web.Request], str]) -> None:
        self.registry = CollectorRegistry()
        self._route_of = route_of
        self.requests = Counter(
            "kuberay_apiserver_requests",
            "Requests answered, by route, method and status code.",
            ["route", "method", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "kuberay_apiserver_request_duration_seconds",
            "Seconds from a request's arrival to the end of its answer, by route, method and "
            "status code.",
            ["route", "method", "code"],
            registry=self.registry,
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Count and time every request."""
        start = time.perf_counter()
        code = 500
        try:
            response = await handler(request)
            code = response.status
            return response
        except web.HTTPException as exc:
            code = exc.status
            raise
        finally:
            route = self._route_of(request)
            method = request.method if request.method in METHODS else "OTHER"
            self.requests.labels(route, method, str(code)).inc()
            self.latency.labels(route, method, str(code)).observe(time.perf_counter() - start)

    async def handle(self, _request: web.Request) -> web.Response:
        """``GET /metrics``."""
        return web.Response(
            body=generate_latest(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )
