"""What every request passes before a route sees it: its path checked, its identity found.

* The path (as sent) must pass :func:`kuberay.apiserver.request_path.parse_path`: 400
  naming the problem otherwise (never echoing the path).
* ``--auth-mode=caller``: a request must carry ``Authorization: Bearer <token>``; without
  one it is answered 401 with a Kubernetes ``Status`` body and ``WWW-Authenticate: Bearer``
  (the token itself is checked by the kube-apiserver when the request is forwarded).
  :data:`PUBLIC_PATHS` need no credentials, nor do the ``public_trees`` given (a path and
  everything below it: the dashboard's files, which hold no cluster data), except the
  ``private_trees`` within them (the dashboard's own API, which reads cluster data).
  ``--auth-mode=service-account``: every request goes as the server.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from aiohttp import web

from kuberay.apiserver.identity import SERVER, MissingCredentials, caller_identity
from kuberay.apiserver.proxy import IDENTITY, REQUEST_PATH, ROUTE_NAME
from kuberay.apiserver.request_path import BadPath, parse_path

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: Paths answered without credentials (counts and liveness only; no object data).
PUBLIC_PATHS = frozenset({"/healthz", "/metrics"})


def status_body(code: int, reason: str, message: str) -> bytes:
    """A Kubernetes ``Status`` failure, as the apiserver writes one."""
    return json.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
    ).encode()


def _within(raw_path: str, trees: tuple[str, ...]) -> bool:
    return any(raw_path == tree or raw_path.startswith(tree + "/") for tree in trees)


def is_public(
    raw_path: str, public_trees: tuple[str, ...] = (), private_trees: tuple[str, ...] = ()
) -> bool:
    """Whether ``raw_path`` (as sent) is answered without credentials."""
    if raw_path in PUBLIC_PATHS:
        return True
    return _within(raw_path, public_trees) and not _within(raw_path, private_trees)


def guard_middleware(
    caller_mode: bool, public_trees: tuple[str, ...] = (), private_trees: tuple[str, ...] = ()
) -> Callable[..., Awaitable[web.StreamResponse]]:
    """The middleware (see the module doc)."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        raw_path = request.raw_path.partition("?")[0]
        try:
            request[REQUEST_PATH] = parse_path(raw_path)
        except BadPath as exc:
            request[ROUTE_NAME] = "bad-path"
            return web.Response(status=400, text=f"invalid path: {exc}\n")
        if is_public(raw_path, public_trees, private_trees):
            return await handler(request)
        if not caller_mode:
            request[IDENTITY] = SERVER
            return await handler(request)
        try:
            request[IDENTITY] = caller_identity(request.headers.get("Authorization"))
        except MissingCredentials as exc:
            request[ROUTE_NAME] = "unauthorized"
            return web.Response(
                status=401,
                body=status_body(401, "Unauthorized", f"Unauthorized: {exc}"),
                content_type="application/json",
                headers={"WWW-Authenticate": 'Bearer realm="kuberay-apiserver"'},
            )
        return await handler(request)

    return guard
