"""The optional Kubernetes login (``--kubernetes-login``, off by default; KubeRay's server has
none): who the caller is, and which namespaces it may read.

* Every route but ``/readz``, ``/livez``, ``/login`` and ``/logout`` needs a Kubernetes token:
  ``Authorization: Bearer <token>``, or the ``kuberay_history_token`` cookie ``POST /login``
  sets (``HttpOnly``, ``SameSite=Strict``, one hour). The token is checked with a TokenReview;
  none or a rejected one is a 401 (a browser asking for HTML is sent to ``/login``).
* A caller may read a namespace when a SubjectAccessReview says its user may ``get``
  ``rayclusters.ray.io`` there. ``/enter_cluster/{ns}/...`` and every request whose cookies
  name a cluster check that namespace (403 otherwise); ``/clusters`` lists only the readable
  namespaces' clusters.
* Answers are kept ``ttl`` seconds (60; a rejected token 10 s) by a hash of the token and by
  (user, namespace), so a page's burst of requests costs no apiserver round trips.
* The server's own credentials need ``create`` on ``tokenreviews`` and
  ``subjectaccessreviews`` (``system:auth-delegator`` grants both).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable, Iterable

import structlog
from aiohttp import web

from kuberay.historyserver.server.context import ALLOWED_NAMESPACES
from kuberay.historyserver.server.identity import (
    ACCESS_REVIEWS,
    LOGIN_USER,
    KubeRequests,
    User,
    review_body,
)

__all__ = [
    "ACCESS_REVIEWS",
    "LOGIN_USER",
    "KubeLogin",
    "KubeRequests",
    "User",
    "login_middleware",
    "review_body",
]

log = structlog.get_logger("historyserver.server.login")

TOKEN_COOKIE = "kuberay_history_token"
COOKIE_MAX_AGE = 3600
#: Paths served without a login: the probes, the login itself and the metrics (counts only,
#: scraped by Prometheus, which holds no user token).
OPEN_PATHS = frozenset({"/readz", "/livez", "/login", "/logout", "/metrics"})
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"

LOGIN_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Ray history server: log in</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>Log in with a Kubernetes token</h1>
<p>For example the output of <code>kubectl create token &lt;service account&gt;</code>.</p>
<form method="post" action="/login">
<input type="password" name="token" size="60" autofocus>
<button type="submit">Log in</button>
</form></body></html>
"""


