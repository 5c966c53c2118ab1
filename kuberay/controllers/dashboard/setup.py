"""One dashboard poller per operator, shared by the RayJob and RayService controllers.

:func:`setup_dashboard_poller` builds the factory and the poller from the operator's settings
and registers their shutdown with the manager: they are closed after the controllers stop
(every background call cancelled, the connection pool closed).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

from kuberay.controllers.common.constants import CLUSTER_DOMAIN_ENV_KEY, DEFAULT_DOMAIN_NAME
from kuberay.gocompat.goutil import go_parse_bool
from kuberay.reconcile import Manager

from .factory import PROXY_FALLBACK_ENV, DashboardClientFactory, SecretLookup
from .poller import DashboardPoller

__all__ = ["cached_secret_reader", "setup_dashboard_poller"]


def cached_secret_reader(mgr: Manager) -> SecretLookup:
    """Reads auth Secrets from ``mgr``'s cache (the Secrets it holds: those labelled
    ``ray.io/cluster``); None, or LookupError when the cache has no Secret informer."""

    def read(namespace: str, name: str) -> Mapping[str, Any] | None:
        return mgr.cache.get("v1", "Secret", namespace, name)

    return read


def parse_bool(name: str, text: str | None, default: bool) -> bool:
    """Env var ``name`` read as KubeRay reads its boolean variables (Go ``strconv.ParseBool``
    of the value without surrounding space: 1/t/T/TRUE/true/True and their false forms);
    unset or empty: ``default``; anything else: ValueError naming the variable."""
    if text is None or not text.strip():
        return default
    try:
        return go_parse_bool(text.strip())
    except ValueError:
        raise ValueError(f"{name}: {text!r} is not true or false") from None


def setup_dashboard_poller(
    mgr: Manager,
    *,
    use_kubernetes_proxy: bool = False,
    env: Mapping[str, str] | None = None,
    max_in_flight: int = 64,
) -> DashboardPoller:
    """The operator's poller. ``env`` (default ``os.environ``) gives ``CLUSTER_DOMAIN``,
    ``KUBERAY_DASHBOARD_ALLOWED_NETWORKS``, ``KUBERAY_DASHBOARD_PROXY_FALLBACK`` (true or
    false, default true) and whether the operator runs in a pod; a bad allow-list or flag
    raises ValueError here, at start-up."""
    environ = dict(os.environ if env is None else env)
    factory = DashboardClientFactory(
        mgr.client,
        use_kubernetes_proxy=use_kubernetes_proxy,
        cluster_domain=environ.get(CLUSTER_DOMAIN_ENV_KEY) or DEFAULT_DOMAIN_NAME,
        environ=environ,
        cached_secret=cached_secret_reader(mgr),
        proxy_fallback=parse_bool(PROXY_FALLBACK_ENV, environ.get(PROXY_FALLBACK_ENV), True),
    )
    poller = DashboardPoller(factory, max_in_flight=max_in_flight)

    async def close_on_shutdown() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await poller.close()
            await factory.close()

    mgr.add_runnable(close_on_shutdown, needs_leader=False)
    return poller
