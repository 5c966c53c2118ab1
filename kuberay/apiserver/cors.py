"""``--cors-allow-origin``: upstream's CORS (``rs/cors`` with one allowed origin).

Empty (the default): no CORS headers at all. Set: an answer to a request whose ``Origin`` is
the allowed one (or any, for ``*``) carries ``Access-Control-Allow-Origin`` and
``Vary: Origin`` (added as the answer's head is prepared, so streamed answers get them too);
a preflight (``OPTIONS`` with ``Access-Control-Request-Method``) is answered 204 here,
without credentials, allowing GET, POST, PUT, PATCH, DELETE, OPTIONS and the headers a
client of this server sends (``Authorization`` included, since callers carry their token).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
ALLOWED_HEADERS = "Authorization, Content-Type, Accept, Origin, X-Requested-With"


def is_preflight(request: web.Request) -> bool:
    """An ``OPTIONS`` request asking which method it may use."""
    return request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers


class Cors:
    """CORS for one allowed origin (see the module doc)."""

    def __init__(self, allow_origin: str) -> None:
        self.allow_origin = allow_origin

    def allowed(self, request: web.Request) -> bool:
        """The request's ``Origin`` is allowed."""
        origin = request.headers.get("Origin", "")
        return bool(origin) and self.allow_origin in ("*", origin)

    @web.middleware
    async def preflight(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Answer preflights; pass everything else on."""
        if not is_preflight(request):
            return await handler(request)
        response = web.Response(status=204)
        if self.allowed(request):
            response.headers["Access-Control-Allow-Methods"] = ALLOWED_METHODS
            response.headers["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
        return response

    async def on_prepare(self, request: web.Request, response: web.StreamResponse) -> None:
        """Add the origin headers to an allowed request's answer."""
        if self.allowed(request):
            origin = request.headers["Origin"]
            response.headers["Access-Control-Allow-Origin"] = (
                "*" if self.allow_origin == "*" else origin
            )
            response.headers.add("Vary", "Origin")

    def install(self, app: web.Application) -> None:
        """Hook into ``app`` (a no-op without an allowed origin)."""
        if self.allow_origin:
            app.middlewares.append(self.preflight)
            app.on_response_prepare.append(self.on_prepare)
