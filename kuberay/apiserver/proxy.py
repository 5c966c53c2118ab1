"""The V2 routes' handler: route, check, rewrite, forward (one entry, named steps).

1. The path is checked (:mod:`.request_path`) by the middleware before this runs; here it is
   routed (:mod:`.routes`): 404 ``404 page not found`` and 405 as Go's ``ServeMux``.
2. The body is read with a cap (413 past 3 MiB).
3. Per route: the compute-template middleware rewrites RayCluster/RayJob/RayService bodies
   of POST and PUT; the events route adds its field selector; the Service proxy first checks
   the Service (:mod:`.service_check`).
4. The request is forwarded as the request's identity (:mod:`.forward`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from kuberay.apiserver import routes
from kuberay.apiserver.bodies import BodyTooLarge, read_body
from kuberay.apiserver.events import events_query
from kuberay.apiserver.forward import forward
from kuberay.apiserver.identity import Identity
from kuberay.apiserver.kube_calls import KubeCall
from kuberay.apiserver.request_path import RequestPath, encode
from kuberay.apiserver.retry import RetryPolicy
from kuberay.apiserver.service_check import check_service, refusal_response
from kuberay.apiserver.upstream import Upstream

#: Rewrites a templated body: ``(kind, content type, body, call, namespace)`` to the JSON
#: body to forward, or the answer to give instead (a missing template's 422).
BodyRewriter = Callable[[str, str, bytes, KubeCall, str], Awaitable["bytes | web.Response"]]

REQUEST_PATH: web.RequestKey[RequestPath] = web.RequestKey("kuberay_request_path", RequestPath)
IDENTITY: web.RequestKey[Identity] = web.RequestKey("kuberay_identity", Identity)
#: The route's name, for the metrics.
ROUTE_NAME: web.RequestKey[str] = web.RequestKey("kuberay_route_name", str)


def not_found() -> web.Response:
    """Go ``ServeMux``'s 404."""
    return web.Response(status=404, text="404 page not found\n")


class V2Proxy:
    """KubeRay's V2 routes over ``upstream`` (see the module doc)."""

    def __init__(
        self,
        upstream: Upstream,
        *,
        rewrite: BodyRewriter | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        self.upstream = upstream
        self.rewrite = rewrite
        self.policy = policy or RetryPolicy()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one request of the V2 routes."""
        path = request[REQUEST_PATH]
        route = routes.route(request.method, path)
        request[ROUTE_NAME] = route.name
        if route.name == routes.NOT_FOUND:
            return not_found()
        if route.name == routes.METHOD_NOT_ALLOWED:
            return web.Response(
                status=405, text="Method Not Allowed\n", headers={"Allow": "GET, HEAD"}
            )
        identity = request[IDENTITY]
        call = self.upstream.call_for(identity)
        try:
            body = await read_body(request)
        except BodyTooLarge:
            return web.Response(status=413, text="request body too large\n")
        query = request.rel_url.raw_query_string
        content_type = None
        if route.name == routes.EVENTS:
            query = events_query(query)
        elif route.name == routes.SERVICE:
            refusal = await check_service(call, route.namespace, route.service)
            if refusal is not None:
                return refusal_response(refusal)
        elif route.template_kind is not None and body is not None and self.rewrite is not None:
            rewritten = await self.rewrite(
                route.template_kind, request.content_type, body, call, route.namespace
            )
            if isinstance(rewritten, web.StreamResponse):
                return rewritten
            body, content_type = rewritten, "application/json"
        target = encode(path.segments, path.trailing_slash) + (f"?{query}" if query else "")
        return await forward(
            request,
            self.upstream,
            identity,
            target,
            body=body,
            content_type=content_type,
            policy=self.policy,
        )
