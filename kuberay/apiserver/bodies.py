"""Request bodies, read with a cap before anything parses or forwards them."""

from __future__ import annotations

from aiohttp import web

#: Largest request body accepted: the kube-apiserver's own limit (3 MiB).
MAX_REQUEST_BODY = 3 * 2**20


class BodyTooLarge(Exception):
    """The body passed :data:`MAX_REQUEST_BODY` (answered 413)."""


async def read_body(request: web.Request, limit: int = MAX_REQUEST_BODY) -> bytes | None:
    """The whole body (None for a request without one); :class:`BodyTooLarge` as soon as
    more than ``limit`` bytes arrive (or a Content-Length says so), before they are kept."""
    if not request.body_exists:
        return None
    if request.content_length is not None and request.content_length > limit:
        raise BodyTooLarge
    parts: list[bytes] = []
    size = 0
    while piece := await request.content.readany():
        size += len(piece)
        if size > limit:
            raise BodyTooLarge
        parts.append(piece)
    return b"".join(parts)
