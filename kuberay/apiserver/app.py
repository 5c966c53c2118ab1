"""The API server's aiohttp application: public probes, the V2 routes, compute templates.

Middlewares, outermost first: metrics (every answer counted), CORS preflights (when
``--cors-allow-origin`` is set), the guard (path checked, identity found; :mod:`.guard`).
Routes: ``GET /healthz``; ``GET /metrics`` (with ``--collectMetricsFlag``); the dashboard
under ``/dashboard`` (with ``--enable-dashboard`` and the V2 routes it calls; no credentials
needed: :mod:`.dashboard.routes`; its own API under ``/dashboard/api`` needs them, as any
route: :mod:`.dashboard.pods`, :mod:`.dashboard.why`, :mod:`.dashboard.history`,
:mod:`.dashboard.driver_log`, :mod:`.dashboard.yaml_json`); the compute template routes
(``extra_routes``); everything else to the V2 proxy (with ``--enable-api-server-v2``,
else 404).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from kuberay.apiserver.cors import Cors
from kuberay.apiserver.dashboard.driver_log import add_driver_log_route
from kuberay.apiserver.dashboard.history import add_history_route
from kuberay.apiserver.dashboard.pods import API_PREFIX as DASHBOARD_API
from kuberay.apiserver.dashboard.pods import add_pods_route
from kuberay.apiserver.dashboard.routes import PREFIX as DASHBOARD_PREFIX
from kuberay.apiserver.dashboard.routes import add_dashboard_routes
from kuberay.apiserver.dashboard.why import add_why_route
from kuberay.apiserver.dashboard.yaml_json import add_yaml_route
from kuberay.apiserver.guard import guard_middleware
from kuberay.apiserver.kube_calls import KubeCall
from kuberay.apiserver.metrics import ApiServerMetrics
from kuberay.apiserver.options import CALLER, ApiServerOptions
from kuberay.apiserver.proxy import IDENTITY, ROUTE_NAME, BodyRewriter, V2Proxy, not_found
from kuberay.apiserver.retry import RetryPolicy
from kuberay.apiserver.upstream import Upstream

#: Adds routes that ask the kube-apiserver through ``call_of(request)``.
RouteAdder = Callable[[web.UrlDispatcher, Callable[[web.Request], KubeCall]], None]
UPSTREAM: web.AppKey[Upstream] = web.AppKey("kuberay_upstream", Upstream)


def _route_of(request: web.Request) -> str:
    if ROUTE_NAME in request:
        return request[ROUTE_NAME]
    resource = request.match_info.route.resource
    name = resource.name if resource is not None else None
    return name or "unknown"


async def _healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok\n")


async def _not_found(_request: web.Request) -> web.Response:
    return not_found()


def make_app(
    options: ApiServerOptions,
    upstream: Upstream,
    *,
    rewrite: BodyRewriter | None = None,
    extra_routes: RouteAdder | None = None,
    policy: RetryPolicy | None = None,
) -> web.Application:
    """The application for ``options`` over ``upstream`` (see the module doc)."""
    metrics = ApiServerMetrics(_route_of)
    cors = Cors(options.cors_allow_origin)
    app = web.Application(middlewares=[metrics.middleware])
    cors.install(app)
    dashboard = options.enable_dashboard and options.enable_v2
    public = (DASHBOARD_PREFIX,) if dashboard else ()
    private = (DASHBOARD_API,) if dashboard else ()
    app.middlewares.append(guard_middleware(options.auth_mode == CALLER, public, private))
    app[UPSTREAM] = upstream
    router = app.router
    router.add_get("/healthz", _healthz, name="healthz", allow_head=True)
    if options.collect_metrics:
        router.add_get("/metrics", metrics.handle, name="metrics")
    if dashboard:
        add_pods_route(router, upstream)
        add_yaml_route(router)
        add_why_route(router, upstream)
        add_driver_log_route(router, upstream)
        if options.history_server_url:
            add_history_route(app, upstream, options.history_server_url)
        add_dashboard_routes(
            router, options.auth_mode, history_server=bool(options.history_server_url)
        )

    def call_of(request: web.Request) -> KubeCall:
        return upstream.call_for(request[IDENTITY])

    if extra_routes is not None:
        extra_routes(router, call_of)
    proxy = V2Proxy(upstream, rewrite=rewrite, policy=policy)
    handler: Any = proxy.handle if options.enable_v2 else _not_found
    router.add_route("*", "/{tail:.*}", handler, name="v2")
    return app
