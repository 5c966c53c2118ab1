"""Serving Ray's dashboard UI and the cluster picker (registered after every API route).

* ``GET /select_cluster``: the picker page (``ui_pages.SELECT_CLUSTER_PAGE``).
* ``GET /`` (and ``/index.html``): without a usable session cookie, the picker; with one,
  the ``index.html`` of the UI build for the session's Ray version (``rayVersion`` of its
  stored ``/api/v0/cluster_metadata``; ``ui_builds.UiBuilds.pick``), or, with no build at
  all, a page saying how to provide one.
* ``GET /{path}`` (anything else): a file of the chosen build (another build's when the
  chosen one lacks it: asset names are content-hashed); for a missing path without a file
  extension asked for as HTML (a client-side route), ``index.html``; otherwise 404.

Caching: ``index.html`` and the server's pages ``no-cache`` (a session change must reach
the browser); ``static/**`` (content-hashed names) a year, ``immutable``; other build files
an hour. Files are sent with ``FileResponse`` (conditional and ranged requests included).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kuberay.historyserver.layout import CLUSTER_METADATA_ENDPOINT
from kuberay.historyserver.server.context import (
    ApiError,
    cluster_from_cookies,
    get_session,
    state_of,
)
from kuberay.historyserver.server.ui_builds import UiBuild, UiBuilds
from kuberay.historyserver.server.ui_pages import SELECT_CLUSTER_PAGE, no_ui_page

UI: web.AppKey[UiBuilds] = web.AppKey("ui_builds", UiBuilds)

NO_CACHE = "no-cache"
IMMUTABLE = "public, max-age=31536000, immutable"
SHORT = "public, max-age=3600"


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html", headers={"Cache-Control": NO_CACHE})


def ray_version(metadata: Any) -> str | None:
    """``rayVersion`` from a stored ``/api/v0/cluster_metadata`` body (enveloped or not)."""
    if not isinstance(metadata, dict):
        return None
    data = metadata.get("data", metadata)
    version = data.get("rayVersion") if isinstance(data, dict) else None
    return version if isinstance(version, str) and version else None


async def session_version(request: web.Request) -> tuple[bool, str | None]:
    """Whether the cookies select a loadable session, and its Ray version if stored."""
    if not request.cookies.get("session_name"):
        return False, None
    try:
        ref, session = cluster_from_cookies(request)
        snap = await get_session(state_of(request), ref, session)
    except ApiError:
        return False, None
    return True, ray_version(snap.endpoints.get(CLUSTER_METADATA_ENDPOINT))


def _file(path: Any, cache: str) -> web.FileResponse:
    return web.FileResponse(path, headers={"Cache-Control": cache})


async def select_cluster(_request: web.Request) -> web.Response:
    """``GET /select_cluster``."""
    return _html(SELECT_CLUSTER_PAGE)


async def _index_for(request: web.Request) -> web.StreamResponse:
    has_session, version = await session_version(request)
    if not has_session:
        return _html(SELECT_CLUSTER_PAGE)
    build = request.app[UI].pick(version)
    if build is None:
        return _html(no_ui_page(version))
    index = build.file("index.html")
    if index is None:
        return _html(no_ui_page(version))
    return _file(index, NO_CACHE)


async def index(request: web.Request) -> web.StreamResponse:
    """``GET /`` and ``/index.html``."""
    return await _index_for(request)


def _candidates(builds: UiBuilds, first: UiBuild | None) -> list[UiBuild]:
    rest = [b for b in builds.builds if b is not first]
    return ([first] if first is not None else []) + rest


async def asset(request: web.Request) -> web.StreamResponse:
    """``GET /{path}``: a build file, ``index.html`` for a client route, or 404."""
    rel = request.match_info["path"]
    builds = request.app[UI]
    if builds:
        _, version = await session_version(request)
        for build in _candidates(builds, builds.pick(version)):
            found = build.file(rel)
            if found is not None:
                if rel == "index.html":
                    return _file(found, NO_CACHE)
                return _file(found, IMMUTABLE if rel.startswith("static/") else SHORT)
    last = rel.rsplit("/", 1)[-1]
    if "." not in last and "text/html" in request.headers.get("Accept", ""):
        return await _index_for(request)
    raise web.HTTPNotFound(text=f"/{rel} not found")


def add_routes(app: web.Application, builds: UiBuilds) -> None:
    """Add the UI routes to ``app`` (after every other route: the last one catches all)."""
    app[UI] = builds
    r = app.router
    r.add_get("/select_cluster", select_cluster)
    r.add_get("/", index)
    r.add_get("/index.html", index)
    r.add_get("/{path:.+}", asset)
