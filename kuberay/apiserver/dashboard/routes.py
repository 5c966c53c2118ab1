"""The dashboard's routes: ``GET /dashboard`` redirects to ``/dashboard/`` (the query kept),
``GET /dashboard/`` is ``index.html``, ``GET /dashboard/config.json`` the page's
configuration (:mod:`.config`), ``GET /dashboard/<file>`` one of the loaded files
(:mod:`.assets`); anything else under ``/dashboard/`` is 404, other methods 405.

No credentials are needed (a browser cannot send a bearer token when it opens a page); the
files hold no cluster data: every object the page shows comes from the API routes, which
check the caller as any client's request. Every answer carries :data:`SECURITY_HEADERS`: a
Content Security Policy allowing only this origin's scripts, styles and connections (no
inline script or style, no framing, no plugins, Trusted Types enforced), ``nosniff`` and no
referrer. Files are revalidated on each load (``no-cache`` with a strong ``ETag``), so an
upgraded server is picked up at once.
"""

from __future__ import annotations

import json

from aiohttp import web

from kuberay.apiserver.dashboard.assets import Asset, load_assets
from kuberay.apiserver.dashboard.config import dashboard_config

#: Where the dashboard lives: this path and everything below it.
PREFIX = "/dashboard"
INDEX = "index.html"
CONFIG = "config.json"
ROUTE_NAME = "dashboard"

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class Dashboard:
    """The handlers over loaded ``assets`` and the JSON of :func:`dashboard_config`."""

    def __init__(self, assets: dict[str, Asset], auth_mode: str, history_server: bool) -> None:
        self.assets = assets
        config = dashboard_config(auth_mode, history_server)
        self.config = json.dumps(config, separators=(",", ":")).encode()

    async def redirect(self, request: web.Request) -> web.Response:
        """``/dashboard`` -> ``dashboard/`` (relative, so a path prefix in front is kept)."""
        query = request.rel_url.raw_query_string
        location = "dashboard/" + (f"?{query}" if query else "")
        return web.Response(status=301, headers={**SECURITY_HEADERS, "Location": location})

    async def serve(self, request: web.Request) -> web.Response:
        """One file, the configuration, or 404."""
        name = request.match_info.get("name") or INDEX
        if name == CONFIG:
            headers = {**SECURITY_HEADERS, "Cache-Control": "no-store"}
            return web.Response(body=self.config, content_type="application/json", headers=headers)
        asset = self.assets.get(name)
        if asset is None:
            return web.Response(
                status=404, text="404 page not found\n", headers=dict(SECURITY_HEADERS)
            )
        headers = {**SECURITY_HEADERS, "Cache-Control": "no-cache", "ETag": asset.etag}
        if asset.etag in _etags(request.headers.get("If-None-Match", "")):
            return web.Response(status=304, headers=headers)
        headers["Content-Type"] = asset.content_type
        return web.Response(body=asset.body, headers=headers)


async def _method_not_allowed(_request: web.Request) -> web.Response:
    headers = {**SECURITY_HEADERS, "Allow": "GET, HEAD"}
    return web.Response(status=405, text="Method Not Allowed\n", headers=headers)


def _etags(header: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}


def add_dashboard_routes(
    router: web.UrlDispatcher,
    auth_mode: str,
    assets: dict[str, Asset] | None = None,
    history_server: bool = False,
) -> None:
    """Add the routes (see the module doc); ``assets`` default to the package's files;
    ``history_server``: the server has ``--history-server-url``."""
    dashboard = Dashboard(load_assets() if assets is None else assets, auth_mode, history_server)
    for path, handler, name in (
        (PREFIX, dashboard.redirect, f"{ROUTE_NAME}-redirect"),
        (PREFIX + "/{name:.*}", dashboard.serve, ROUTE_NAME),
    ):
        resource = router.add_resource(path, name=name)
        resource.add_route("GET", handler)
        resource.add_route("HEAD", handler)
        resource.add_route("*", _method_not_allowed)
