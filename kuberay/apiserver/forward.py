"""Forward one request to the kube-apiserver and stream its answer back.

* Request headers: an allowlist (:data:`FORWARDED_REQUEST_HEADERS`); the identity decides
  ``Authorization`` (:mod:`.upstream`), and no ``Impersonate-*`` header of a caller ever
  goes upstream. ``Accept-Encoding: gzip`` upstream, whatever the caller accepts: the
  kube-apiserver compresses answers over 128 KiB (a 1,000-RayCluster list shrinks ~28 times),
  which spares parsing ~1,000 HTTP chunks of ~1.7 KiB each per list; :mod:`kuberay.http`
  decodes it in bounded pieces and the caller gets it decoded.
* Answers: every header but the hop-by-hop ones and the framing (aiohttp frames the answer
  anew). An answer whose whole body came with its first piece (a GET of one object, an
  error) goes back in one write with its ``Content-Length``; any other is relayed piece by
  piece as it arrives, never buffered whole, so a ``watch=true`` stream or a 1,000-object
  list passes through at the apiserver's pace. A non-watch answer whose body breaks off
  before its first piece is a 502; later, the caller sees the stream cut.
* Not a watch: upstream's retry policy (:mod:`.retry`), the body replayed; a retried answer
  is drained (bounded) first. A watch is sent once and has no deadline.
* The apiserver unreachable, or a retry past the deadline: 502, as Go's reverse proxy.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import structlog
from aiohttp import web
from multidict import CIMultiDict

from kuberay import http
from kuberay.api.v1.constants import RAY_AUTH_HEADER
from kuberay.apiserver.identity import Identity
from kuberay.apiserver.retry import RetryDeadline, RetryPolicy
from kuberay.apiserver.upstream import Upstream
from kuberay.gocompat.goutil import k8s_query_bool

log = structlog.get_logger("apiserver.forward")

FORWARDED_REQUEST_HEADERS = frozenset(
    {
        "accept",
        "accept-language",
        "cache-control",
        "content-type",
        "if-match",
        "if-modified-since",
        "if-none-match",
        "user-agent",
        RAY_AUTH_HEADER,
    }
)
#: Answer headers not relayed: hop-by-hop (RFC 9110 7.6.1) and the framing aiohttp redoes
#: (the body is relayed decoded, so its encoding goes too).
DROPPED_ANSWER_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "content-encoding",
    }
)
#: Most bytes of a retried answer read (and discarded) before the connection is dropped.
DRAIN_LIMIT = 1 << 20
#: Seconds each wait for more of an answer's body may take (not for watches).
PIECE_TIMEOUT = 60.0


def request_headers(
    request: web.Request, *, content_type: str | None = None
) -> list[tuple[str, str]]:
    """The caller's headers that go upstream (see the module doc)."""
    pairs = [
        (name, value)
        for name, value in request.headers.items()
        if name.lower() in FORWARDED_REQUEST_HEADERS
        and not (content_type is not None and name.lower() == "content-type")
    ]
    if content_type is not None:
        pairs.append(("Content-Type", content_type))
    pairs.append(("Accept-Encoding", "gzip"))
    return pairs


def is_watch(query: Mapping[str, str]) -> bool:
    """A watch request, as the kube-apiserver decides it: the first ``watch`` parameter (a
    multidict's ``get``) read by :func:`~kuberay.gocompat.goutil.k8s_query_bool`
    (``watch=yes`` and ``watch=`` are watches there, so they stream here too)."""
    return k8s_query_bool(query.get("watch"))


async def _attempts(
    upstream: Upstream,
    identity: Identity,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes | None,
    policy: RetryPolicy,
) -> http.Response:
    deadline = time.monotonic() + policy.overall
    attempt = 0
    while True:
        remaining = deadline - time.monotonic()
        async with asyncio.timeout(max(remaining, 0.001)):
            response = await upstream.send(identity, method, target, headers, body)
        wait = policy.retry_after(response.status, attempt, deadline - time.monotonic())
        if wait is None:
            return response
        log.info("retrying", method=method, status=response.status, attempt=attempt + 1)
        try:
            async with asyncio.timeout(max(deadline - time.monotonic(), 0.001)):
                await response.read(limit=DRAIN_LIMIT)
        except (http.HTTPClientError, TimeoutError):
            pass
        finally:
            response.close()
        await asyncio.sleep(wait)
        attempt += 1


async def forward(
    request: web.Request,
    upstream: Upstream,
    identity: Identity,
    target: str,
    *,
    body: bytes | None,
    content_type: str | None = None,
    policy: RetryPolicy | None = None,
) -> web.StreamResponse:
    """Send ``request`` (its method, the checked ``target``, ``body``) upstream as
    ``identity`` and relay the answer (see the module doc)."""
    headers = request_headers(request, content_type=content_type)
    watch = is_watch(request.query)
    try:
        if watch:
            response = await upstream.send(identity, request.method, target, headers, body)
        else:
            response = await _attempts(
                upstream, identity, request.method, target, headers, body, policy or RetryPolicy()
            )
    except RetryDeadline as exc:
        return web.Response(status=502, text=f"{exc}\n")
    except (http.HTTPClientError, TimeoutError) as exc:
        log.warning("the kube-apiserver did not answer", method=request.method, error=str(exc))
        return web.Response(status=502, text="the kube-apiserver did not answer\n")
    return await relay(request, response, watch=watch)


def answer_headers(response: http.Response) -> CIMultiDict[str]:
    """The upstream answer's headers that are relayed (all but :data:`DROPPED_ANSWER_HEADERS`)."""
    relayed: CIMultiDict[str] = CIMultiDict()
    for name, value in response.headers.as_dict().items():
        if name.lower() not in DROPPED_ANSWER_HEADERS:
            relayed.add(name, value)
    return relayed


async def relay(
    request: web.Request, response: http.Response, *, watch: bool
) -> web.StreamResponse:
    """Relay ``response`` to the caller of ``request`` (closed when done): an answer whose
    body has all arrived with its first piece goes back whole, head and body in one write;
    any other (a watch at once, before any body) streams piece by piece."""
    response.read_timeout = None if watch else PIECE_TIMEOUT
    headers = answer_headers(response)
    reason = response.reason or None
    first = b""
    try:
        if not watch and request.method != "HEAD":
            try:
                first = await response.read_some()
            except (http.HTTPClientError, TimeoutError) as exc:
                log.warning("the answer broke off before its body", error=str(exc))
                return web.Response(status=502, text="the kube-apiserver did not answer\n")
            if response.closed:
                return web.Response(
                    status=response.status, reason=reason, headers=headers, body=first
                )
        answer = web.StreamResponse(status=response.status, reason=reason, headers=headers)
        try:
            await answer.prepare(request)
            if first:
                await answer.write(first)
            while piece := await response.read_some():
                await answer.write(piece)
            await answer.write_eof()
        except (http.HTTPClientError, TimeoutError) as exc:
            log.info("the answer broke off", error=str(exc))  # the caller sees a cut stream
        return answer
    finally:
        response.close()
