"""The compute-template parts plugged into the application (body rewriter, V1 routes)."""

from __future__ import annotations

from kuberay.apiserver.app import RouteAdder
from kuberay.apiserver.proxy import BodyRewriter


def install() -> tuple[BodyRewriter | None, RouteAdder | None]:
    """The body rewriter and the routes of the compute templates."""
    return None, None