class KubeLogin:
    """TokenReview and SubjectAccessReview, with their answers kept a while."""

    def __init__(
        self,
        kube: KubeRequests,
        *,
        ttl: float = 60.0,
        rejected_ttl: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.ttl = ttl
        self.rejected_ttl = rejected_ttl
        self._clock = clock
        self._users: dict[str, tuple[float, User | None]] = {}
        self._access: dict[tuple[User, str], tuple[float, bool]] = {}
        self.reviews = 0

    async def user(self, token: str) -> User | None:
        """Who ``token`` belongs to; ``None`` when the apiserver does not accept it."""
        key = hashlib.sha256(token.encode()).hexdigest()
        now = self._clock()
        cached = self._users.get(key)
        if cached is not None:
            age = now - cached[0]
            if age < (self.ttl if cached[1] is not None else self.rejected_ttl):
                return cached[1]
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        self.reviews += 1
        answer = await self.kube.request("POST", TOKEN_REVIEWS, verb="create", body=body)
        status = (answer or {}).get("status") or {}
        found: User | None = None
        if status.get("authenticated"):
            info = status.get("user") or {}
            found = User(
                username=str(info.get("username", "")),
                uid=str(info.get("uid", "")),
                groups=tuple(info.get("groups") or ()),
                extra=tuple(
                    sorted((k, tuple(v or ())) for k, v in (info.get("extra") or {}).items())
                ),
            )
        if len(self._users) >= 4096:
            self._users.clear()
        self._users[key] = (now, found)
        return found

    async def may_read(self, user: User, namespace: str) -> bool:
        """Whether ``user`` may ``get`` RayClusters in ``namespace``."""
        now = self._clock()
        cached = self._access.get((user, namespace))
        if cached is not None and now - cached[0] < self.ttl:
            return cached[1]
        body = review_body(
            user,
            {"namespace": namespace, "verb": "get", "group": "ray.io", "resource": "rayclusters"},
        )
        self.reviews += 1
        answer = await self.kube.request("POST", ACCESS_REVIEWS, verb="create", body=body)
        allowed = bool(((answer or {}).get("status") or {}).get("allowed"))
        if len(self._access) >= 16384:
            self._access.clear()
        self._access[(user, namespace)] = (now, allowed)
        return allowed

    async def readable(self, user: User, namespaces: Iterable[str]) -> set[str]:
        """The namespaces of ``namespaces`` that ``user`` may read."""
        return {ns for ns in set(namespaces) if await self.may_read(user, ns)}


def request_token(request: web.Request) -> str:
    """The caller's token: ``Authorization: Bearer``, else the login cookie; ``""``."""
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(TOKEN_COOKIE, "")


def _deny(request: web.Request, status: int, message: str) -> web.StreamResponse:
    if status == 401 and "text/html" in request.headers.get("Accept", ""):
        raise web.HTTPFound("/login")
    headers = {"WWW-Authenticate": 'Bearer realm="kuberay-history-server"'} if status == 401 else {}
    return web.json_response(
        {"result": False, "msg": message, "data": {}}, status=status, headers=headers
    )


def _namespace_of(request: web.Request) -> str | None:
    if request.path.startswith("/enter_cluster/"):
        parts = request.path.split("/")
        return parts[2] if len(parts) > 2 and parts[2] else None
    return request.cookies.get("cluster_namespace") or None


def login_middleware(login: KubeLogin) -> Callable[..., Awaitable[web.StreamResponse]]:
    """The middleware enforcing the login (see the module doc)."""

    @web.middleware
    async def check(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.path in OPEN_PATHS:
            return await handler(request)
        token = request_token(request)
        if not token:
            return _deny(request, 401, "log in: send a Kubernetes token (Authorization: Bearer)")
        try:
            user = await login.user(token)
        except Exception as exc:  # the apiserver's failure is not the caller's
            log.warning("token review failed", error=str(exc))
            return _deny(request, 503, f"cannot check the token: {exc}")
        if user is None:
            return _deny(request, 401, "the Kubernetes token was not accepted")
        namespace = _namespace_of(request)
        try:
            if namespace is not None and not await login.may_read(user, namespace):
                return _deny(
                    request,
                    403,
                    f"{user.username} may not get RayClusters in namespace {namespace}",
                )
        except Exception as exc:
            log.warning("access review failed", error=str(exc))
            return _deny(request, 503, f"cannot check access: {exc}")

        async def allowed(namespaces: Iterable[str]) -> set[str]:
            return await login.readable(user, namespaces)

        request[ALLOWED_NAMESPACES] = allowed
        request[LOGIN_USER] = user
        return await handler(request)

    return check


async def login_page(_request: web.Request) -> web.Response:
    """``GET /login``: a form asking for a token."""
    return web.Response(text=LOGIN_PAGE, content_type="text/html")


def login_handler(login: KubeLogin) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """``POST /login`` (form or JSON ``token``): sets the login cookie when the token is
    accepted (401 otherwise)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.content_type == "application/json":
            token = str((await request.json()).get("token", ""))
        else:
            token = str((await request.post()).get("token", ""))
        token = token.strip()
        user = await login.user(token) if token else None
        if user is None:
            return _deny(request, 401, "the Kubernetes token was not accepted")
        if request.content_type == "application/json":
            response: web.StreamResponse = web.json_response(
                {"result": "success", "user": user.username}
            )
        else:
            response = web.HTTPSeeOther("/select_cluster")
        response.set_cookie(
            TOKEN_COOKIE,
            token,
            max_age=COOKIE_MAX_AGE,
            path="/",
            httponly=True,
            samesite="Strict",
            secure=request.secure,
        )
        return response

    return handle


async def logout(_request: web.Request) -> web.Response:
    """``GET``/``POST /logout``: forgets the login cookie."""
    response = web.json_response({"result": "success"})
    response.del_cookie(TOKEN_COOKIE, path="/")
    return response


def add_routes(app: web.Application, login: KubeLogin) -> None:
    """Add ``/login`` and ``/logout`` to ``app``."""
    r = app.router
    r.add_get("/login", login_page)
    r.add_post("/login", login_handler(login))
    r.add_get("/logout", logout)
    r.add_post("/logout", logout)
