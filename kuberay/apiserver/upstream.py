"""Connections to the kube-apiserver, kept apart by identity.

Two pools of keep-alive HTTP/1.1 connections (:class:`kuberay.http.ConnectionPool`, framed
by h11): the **callers' pool** trusts the cluster's CA and presents no client certificate,
so a caller's bearer token is the only credential on it (the apiserver tries a client
certificate before a token; a certificate on the connection would make every caller act as
the server); the **server's pool** presents the server's own credentials (its client
certificate and/or token, from the kubeconfig or the pod's ServiceAccount) and is only used
for the server's own identity (``--auth-mode=service-account``). A caller's ``Authorization``
value is never sent on the server's pool, and the server's is never sent on the callers'.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

import structlog

from kuberay import http
from kuberay.apiserver.errors import UpstreamUnavailable
from kuberay.apiserver.identity import Identity
from kuberay.apiserver.kube_calls import MAX_BUFFERED_ANSWER, KubeAnswer, KubeCall
from kuberay.kube.restconfig import RestConfig

log = structlog.get_logger("apiserver.upstream")

#: Seconds a :class:`KubeCall` (a ConfigMap read, the Service check) may take.
CALL_TIMEOUT = 30.0
USER_AGENT = "kuberay-apiserver"


def trust_only(config: RestConfig) -> RestConfig:
    """``config`` with how to reach and trust the apiserver, and no credential at all."""
    return RestConfig(
        config.host,
        ssl_ca_cert=config.ssl_ca_cert,
        ca_data=config.ca_data,
        verify_ssl=config.verify_ssl,
        tls_server_name=config.tls_server_name,
        proxy=config.proxy,
    )


class Upstream:
    """The kube-apiserver ``config`` points at (see the module doc)."""

    def __init__(self, config: RestConfig) -> None:
        self.config = config
        if not config.host.startswith("https:"):
            log.warning(
                "the kube-apiserver is reached over plain http: tokens travel unencrypted",
                host=config.host,
            )
        self._callers = self._pool(trust_only(config))
        self._own: http.ConnectionPool | None = None

    def _pool(self, config: RestConfig) -> http.ConnectionPool:
        https = config.host.startswith("https:")
        return http.ConnectionPool(
            config.host,
            ssl_context=config.ssl_context() if https else None,
            server_hostname=config.tls_server_name,
            proxy=config.proxy,
            user_agent=USER_AGENT,
        )

    async def _own_headers(self) -> list[tuple[str, str]]:
        value = await self.config.authorization()
        pairs = [("Authorization", value)] if value else []
        return pairs + list(self.config.extra_headers)

    async def send(
        self,
        identity: Identity,
        method: str,
        target: str,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes | None = None,
    ) -> http.Response:
        """Send one request as ``identity`` and return the answer once its head arrived.
        ``target`` is the encoded path and query. Any ``Authorization`` in ``headers`` is
        dropped: the identity decides it. Transport failures raise
        :class:`kuberay.http.HTTPClientError`."""
        pairs = [(k, v) for k, v in headers if k.lower() != "authorization"]
        if identity.own:
            if self._own is None:
                self._own = self._pool(self.config)
            pool = self._own
            pairs += await self._own_headers()
        else:
            pool = self._callers
            pairs.append(("Authorization", identity.authorization))
        response = await pool.request(method, target, headers=pairs, body=body)
        if response.status == 401 and identity.own:
            self.config.unauthorized()  # an exec plugin's credential is fetched again
        return response

    def call_for(self, identity: Identity) -> KubeCall:
        """A :class:`KubeCall` bound to ``identity``."""
        return _BoundCall(self, identity)

    async def close(self) -> None:
        """Close every connection."""
        await self._callers.close()
        if self._own is not None:
            await self._own.close()


class _BoundCall:
    def __init__(self, upstream: Upstream, identity: Identity) -> None:
        self._upstream = upstream
        self._identity = identity

    async def __call__(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
    ) -> KubeAnswer:
        target = path + ("?" + urllib.parse.urlencode(params) if params else "")
        headers = [("Accept", "application/json")]
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers.append(("Content-Type", "application/json"))
        try:
            async with asyncio.timeout(CALL_TIMEOUT):
                response = await self._upstream.send(self._identity, method, target, headers, data)
                try:
                    raw = await response.read(limit=MAX_BUFFERED_ANSWER)
                finally:
                    response.close()
        except (http.HTTPClientError, TimeoutError) as exc:
            raise UpstreamUnavailable(f"{method} to the kube-apiserver failed: {exc}") from exc
        return KubeAnswer(response.status, raw, response.headers.get("content-type") or "")
