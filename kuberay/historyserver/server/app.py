"""The aiohttp application: shared state, the session context of a request, error answers.

A request's session comes from the cookies ``/enter_cluster`` sets (KubeRay's names:
``cluster_name``, ``cluster_namespace``, ``session_name``, ``owner_kind``, ``owner_name``).
Each cookie is checked as a layout segment before it becomes part of any key: a value that
could leave the layout (``..``, ``/``, ...) is a 400, a missing cookie a 400, a session with
nothing stored a 404. The session is then taken from the cache (loaded once on first use).

Errors are answered in the dashboard's envelope ``{"result": false, "msg": ..., "data": {}}``
with the HTTP status saying what went wrong.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import attrs
import orjson
import structlog
from aiohttp import web

from kuberay.historyserver.layout import ClusterRef, Layout, LayoutError, check_segment
from kuberay.historyserver.server.answers import AnswerCache
from kuberay.historyserver.server.cache import SessionCache
from kuberay.historyserver.server.clusters import ClusterIndex
from kuberay.historyserver.server.freshness import DEFAULT_INTERVAL, Freshness
from kuberay.historyserver.server.live import LIVE_SESSION, LiveClusters
from kuberay.historyserver.server.live_proxy import LiveProxy
from kuberay.historyserver.server.session import (
    SessionKey,
    SessionNotFound,
    SessionSnapshot,
    load_session,
)
from kuberay.historyserver.server.ui_builds import UiBuilds
from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.errors import StorageError

log = structlog.get_logger("historyserver.server")

COOKIE_NAMES = ("cluster_name", "cluster_namespace", "session_name", "owner_kind", "owner_name")
COOKIE_MAX_AGE = 600
#: KubeRay's ``http.Server`` timeouts (read 5 s, write 35 s, idle 60 s). aiohttp has no
#: request-read deadline (our routes are GETs without bodies); the write deadline becomes a
#: bound on each handler (``deadline_middleware``: 504, a session load keeps going in the
#: background and is cached for the next request); idle is the keep-alive timeout.
READ_TIMEOUT = 5.0
WRITE_TIMEOUT = 35.0
IDLE_TIMEOUT = 60.0


@attrs.define
class ServerState:
    """What every handler shares: the store, the storage root, the session cache, the
    cluster index, and (``--enable-live-clusters``) the live clusters and their proxy."""

    store: ObjectStore
    root: str
    cache: SessionCache[SessionKey, SessionSnapshot]
    clusters: ClusterIndex
    live: LiveClusters | None = None
    proxy: LiveProxy | None = None
    freshness: Freshness | None = None
    answers: AnswerCache = attrs.field(factory=AnswerCache)


STATE: web.AppKey[ServerState] = web.AppKey("history_state", ServerState)
#: ``async (namespaces) -> the readable ones``: what the Kubernetes login allows a caller.
NamespaceFilter = Callable[[Iterable[str]], Awaitable[set[str]]]
#: Request key set by the Kubernetes login (absent: every namespace may be read).
ALLOWED_NAMESPACES: web.RequestKey[NamespaceFilter] = web.RequestKey("kuberay_allowed_namespaces")


class ApiError(Exception):
    """An error answer: HTTP ``status`` and a one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def envelope(data: dict[str, Any], *, message: str = "") -> dict[str, Any]:
    """The dashboard's ``rest_response`` body for a success."""
    return {"result": True, "msg": message, "data": data}


def list_envelope(
    items: list[dict[str, Any]], *, total: int, num_filtered: int | None = None
) -> dict[str, Any]:
    """The state API's list answer (``ListApiResponse`` inside ``rest_response``)."""
    return envelope(
        {
            "result": {
                "total": total,
                "num_after_truncation": total,
                "num_filtered": len(items) if num_filtered is None else num_filtered,
                "result": items,
                "partial_failure_warning": "",
                "warnings": None,
            }
        }
    )


def json_response(body: Any, status: int = 200) -> web.Response:
    """``body`` as JSON, spaced as Ray's dashboard (aiohttp's ``json.dumps``) writes it."""
    return web.json_response(body, status=status)


def encode_json(body: Any) -> bytes:
    """``body`` encoded compactly by orjson, for the big answers (a 10,000-task answer is
    encoded several times faster than by the standard library); JSON readers see no
    difference."""
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)


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
OWN_PATHS = ("/clusters", "/select_cluster", "/readz", "/livez", "/login", "/logout")
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


def state_of(request: web.Request) -> ServerState:
    """The shared ``ServerState``."""
    return request.app[STATE]


def cluster_from_cookies(request: web.Request) -> tuple[ClusterRef, str]:
    """The cluster and session the cookies name, checked; ``ApiError(400)`` otherwise."""
    cookies = request.cookies
    name, namespace, session = (
        cookies.get("cluster_name"),
        cookies.get("cluster_namespace"),
        cookies.get("session_name"),
    )
    if not name or not namespace or not session:
        raise ApiError(
            400,
            "no cluster selected: call /enter_cluster/<namespace>/<kind>/<name>[/<session>] "
            "first (it sets the cluster_name, cluster_namespace and session_name cookies)",
        )
    if session == LIVE_SESSION:
        raise ApiError(
            400, "live clusters are not served: start the server with --enable-live-clusters"
        )
    try:
        ref = ClusterRef.make(
            namespace, name, cookies.get("owner_kind", ""), cookies.get("owner_name", "")
        )
        check_segment(session, "session name")
    except LayoutError as exc:
        raise ApiError(400, str(exc)) from None
    return ref, session


async def get_session(state: ServerState, ref: ClusterRef, session: str) -> SessionSnapshot:
    """The decoded session from the cache; 404 when nothing is stored, 504 on a load
    timeout."""
    key = SessionKey(Layout(ref, root=state.root), session)
    try:
        snapshot = await state.cache.get(key)
    except SessionNotFound:
        raise ApiError(404, f"session {key.describe()} not found") from None
    except TimeoutError:
        raise ApiError(504, f"loading session {key.describe()} timed out") from None
    if state.freshness is not None:
        state.freshness.used(snapshot)
    return snapshot


async def current_session(request: web.Request) -> SessionSnapshot:
    """The session the request's cookies select."""
    ref, session = cluster_from_cookies(request)
    return await get_session(state_of(request), ref, session)


def query_int(request: web.Request, name: str, default: int, *, lo: int, hi: int) -> int:
    """An integer query parameter within ``[lo, hi]``; ``ApiError(400)`` when malformed."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer, got {raw!r}") from None
    if not lo <= value <= hi:
        raise ApiError(400, f"{name} must be between {lo} and {hi}, got {value}")
    return value


def query_bool(request: web.Request, name: str, default: bool) -> bool:
    """A boolean query parameter (``1``/``true``/``yes`` or ``0``/``false``/``no``)."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "t"):
        return True
    if value in ("0", "false", "no", "f"):
        return False
    raise ApiError(400, f"{name} must be true or false, got {raw!r}")


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
    from kuberay.historyserver.server import (
        routes_extra,
        routes_logs,
        routes_session,
        routes_state,
        routes_ui,
    )

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
    if extra_routes is not None:
        extra_routes(app)
    routes_ui.add_routes(app, ui if ui is not None else UiBuilds())
    return app
