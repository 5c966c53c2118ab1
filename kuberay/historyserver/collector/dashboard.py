"""A small client for the Ray dashboard's HTTP API: one bounded GET at a time, the auth
header on each, 401/403 raised as ``AuthRejected`` (not retried by any caller)."""

from __future__ import annotations

import aiohttp

from kuberay.historyserver.collector.auth import AuthRejected, auth_headers, is_auth_failure
from kuberay.historyserver.collector.config import AuthSettings

DEFAULT_TIMEOUT = 30.0


class DashboardError(Exception):
    """A transient failure (connection, timeout, a status other than 200, 401, 403)."""


def base_url_from_fq_ray_ip(fq_ray_ip: str, dashboard_port: str) -> str:
    """KubeRay ``FetchCurrentNodeID``'s address: ``FQ_RAY_IP`` with an optional ``http://`` or
    ``https://`` scheme (default http) and the dashboard port when it has none."""
    addr, scheme = fq_ray_ip, "http://"
    if addr.startswith("https://"):
        scheme, addr = "https://", addr[len("https://") :]
    elif addr.startswith("http://"):
        addr = addr[len("http://") :]
    addr = addr.rstrip("/")
    if ":" not in addr:
        addr = f"{addr}:{dashboard_port or '8265'}"
    return scheme + addr


class DashboardClient:
    """GETs against one dashboard base URL through a shared ``aiohttp`` session."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, auth: AuthSettings) -> None:
        self.session = session
        self.base_url = base_url.rstrip("/")
        self.auth = auth

    async def get(self, path: str, *, timeout: float = DEFAULT_TIMEOUT) -> bytes:
        """The body of ``GET <base><path>`` (status 200); ``AuthRejected`` on 401/403,
        ``AuthConfigError`` when our credential is missing, ``DashboardError`` otherwise."""
        headers = auth_headers(self.auth)
        url = self.base_url + path
        try:
            async with self.session.get(
                url, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout)
            ) as resp:
                body = await resp.read()
                if is_auth_failure(resp.status):
                    raise AuthRejected(
                        f"dashboard answered {resp.status} to GET {path}: check that token auth "
                        "is configured for the collector container"
                    )
                if resp.status != 200:
                    raise DashboardError(f"GET {path}: HTTP {resp.status}")
                return body
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DashboardError(f"GET {path}: {type(exc).__name__}: {exc}") from exc
