"""With ``--kubernetes-login``: may this caller read this live cluster's dashboard?

The live proxy reaches a dashboard with the server's own rights (its ServiceAccount on the
apiserver's service proxy, or its network position when dialling directly), so a logged-in
caller must itself be allowed what the proxy does for it: ``get`` on ``services/proxy`` of
the head Service (a SubjectAccessReview with the caller's user, uid, groups and extra from the
login's TokenReview). The check is per request, kept ``PROXY_ACCESS_TTL`` (10 s) per
(user, namespace, Service): a page's burst of requests costs one review, and a revoked
RoleBinding stops the proxying within seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from kuberay.historyserver.server.identity import ACCESS_REVIEWS, KubeRequests, User, review_body
from kuberay.historyserver.server.live import DashboardTarget, LiveError

log = structlog.get_logger("historyserver.server.live_access")

PROXY_ACCESS_TTL = 10.0
_MAX_CACHED = 16384


class ProxyAccess:
    """SubjectAccessReviews for ``get services/proxy`` on a head Service, kept briefly."""

    def __init__(
        self,
        kube: KubeRequests,
        *,
        ttl: float = PROXY_ACCESS_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.ttl = ttl
        self._clock = clock
        self._cache: dict[tuple[User, str, str], tuple[float, bool]] = {}
        self.reviews = 0

    async def allowed(self, user: User, target: DashboardTarget) -> bool:
        """Whether ``user`` may ``get services/proxy`` on ``target``'s Service (``LiveError``
        503 when the review itself fails)."""
        key = (user, target.namespace, target.service)
        now = self._clock()
        cached = self._cache.get(key)
        if cached is not None and now - cached[0] < self.ttl:
            return cached[1]
        body = review_body(
            user,
            {
                "namespace": target.namespace,
                "verb": "get",
                "group": "",
                "resource": "services",
                "subresource": "proxy",
                "name": target.service,
            },
        )
        self.reviews += 1
        try:
            answer = await self.kube.request("POST", ACCESS_REVIEWS, verb="create", body=body)
        except Exception as exc:  # the apiserver's failure is not the caller's
            log.warning("proxy access review failed", error=str(exc))
            raise LiveError(503, f"cannot check access to the dashboard: {exc}") from exc
        allowed = bool(((answer or {}).get("status") or {}).get("allowed"))
        if len(self._cache) >= _MAX_CACHED:
            self._cache.clear()
        self._cache[key] = (now, allowed)
        return allowed

    async def check(self, user: User | None, target: DashboardTarget) -> None:
        """Raise ``LiveError`` 403 unless ``user`` (``None``: no login on the request, which
        is refused too) may proxy to ``target``."""
        if user is None:
            raise LiveError(403, "no logged-in user: live dashboards are not forwarded")
        if not await self.allowed(user, target):
            raise LiveError(
                403,
                f"{user.username} may not get services/proxy on "
                f"{target.namespace}/{target.service}: its dashboard is not forwarded",
            )
