"""The live-cluster proxy: a request whose cookies select ``session_name=live`` is answered by
the cluster's own dashboard.

* Only ``GET`` and ``HEAD`` are forwarded: anything else is a 405 (``Allow: GET, HEAD``), so
  the history server can never submit, stop or delete a job.
* Only the dashboard's read-only subtree is forwarded, and only a path that cannot leave it:
  ``live_paths.check_path`` (400 for ``.``/``..`` segments, encoded or not, encoded ``/`` or
  ``\\``; 403 outside the subtree), checked before anything is read or sent. The upstream URL
  is built from parts, marked encoded (``live_paths.upstream_url``): aiohttp sends it as it
  is, with no normalisation that could climb out of the service proxy's prefix.
* The destination comes from the RayCluster's status (``live.LiveClusters.target``): its head
  Service and dashboard port, never a host from the request. Directly, at the address
  ``resolver`` gives (by default ``live_dial.ServiceAddresses``: the Service read through the
  API, never DNS; an ``ExternalName`` Service is refused; its cluster IP or a ready endpoint),
  with ``Host: <svc>.<ns>.svc.<cluster domain>:<port>``; or with ``--use-kubernetes-proxy``
  through the apiserver's service proxy
  ``/api/v1/namespaces/<ns>/services/<svc>:dashboard/proxy`` with the server's own Kubernetes
  credentials. KubeRay dials ``http://<svc>:<port>`` by DNS.
* With ``--kubernetes-login`` (``access``), each request's caller must be allowed ``get`` on
  ``services/proxy`` of the head Service (``live_access.ProxyAccess``; 403 otherwise), in both
  modes: the proxy acts with the server's rights, never more than the caller's.
* Headers: hop-by-hop headers, ``Host`` and ``Cookie`` (the history server's cookies, the
  login token among them, are not the dashboard's business) are not forwarded. The client's
  ``Authorization`` is dropped with ``--use-auth-token-mode``, on the apiserver path, and when
  the Kubernetes login is on (it carries the user's Kubernetes token); ``x-ray-authorization``
  is dropped with ``--use-auth-token-mode``, which then sets its own from the cluster's Secret.
* The answer's status, headers (less hop-by-hop ones) and body are passed back as they come,
  streamed; a dashboard that cannot be reached is a 502, one that does not answer in 30 s
  (KubeRay's proxy timeout) a 504.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
import structlog
import yarl
from aiohttp import web
from multidict import CIMultiDict

from kuberay.historyserver.layout import RAY_AUTH_HEADER, LayoutError, check_segment
from kuberay.historyserver.server.identity import LOGIN_USER
from kuberay.historyserver.server.live import DashboardTarget, LiveClusters, LiveError
from kuberay.historyserver.server.live_access import ProxyAccess
from kuberay.historyserver.server.live_dial import Address, ServiceAddresses
from kuberay.historyserver.server.live_paths import CheckedPath, check_path, upstream_url
from kuberay.kube.paths import InvalidPathSegment, segment

log = structlog.get_logger("historyserver.server.live_proxy")

PROXY_TIMEOUT = 30.0
ALLOWED_METHODS = ("GET", "HEAD")
HOP_BY_HOP = frozenset(
    h.lower()
    for h in (
        "Connection",
        "Keep-Alive",
        "Proxy-Authenticate",
        "Proxy-Authorization",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
        "Host",
        "Content-Length",
    )
)

#: ``target -> address to dial`` (the default reads the Service through the API:
#: ``live_dial.ServiceAddresses``). Tests inject one answering 127.0.0.1.
Resolver = Callable[[DashboardTarget], Awaitable[Address]]
#: Extra headers for the apiserver (its credentials), asked per request.
Credentials = Callable[[], Awaitable[Mapping[str, str]]]


def cluster_domain() -> str:
    """``CLUSTER_DOMAIN`` or ``cluster.local`` (as the operator builds Service FQDNs)."""
    return os.environ.get("CLUSTER_DOMAIN", "").strip() or "cluster.local"


def forwarded_headers(
    headers: Mapping[str, str], *, drop_authorization: bool, drop_ray_auth: bool
) -> CIMultiDict[str]:
    """The client's headers the dashboard gets (see the module doc)."""
    out: CIMultiDict[str] = CIMultiDict()
    for key, value in headers.items():
        low = key.lower()
        if low in HOP_BY_HOP or low == "cookie" or low == "accept-encoding":
            continue
        if low == "authorization" and drop_authorization:
            continue
        if low == RAY_AUTH_HEADER and drop_ray_auth:
            continue
        out.add(key, value)
    out["Accept-Encoding"] = "identity"
    return out


class LiveProxy:
    """Forwards a live session's reads to its dashboard."""

    def __init__(
        self,
        live: LiveClusters,
        *,
        use_kubernetes_proxy: bool = False,
        apiserver: str = "",
        apiserver_session: aiohttp.ClientSession | None = None,
        apiserver_credentials: Credentials | None = None,
        apiserver_server_hostname: str | None = None,
        resolver: Resolver | None = None,
        access: ProxyAccess | None = None,
        drop_authorization: bool = False,
        timeout: float = PROXY_TIMEOUT,
    ) -> None:
        self.live = live
        self.use_kubernetes_proxy = use_kubernetes_proxy
        self.apiserver = apiserver.rstrip("/")
        self._apiserver_session = apiserver_session
        self._credentials = apiserver_credentials
        self._server_hostname = apiserver_server_hostname
        self.resolver: Resolver = resolver or ServiceAddresses(live.kube)
        self.access = access
        self.drop_authorization = drop_authorization
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    def _direct_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(auto_decompress=False, trust_env=False)
        return self._session

    async def close(self) -> None:
        """Close the direct connection pool (the apiserver's belongs to its client)."""
        if self._session is not None:
            await self._session.close()

    async def _url(
        self, target: DashboardTarget, checked: CheckedPath
    ) -> tuple[yarl.URL, dict[str, str]]:
        if self.use_kubernetes_proxy:
            base = yarl.URL(self.apiserver)
            try:
                ns = segment("namespace", target.namespace)
                svc = segment("service name", target.service)
            except InvalidPathSegment as exc:
                raise LiveError(400, str(exc)) from exc
            prefix = (
                f"{base.raw_path.rstrip('/')}/api/v1/namespaces/{ns}/services/{svc}:dashboard/proxy"
            )
            extra = dict(await self._credentials()) if self._credentials else {}
            host = base.raw_host or ""
            return upstream_url(base.scheme, host, base.explicit_port, prefix, checked), extra
        address = await self.resolver(target)
        host = f"[{address.host}]" if ":" in address.host else address.host
        name = f"{target.service}.{target.namespace}.svc.{cluster_domain()}"
        url = upstream_url("http", host, address.port, "", checked)
        return url, {"Host": f"{name}:{target.port}"}

    async def forward(self, request: web.Request) -> web.StreamResponse:
        """Answer ``request`` (its cookies name a live cluster) from that cluster's
        dashboard."""
        if request.method not in ALLOWED_METHODS:
            return web.json_response(
                {
                    "result": False,
                    "msg": f"{request.method} is not allowed: the history server only reads "
                    "live clusters (GET, HEAD)",
                    "data": {},
                },
                status=405,
                headers={"Allow": ", ".join(ALLOWED_METHODS)},
            )
        try:
            namespace = check_segment(request.cookies.get("cluster_namespace", ""), "namespace")
            name = check_segment(request.cookies.get("cluster_name", ""), "cluster name")
        except LayoutError as exc:
            return _error(400, str(exc))
        try:
            checked = check_path(request.rel_url.raw_path, request.rel_url.raw_query_string)
            target = await self.live.target(namespace, name)
            if self.access is not None:
                await self.access.check(request.get(LOGIN_USER), target)
            token = (
                await self.live.auth_token(namespace, name) if self.live.auth_token_mode else None
            )
            url, extra = await self._url(target, checked)
        except LiveError as exc:
            if exc.status in (400, 403):
                log.warning("live request refused", path=request.raw_path, reason=exc.message)
            return _error(exc.status, exc.message)
        headers = forwarded_headers(
            request.headers,
            drop_authorization=(
                self.drop_authorization or self.live.auth_token_mode or self.use_kubernetes_proxy
            ),
            drop_ray_auth=self.live.auth_token_mode,
        )
        headers.update(extra)
        if token:
            headers[RAY_AUTH_HEADER] = f"Bearer {token}"
        return await self._send(request, url, headers, f"{namespace}/{name}")

    async def _send(
        self, request: web.Request, url: yarl.URL, headers: CIMultiDict[str], what: str
    ) -> web.StreamResponse:
        kwargs: dict[str, Any] = {}
        if self.use_kubernetes_proxy and self._apiserver_session is not None:
            session = self._apiserver_session
            kwargs["server_hostname"] = self._server_hostname
        else:
            session = self._direct_session()
        response: web.StreamResponse | None = None
        try:
            async with session.request(
                request.method,
                url,
                headers=headers,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                **kwargs,
            ) as upstream:
                response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
                for key, value in upstream.headers.items():
                    if key.lower() not in HOP_BY_HOP:
                        response.headers.add(key, value)
                await response.prepare(request)
                if request.method != "HEAD":
                    async for chunk in upstream.content.iter_any():
                        await response.write(chunk)
                await response.write_eof()
                return response
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            if response is not None and response.prepared:
                log.warning("live answer cut short", cluster=what, error=repr(exc))
                return response
            if isinstance(exc, TimeoutError):
                log.warning("live dashboard timed out", cluster=what, path=request.path)
                return _error(504, f"the dashboard of {what} did not answer in {self.timeout:g}s")
            log.warning("live dashboard unreachable", cluster=what, error=str(exc))
            return _error(502, f"cannot reach the dashboard of {what}: {exc}")


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"result": False, "msg": message, "data": {}}, status=status)
