"""The compute templates plugged into the application: the V2 proxy's body rewriter and the
V1 routes. The rewriter turns the middleware's exceptions into upstream's answers: a missing
template 422 (text), an unreadable body 400, the apiserver's refusal of a read made for the
caller its own answer, the apiserver unreachable 502."""

from __future__ import annotations

import structlog
from aiohttp import web

from kuberay.apiserver.app import RouteAdder
from kuberay.apiserver.errors import UpstreamUnavailable
from kuberay.apiserver.kube_calls import KubeCall
from kuberay.apiserver.proxy import BodyRewriter
from kuberay.apiserver.templates import (
    BadBody,
    TemplateMissing,
    UpstreamRefused,
    add_routes,
    rewrite_body,
    template_fetcher,
)

log = structlog.get_logger("apiserver.templates")


async def rewrite(
    kind: str, content_type: str, raw: bytes, call: KubeCall, namespace: str
) -> bytes | web.Response:
    """``raw`` with its compute templates applied, or the answer to give instead."""
    try:
        return await rewrite_body(
            kind, content_type, raw, template_fetcher(call, namespace), namespace=namespace
        )
    except TemplateMissing as exc:
        return web.Response(status=422, text=exc.message + "\n")
    except BadBody as exc:
        log.info("unreadable body", kind=kind, namespace=namespace, detail=exc.detail)
        return web.Response(status=400, text=exc.message + "\n")
    except UpstreamRefused as exc:
        answer = exc.answer
        headers = {"Content-Type": answer.content_type or "application/json"}
        return web.Response(status=answer.status, body=answer.body, headers=headers)
    except UpstreamUnavailable as exc:
        log.warning("template read failed", namespace=namespace, error=str(exc))
        return web.Response(status=502, text="the kube-apiserver did not answer\n")


def install() -> tuple[BodyRewriter, RouteAdder]:
    """The body rewriter and the routes of the compute templates."""
    return rewrite, add_routes
