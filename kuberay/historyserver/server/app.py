"""The aiohttp application: its middlewares and routes over the shared state (the session
context of a request is :mod:`~kuberay.historyserver.server.context`).

Errors are answered in the dashboard's envelope ``{"result": false, "msg": ..., "data": {}}``
with the HTTP status saying what went wrong.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog
from aiohttp import web

from kuberay.historyserver.layout import LayoutError
from kuberay.historyserver.server import (
    metrics,
    routes_extra,
    routes_logs,
    routes_session,
    routes_state,
    routes_ui,
)
from kuberay.historyserver.server.cache import SessionCache
from kuberay.historyserver.server.clusters import ClusterIndex
from kuberay.historyserver.server.context import (
    STATE,
    ApiError,
    ServerState,
    json_response,
)
from kuberay.historyserver.server.freshness import DEFAULT_INTERVAL, Freshness
from kuberay.historyserver.server.live import LIVE_SESSION, LiveClusters
from kuberay.historyserver.server.live_proxy import LiveProxy
from kuberay.historyserver.server.session import (
    SessionKey,
    SessionSnapshot,
    load_session,
)
from kuberay.historyserver.server.ui_builds import UiBuilds
from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.errors import StorageError

log = structlog.get_logger("historyserver.server")

#: KubeRay's ``http.Server`` timeouts (read 5 s, write 35 s, idle 60 s). aiohttp has no
#: request-read deadline (our routes are GETs without bodies); the write deadline becomes a
#: bound on each handler (``deadline_middleware``: 504, a session load keeps going in the
#: background and is cached for the next request); idle is the keep-alive timeout.
READ_TIMEOUT = 5.0
WRITE_TIMEOUT = 35.0
IDLE_TIMEOUT = 60.0


@web.middleware
async def error_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Turn ``ApiError``, layout errors and storage failures into enveloped answers."""
    try:
        return await handler(request)
    except ApiError as exc:
        return json_response({"result": False, "msg": exc.message, "data": {}}, exc.status)
    except LayoutError as exc:
        return json_response({"result": False, "msg": str(exc), "data": {}}, 400)
    except StorageError as exc:
        log.error("storage failure", path=request.path, error=str(exc))
        return json_response({"result": False, "msg": f"storage error: {exc}", "data": {}}, 502)


def deadline_middleware(seconds: float) -> Callable[..., Awaitable[web.StreamResponse]]:
    """A middleware answering 504 when a handler takes longer than ``seconds`` (``0``: no
    bound). It bounds producing the response, not sending a streamed file."""

    @web.middleware
    async def deadline(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if seconds <= 0:
            return await handler(request)
        try:
            async with asyncio.timeout(seconds):
                return await handler(request)
        except TimeoutError:
            log.warning("request deadline exceeded", path=request.path, seconds=seconds)
            return json_response(
                {"result": False, "msg": f"request took longer than {seconds:g}s", "data": {}},
                504,
            )

    return deadline


#: Paths the history server answers itself even when the cookies select a live cluster.
OWN_PATHS = (
    "/clusters",
    "/select_cluster",
    "/readz",
    "/livez",
    "/metrics",
    "/login",
    "/logout",
)
OWN_PREFIXES = ("/enter_cluster/",)
#: With ``--use-auth-token-mode`` the server adds the cluster's token itself, so Ray's UI is
#: told no token is needed (it would otherwise ask the user for one, which is then dropped).
AUTH_MODE_PATH = "/api/authentication_mode"


@web.middleware
async def live_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Send a request whose cookies select a live cluster to that cluster's dashboard
    (``live_proxy``), except the server's own routes (and, in auth-token mode,
    ``/api/authentication_mode``)."""
    proxy = request.app[STATE].proxy
    if (
        proxy is None
        or request.cookies.get("session_name") != LIVE_SESSION
        or request.path in OWN_PATHS
        or request.path.startswith(OWN_PREFIXES)
        or (proxy.live.auth_token_mode and request.path == AUTH_MODE_PATH)
    ):
        return await handler(request)
    return await proxy.forward(request)


def make_app(
    store: ObjectStore,
    *,
    root: str = "",
    cache_size: int = 100,
    cache_max_bytes: int = 2 << 30,
    cache_ttl: float = 0.0,
    load_timeout: float = 120.0,
    cluster_list_ttl: float = 10.0,
    handler_timeout: float = WRITE_TIMEOUT,
    ui: UiBuilds | None = None,
    live: LiveClusters | None = None,
    proxy: LiveProxy | None = None,
    middlewares: tuple[Callable[..., Awaitable[web.StreamResponse]], ...] = (),
    extra_routes: Callable[[web.Application], None] | None = None,
    reload_interval: float = DEFAULT_INTERVAL,
) -> web.Application:
    """The application over ``store`` (opened without a root: ``root`` goes into keys, as
    the collector writes them); ``handler_timeout`` bounds each handler (``0``: none);
    ``ui`` the dashboard UI builds to serve at ``/`` (none: a page saying how to add one);
    ``live``/``proxy`` serve live clusters (``--enable-live-clusters``); ``middlewares`` run
    first (the Kubernetes login), ``extra_routes`` adds routes before the UI's catch-all;
    ``reload_interval`` how often a session still being written is checked for changes
    (``freshness``; ``0``: never).
    Closing the store (and the proxy) is the caller's
    business."""

    async def loader(key: SessionKey) -> SessionSnapshot:
        return await load_session(store, key)

    cache: SessionCache[SessionKey, SessionSnapshot] = SessionCache(
        loader,
        max_entries=cache_size,
        max_bytes=cache_max_bytes,
        ttl=cache_ttl,
        load_timeout=load_timeout,
    )
    app = web.Application(
        middlewares=[
            deadline_middleware(handler_timeout),
            *middlewares,
            error_middleware,
            live_middleware,
        ]
    )
    clusters = ClusterIndex(store, root, ttl=cluster_list_ttl)
    app[STATE] = ServerState(
        store=store,
        root=root,
        cache=cache,
        clusters=clusters,
        live=live,
        proxy=proxy,
        freshness=(
            Freshness(store, cache, clusters, live=live, interval=reload_interval)
            if reload_interval > 0
            else None
        ),
    )
    freshness = app[STATE].freshness
    if freshness is not None:
        app.on_cleanup.append(lambda _app: freshness.close())
    routes_session.add_routes(app)
    routes_state.add_routes(app)
    routes_logs.add_routes(app)
    routes_extra.add_routes(app)
    metrics.add_routes(app)
    if extra_routes is not None:
        extra_routes(app)
    routes_ui.add_routes(app, ui if ui is not None else UiBuilds())
    return app
