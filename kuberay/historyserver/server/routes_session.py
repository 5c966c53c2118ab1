"""Routes that pick a session or need none: ``/clusters``, ``/enter_cluster``, health, and
the dashboard's fixed answers (authentication mode, profiling).

* ``GET /clusters[?limit=&offset=][&reload=true]``: every stored session, newest first, no
  cap (KubeRay caps at 100); ``limit``/``offset`` page through it, ``X-Total-Count`` gives
  the total. The marker listing is cached for ``--cluster-list-ttl``; ``reload=true`` (the
  picker's Reload button) lists again now.
* ``GET /enter_cluster/{ns}/{kind}/{name}[/{session}]``: ``kind`` is ``raycluster``
  (``name`` is the cluster, whoever owns it, as in KubeRay's ``resolveSession``) or
  ``rayjob``/``rayservice`` (``name`` is the owner); the session defaults to the newest.
  Loads the session (so the first page is fast), sets KubeRay's five cookies
  (``Max-Age=600``, ``Path=/``) and answers ``{result, name, namespace, session}``.
  Unknown cluster or session: 404.
  ``?reload=true`` (KubeRay v1.8's spelling) drops the session from the cache and re-reads
  the cluster list first, so files stored since the first load are seen.
  With ``--enable-live-clusters`` a live cluster is tried first when the session is
  ``latest`` or ``live`` (KubeRay's order): the cookies then say ``session_name=live`` and
  every later request is proxied to its dashboard (``live_proxy``); ``live`` for a cluster
  that is not live is a 404.
"""

from __future__ import annotations

from typing import Any

import structlog
from aiohttp import web

from kuberay.historyserver.layout import (
    OWNER_KINDS,
    RAYCLUSTER_KIND,
    Layout,
    LayoutError,
    check_segment,
)
from kuberay.historyserver.server.context import (
    ALLOWED_NAMESPACES,
    COOKIE_MAX_AGE,
    ApiError,
    ServerState,
    envelope,
    get_session,
    json_response,
    query_bool,
    query_int,
    state_of,
)
from kuberay.historyserver.server.live import LIVE_SESSION, LiveError
from kuberay.historyserver.server.session import SessionKey

log = structlog.get_logger("historyserver.server.session_routes")


async def clusters(request: web.Request) -> web.Response:
    """``GET /clusters``: live clusters first (with ``--enable-live-clusters``), then the
    stored sessions; with the Kubernetes login only those of namespaces the caller may read."""
    state = state_of(request)
    reload = query_bool(request, "reload", False)
    entries: list[dict[str, Any]] = []
    if state.live is not None:
        entries = [c.as_json() for c in await state.live.entries(refresh=reload)]
    entries += await state.clusters.entries(refresh=reload)
    allowed = request.get(ALLOWED_NAMESPACES)
    if allowed is not None:
        namespaces = {e["namespace"] for e in entries}
        readable = await allowed(namespaces)
        entries = [e for e in entries if e["namespace"] in readable]
    offset = query_int(request, "offset", 0, lo=0, hi=1 << 31)
    limit = query_int(request, "limit", len(entries), lo=0, hi=1 << 31)
    response = json_response(entries[offset : offset + limit])
    response.headers["X-Total-Count"] = str(len(entries))
    return response


def _set_cookies(
    response: web.Response, name: str, namespace: str, session: str, kind: str, owner: str
) -> None:
    for cookie, value in (
        ("cluster_name", name),
        ("cluster_namespace", namespace),
        ("session_name", session),
        ("owner_kind", kind),
        ("owner_name", owner),
    ):
        response.set_cookie(cookie, value, max_age=COOKIE_MAX_AGE, path="/")


async def _enter_live(
    state: ServerState, namespace: str, kind: str, name: str, session: str
) -> web.Response | None:
    """Enter the live cluster the path names; ``None`` when there is none and ``session`` is
    ``latest`` (the stored sessions are tried next)."""
    if state.live is None:
        if session == LIVE_SESSION:
            raise ApiError(
                400, "live clusters are not served: start the server with --enable-live-clusters"
            )
        return None
    try:
        found = await state.live.find(namespace, kind, name)
    except LiveError as exc:
        raise ApiError(exc.status, exc.message) from None
    if found is None:
        if session == LIVE_SESSION:
            raise ApiError(404, f"{kind} {namespace}/{name} is not live")
        return None
    response = json_response(
        {"result": "success", "name": found.name, "namespace": namespace, "session": LIVE_SESSION}
    )
    _set_cookies(response, found.name, namespace, LIVE_SESSION, found.owner_kind, found.owner_name)
    return response


async def enter_cluster(request: web.Request) -> web.Response:
    """``GET /enter_cluster/{namespace}/{kind}/{name}[/{session}]``."""
    info = request.match_info
    kind = info["kind"].strip().lower()
    if kind != RAYCLUSTER_KIND and kind not in OWNER_KINDS:
        raise ApiError(
            400, f"unsupported kind {info['kind']!r}: use raycluster, rayjob or rayservice"
        )
    session = info.get("session") or "latest"
    try:
        namespace = check_segment(info["namespace"], "namespace")
        name = check_segment(info["name"], "name")
        if session != "latest":
            check_segment(session, "session name")
    except LayoutError as exc:
        raise ApiError(400, str(exc)) from None
    state = state_of(request)
    if session in ("latest", LIVE_SESSION):
        live = await _enter_live(state, namespace, kind, name, session)
        if live is not None:
            return live
    reload = query_bool(request, "reload", False)
    if reload:
        await state.clusters.sessions(refresh=True)
    found = await state.clusters.find(namespace, kind, name, session)
    if found is None:
        what = f"{kind} {namespace}/{name}" + ("" if session == "latest" else f" session {session}")
        raise ApiError(404, f"{what} not found in storage")
    if reload:
        state.cache.invalidate(SessionKey(Layout(found.cluster, root=state.root), found.session))
        log.info("session reload requested", cluster=found.cluster.name, session=found.session)
    await get_session(state, found.cluster, found.session)
    c = found.cluster
    response = json_response(
        {"result": "success", "name": c.name, "namespace": c.namespace, "session": found.session}
    )
    _set_cookies(response, c.name, c.namespace, found.session, c.owner_kind, c.owner_name)
    return response


async def ok(_request: web.Request) -> web.Response:
    """``GET /readz`` and ``/livez``."""
    return web.Response(text="ok")


async def authentication_mode(_request: web.Request) -> web.Response:
    """``GET /api/authentication_mode``: stored sessions need no Ray token."""
    return json_response({"authentication_mode": "disabled"})


async def profiling_enabled(_request: web.Request) -> web.Response:
    """``GET /api/profiling_enabled``: a stored session has no process to profile."""
    return json_response(envelope({"profilingEnabled": False, "profilingDefaults": {}}))


def add_routes(app: web.Application) -> None:
    """Add this module's routes to ``app``."""
    r = app.router
    r.add_get("/clusters", clusters)
    r.add_get("/enter_cluster/{namespace}/{kind}/{name}", enter_cluster)
    r.add_get("/enter_cluster/{namespace}/{kind}/{name}/{session}", enter_cluster)
    r.add_get("/readz", ok)
    r.add_get("/livez", ok)
    r.add_get("/api/authentication_mode", authentication_mode)
    r.add_get("/api/profiling_enabled", profiling_enabled)
