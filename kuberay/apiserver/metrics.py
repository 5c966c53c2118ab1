"""The API server's ``/metrics``: requests counted and timed by route, method and code, and
those being answered now, watches apart (a watch counts while it streams).

The route label is the route's name (``ray``, ``events``, ``service-proxy``,
``compute-templates``, ``healthz``, ``not-found``...), never the path, so the series stay
few whatever callers send. The registry is the server's own (nothing of another component's),
written as KubeRay's Go server writes it (no ``_created`` series).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from kuberay.apiserver.forward import is_watch
from kuberay.reconcile.exposition import go_exposition

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class ApiServerMetrics:
    """The counters, histogram and in-flight gauge, and the middleware that feeds them."""

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
        self.in_flight = Gauge(
            "kuberay_apiserver_requests_in_flight",
            'Requests being answered now; watch="true": the watches streaming (one ends '
            "when its caller goes away or the kube-apiserver closes it).",
            ["watch"],
            registry=self.registry,
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Count and time every request; count it in flight while it is answered."""
        start = time.perf_counter()
        code = 500
        in_flight = self.in_flight.labels("true" if is_watch(request.query) else "false")
        in_flight.inc()
        try:
            response = await handler(request)
            code = response.status
            return response
        except web.HTTPException as exc:
            code = exc.status
            raise
        finally:
            in_flight.dec()
            route = self._route_of(request)
            method = request.method if request.method in METHODS else "OTHER"
            self.requests.labels(route, method, str(code)).inc()
            self.latency.labels(route, method, str(code)).observe(time.perf_counter() - start)

    async def handle(self, _request: web.Request) -> web.Response:
        """``GET /metrics``."""
        return web.Response(
            body=go_exposition(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )
