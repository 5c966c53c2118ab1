"""Builds a :class:`DashboardClient` for a target: where to dial, with which credentials.

* Keep-alive connections per dashboard address (:class:`~kuberay.http.origins.OriginPools`,
  the operator's own HTTP/1.1 client, as for the apiserver); closed by
  :meth:`DashboardClientFactory.close` on shutdown.
* ``use_kubernetes_proxy`` (KubeRay's ``--use-kubernetes-proxy``): requests go to
  ``<apiserver>/api/v1/namespaces/<ns>/services/<head svc>:dashboard/proxy`` (a Serve proxy:
  ``.../pods/<pod>:<port>/proxy``) through the kube client's connection pool, TLS and
  credentials; timeout 10 s.
* Otherwise, in a pod: ``http://<head svc>.<ns>.svc.<cluster domain>:<port>``, as KubeRay;
  outside a cluster: a ready endpoint of the head Service (EndpointSlices, else ready pods),
  dialled only if the :class:`~.guard.DialGuard` allows it; timeout 2 s.
* Beyond KubeRay, outside a cluster, an address the guard refuses (a pod IP the operator's
  host cannot reach, e.g. a laptop against a remote cluster) is reached through the
  apiserver's service proxy (a Serve proxy: the pod proxy) instead of failing, as
  ``--use-kubernetes-proxy`` would (``proxy_fallback``, on by default; env
  ``KUBERAY_DASHBOARD_PROXY_FALLBACK=false`` turns it off in :func:`.setup.setup_dashboard_poller`).
  The apiserver, not the operator, then dials the pod. Resolved addresses are
  kept for ``address_ttl`` seconds and dropped as soon as a call gets no answer.
* Token auth: the token is read from the cluster's auth Secret on every ``client_for``, from
  the operator's cache (``cached_secret``, as KubeRay reads it through its cached client: the
  cache holds the Secrets labelled ``ray.io/cluster``, i.e. the token Secrets the operator
  creates). A Secret the cache does not hold (a user's ``authOptions.secretName`` without that
  label, or one created a moment ago) is read from the apiserver and its token kept for
  ``address_ttl`` seconds, so dashboard polling costs at most one Secret GET per Secret per TTL.

Lookups use a view of the kube client with its own rate limit, so dashboard traffic never
queues the controllers' API requests behind it.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeAlias

import structlog

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.constants import DEFAULT_DOMAIN_NAME
from kuberay.controllers.dashboard.endpoints import ServiceNotReachable, in_cluster, service_address
from kuberay.http import ConnectionPool, OriginPools
from kuberay.kube.errors import KubeError, NotFound
from kuberay.kube.interfaces import Reader
from kuberay.kube.paths import InvalidPathSegment, segment

from .client import DIRECT_TIMEOUT, PROXY_TIMEOUT, DashboardClient
from .errors import DashboardUnreachable, host_port
from .guard import DialGuard
from .target import DashboardTarget, ServeProxyTarget

__all__ = ["PROXY_FALLBACK_ENV", "DashboardClientFactory", "KubeAccess"]

#: ``false`` turns the apiserver-proxy fallback off (the operator then fails to dial refused
#: addresses, naming them, as KubeRay would).
PROXY_FALLBACK_ENV = "KUBERAY_DASHBOARD_PROXY_FALLBACK"

log = structlog.get_logger("kuberay.dashboard")

Target = DashboardTarget | ServeProxyTarget

#: ``(namespace, name) -> Secret or None``: a read of the operator's cache. None means the cache
#: does not hold it; a LookupError (e.g. the cache has no Secret informer) means the same.
SecretLookup: TypeAlias = Callable[[str, str], Mapping[str, Any] | None]


class KubeAccess(Reader, Protocol):
    """What the factory needs of :class:`kuberay.kube.Client`: a :class:`~kuberay.kube.Reader`
    that can make throttled views of itself."""

    host: str
    configuration: Any

    @property
    def pool(self) -> ConnectionPool: ...

    def view(self, *, qps: float = ..., burst: int = ...) -> KubeAccess: ...


def _proxy_segment(kind: str, value: str) -> str:
    """``value`` checked and escaped as one path segment; a value that cannot be one (``..``,
    ``/``, control characters...) makes the cluster unreachable instead of a request."""
    try:
        return segment(kind, value)
    except InvalidPathSegment as exc:
        raise DashboardUnreachable(f"cannot build the apiserver proxy path: {exc}") from exc


class DashboardClientFactory:
    """``await client_for(target)`` -> a ready-to-use client (raises DashboardUnreachable).

    ``allowed_networks`` None: ``KUBERAY_DASHBOARD_ALLOWED_NETWORKS`` or ``127.0.0.0/8``
    (ignored in a pod). ``timeout`` None: 2 s direct, 10 s through the apiserver proxy.
    ``environ`` (default ``os.environ``) decides whether the operator runs in a pod.
    ``cached_secret`` reads auth Secrets from the operator's cache (None: every token is read
    from the apiserver, kept ``address_ttl`` seconds). ``proxy_fallback``: outside a cluster,
    reach an address the guard refuses through the apiserver's proxy instead of failing.
    """

    def __init__(
        self,
        kube_client: KubeAccess,
        *,
        use_kubernetes_proxy: bool = False,
        allowed_networks: Iterable[str] | None = None,
        cluster_domain: str = DEFAULT_DOMAIN_NAME,
        timeout: float | None = None,
        environ: Mapping[str, str] | None = None,
        address_ttl: float = 30.0,
        api_qps: float = 20.0,
        api_burst: int = 40,
        clock: Callable[[], float] = time.monotonic,
        cached_secret: SecretLookup | None = None,
        proxy_fallback: bool = False,
    ) -> None:
        self._kube = kube_client
        self._cached_secret = cached_secret
        self.proxy_fallback = proxy_fallback
        # through a fallback proxy the apiserver's 10 s, unless a timeout was given
        self._fallback_timeout = timeout or PROXY_TIMEOUT
        self._fallbacks_logged: set[tuple[str, str, str]] = set()
        # (namespace, name) -> (token, expiry) of Secrets read from the apiserver
        self._fetched_tokens: dict[tuple[str, str], tuple[str, float]] = {}
        self._api = kube_client.view(qps=api_qps, burst=api_burst)
        self.use_kubernetes_proxy = use_kubernetes_proxy
        self.cluster_domain = cluster_domain
        self.timeout = timeout or (PROXY_TIMEOUT if use_kubernetes_proxy else DIRECT_TIMEOUT)
        self._environ = environ
        self.in_cluster = in_cluster(environ)
        self.guard = DialGuard.from_env(
            in_cluster=self.in_cluster, allowed_networks=allowed_networks, environ=environ
        )
        self.address_ttl = address_ttl
        self._clock = clock
        self._addresses: dict[tuple[str, str, str], tuple[str, int, float]] = {}
        self._pools = OriginPools(user_agent="kuberay-operator")

    # ----- lifecycle ----------------------------------------------------------------------
    def pool(self, host: str, port: int) -> ConnectionPool:
        """The keep-alive connections to ``http://host:port`` (raises DashboardUnreachable
        after :meth:`close`)."""
        try:
            return self._pools.pool(f"http://{host_port(host, port)}")
        except RuntimeError as exc:
            raise DashboardUnreachable("the dashboard client factory is closed") from exc

    async def close(self) -> None:
        """Close the dashboards' connections (the kube client's own are left alone)."""
        await self._pools.close()

    # ----- clients ------------------------------------------------------------------------
    async def client_for(self, target: Target) -> DashboardClient:
        """A client for ``target``; raises DashboardUnreachable when it cannot be dialled
        (no ready endpoint, refused by the dial guard, auth Secret missing)."""
        if isinstance(target, ServeProxyTarget):
            return self._proxy_client(target)
        token = await self.auth_token(target) if target.auth_secret else None
        if self.use_kubernetes_proxy:
            return self._through_apiserver(self._service_proxy_path(target), token)
        host, port = await self._address(target)
        if not self.guard.allows(host):
            if not self.proxy_fallback:
                what = f"dashboard of RayCluster {target.namespace}/{target.cluster_name}"
                self.guard.check(host, what=what, port=port)
            self._log_fallback(target.namespace, target.cluster_name, host_port(host, port))
            return self._through_apiserver(
                self._service_proxy_path(target), token, timeout=self._fallback_timeout
            )
        key = (target.namespace, target.head_service, target.port_name)
        return DashboardClient(
            self.pool(host, port),
            timeout=self.timeout,
            auth_token=token,
            on_unreachable=lambda: self.forget_address(key),
        )

    def forget_address(self, key: tuple[str, str, str]) -> None:
        """Drop a resolved (namespace, head service, port name) address: resolve it anew."""
        self._addresses.pop(key, None)

    @staticmethod
    def _service_proxy_path(target: DashboardTarget) -> str:
        return (
            f"/api/v1/namespaces/{_proxy_segment('namespace', target.namespace)}/services/"
            f"{_proxy_segment('service name', target.head_service)}:"
            f"{_proxy_segment('port name', target.port_name)}/proxy"
        )

    def _log_fallback(self, namespace: str, name: str, address: str) -> None:
        key = (namespace, name, address)
        if key in self._fallbacks_logged:
            return
        if len(self._fallbacks_logged) >= 4096:
            self._fallbacks_logged.clear()
        self._fallbacks_logged.add(key)
        log.info(
            "dialling through the apiserver proxy: the address is not in the allowed networks",
            namespace=namespace,
            name=name,
            address=address,
        )

    def _proxy_client(self, target: ServeProxyTarget) -> DashboardClient:
        pod_proxy = (
            f"/api/v1/namespaces/{_proxy_segment('namespace', target.namespace)}/pods/"
            f"{_proxy_segment('pod name', target.pod_name)}:{int(target.port)}/proxy"
        )
        if self.use_kubernetes_proxy:
            return self._through_apiserver(pod_proxy, None)
        what = f"Serve proxy of pod {target.namespace}/{target.pod_name}"
        if not target.pod_ip:
            raise DashboardUnreachable(f"{what}: the pod has no IP yet")
        if not self.guard.allows(target.pod_ip) and self.proxy_fallback:
            self._log_fallback(
                target.namespace, target.pod_name, host_port(target.pod_ip, target.port)
            )
            return self._through_apiserver(pod_proxy, None, timeout=self._fallback_timeout)
        self.guard.check(target.pod_ip, what=what, port=target.port)
        return DashboardClient(self.pool(target.pod_ip, target.port), timeout=self.timeout)

    def _through_apiserver(
        self, path: str, token: str | None, *, timeout: float | None = None
    ) -> DashboardClient:
        configuration = self._kube.configuration

        from kuberay.kube.restconfig import authorization

        async def credentials() -> dict[str, str]:
            value = await authorization(configuration)  # bearer or basic, as for the apiserver
            return {"Authorization": value} if value else {}

        return DashboardClient(
            self._kube.pool,
            path,
            timeout=timeout or self.timeout,
            auth_token=token,
            headers=credentials,
        )

    # ----- lookups ------------------------------------------------------------------------
    async def _address(self, target: DashboardTarget) -> tuple[str, int]:
        key = (target.namespace, target.head_service, target.port_name)
        now = self._clock()
        cached = self._addresses.get(key)
        if cached is not None and cached[2] > now:
            return cached[0], cached[1]
        what = f"dashboard of RayCluster {target.namespace}/{target.cluster_name}"
        try:
            host, port = await service_address(
                self._api,
                target.namespace,
                target.head_service,
                target.port_name,
                cluster_domain=self.cluster_domain,
                environ=self._environ,
            )
        except NotFound as exc:
            raise DashboardUnreachable(
                f"{what}: head service {target.namespace}/{target.head_service} not found"
            ) from exc
        except ServiceNotReachable as exc:
            raise DashboardUnreachable(f"{what}: {exc}") from exc
        except KubeError as exc:
            raise DashboardUnreachable(f"{what}: cannot resolve the head service: {exc}") from exc
        self._addresses[key] = (host, port, now + self.address_ttl)
        log.debug(
            "resolved dashboard address",
            namespace=target.namespace,
            name=target.cluster_name,
            address=host_port(host, port),
        )
        return host, port

    async def auth_token(self, target: DashboardTarget) -> str:
        """The token in the cluster's auth Secret (key ``auth_token``): from the cache when it
        holds the Secret, else from the apiserver (then kept ``address_ttl`` seconds)."""
        name = target.auth_secret or ""
        where = f"{target.namespace}/{name}"
        secret = self._secret_from_cache(target.namespace, name)
        if secret is not None:
            return _token_of(secret, where)
        key = (target.namespace, name)
        now = self._clock()
        fetched = self._fetched_tokens.get(key)
        if fetched is not None and fetched[1] > now:
            return fetched[0]
        hint = (
            " (the cluster uses enableK8sTokenAuth, for which the operator creates no Secret)"
            if target.k8s_token_auth
            else ""
        )
        try:
            secret = await self._api.get("v1", "Secret", name, target.namespace)
        except NotFound as exc:
            self._fetched_tokens.pop(key, None)
            raise DashboardUnreachable(
                f"failed to get auth secret {where}: not found{hint}"
            ) from exc
        except KubeError as exc:
            raise DashboardUnreachable(f"failed to get auth secret {where}: {exc}") from exc
        token = _token_of(secret, where)
        self._prune_fetched(now)
        self._fetched_tokens[key] = (token, now + self.address_ttl)
        return token

    def _secret_from_cache(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        if self._cached_secret is None:
            return None
        try:
            return self._cached_secret(namespace, name)
        except LookupError:
            return None

    def _prune_fetched(self, now: float) -> None:
        """Forget expired apiserver-read tokens (memory bounded by the Secrets in use)."""
        expired = [k for k, (_, expiry) in self._fetched_tokens.items() if expiry <= now]
        for k in expired:
            del self._fetched_tokens[k]


def _token_of(secret: Mapping[str, Any], where: str) -> str:
    """The decoded ``auth_token`` of a Secret; DashboardUnreachable naming ``where`` if absent
    or undecodable."""
    data = secret.get("data") if isinstance(secret.get("data"), Mapping) else {}
    encoded = data.get(c.RAY_AUTH_TOKEN_SECRET_KEY) if data else None
    if not isinstance(encoded, str):
        raise DashboardUnreachable(
            f"auth token key '{c.RAY_AUTH_TOKEN_SECRET_KEY}' not found in secret {where}"
        )
    try:
        token = base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise DashboardUnreachable(f"auth secret {where}: undecodable token: {exc}") from exc
    if not token.isprintable() or not token.isascii():
        # it becomes a header value: CR LF there would end the header early
        raise DashboardUnreachable(
            f"auth secret {where}: the token holds a control or non-ASCII character "
            f"(key '{c.RAY_AUTH_TOKEN_SECRET_KEY}'); it cannot be sent in a header"
        )
    return token
