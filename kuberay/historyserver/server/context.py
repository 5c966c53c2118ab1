"""The session context of a request: the state every handler shares, the cookies that select
a cluster and session, query parameters, and the dashboard's answer envelope.

A request's session comes from the cookies ``/enter_cluster`` sets (KubeRay's names:
``cluster_name``, ``cluster_namespace``, ``session_name``, ``owner_kind``, ``owner_name``).
Each cookie is checked as a layout segment before it becomes part of any key: a value that
could leave the layout (``..``, ``/``, ...) is a 400, a missing cookie a 400, a session with
nothing stored a 404. The session is then taken from the cache (loaded once on first use).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import attrs
import orjson
from aiohttp import web

from kuberay.historyserver.layout import ClusterRef, Layout, LayoutError, check_segment
from kuberay.historyserver.server.answers import AnswerCache
from kuberay.historyserver.server.cache import SessionCache
from kuberay.historyserver.server.clusters import ClusterIndex
from kuberay.historyserver.server.freshness import Freshness
from kuberay.historyserver.server.live import LIVE_SESSION, LiveClusters
from kuberay.historyserver.server.live_proxy import LiveProxy
from kuberay.historyserver.server.session import SessionKey, SessionNotFound, SessionSnapshot
from kuberay.historyserver.storage.base import ObjectStore

COOKIE_NAMES = ("cluster_name", "cluster_namespace", "session_name", "owner_kind", "owner_name")
COOKIE_MAX_AGE = 600


@attrs.define
class ServerState:
    """What every handler shares: the store, the storage root, the session cache, the
    cluster index, and (``--enable-live-clusters``) the live clusters and their proxy."""

    store: ObjectStore
    root: str
    cache: SessionCache[SessionKey, SessionSnapshot]
    clusters: ClusterIndex
    live: LiveClusters | None = None
    proxy: LiveProxy | None = None
    freshness: Freshness | None = None
    answers: AnswerCache = attrs.field(factory=AnswerCache)


STATE: web.AppKey[ServerState] = web.AppKey("history_state", ServerState)
#: ``async (namespaces) -> the readable ones``: what the Kubernetes login allows a caller.
NamespaceFilter = Callable[[Iterable[str]], Awaitable[set[str]]]
#: Request key set by the Kubernetes login (absent: every namespace may be read).
ALLOWED_NAMESPACES: web.RequestKey[NamespaceFilter] = web.RequestKey("kuberay_allowed_namespaces")


class ApiError(Exception):
    """An error answer: HTTP ``status`` and a one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def envelope(data: dict[str, Any], *, message: str = "") -> dict[str, Any]:
    """The dashboard's ``rest_response`` body for a success."""
    return {"result": True, "msg": message, "data": data}


def list_envelope(
    items: list[dict[str, Any]], *, total: int, num_filtered: int | None = None
) -> dict[str, Any]:
    """The state API's list answer (``ListApiResponse`` inside ``rest_response``)."""
    return envelope(
        {
            "result": {
                "total": total,
                "num_after_truncation": total,
                "num_filtered": len(items) if num_filtered is None else num_filtered,
                "result": items,
                "partial_failure_warning": "",
                "warnings": None,
            }
        }
    )


def json_response(body: Any, status: int = 200) -> web.Response:
    """``body`` as JSON, spaced as Ray's dashboard (aiohttp's ``json.dumps``) writes it."""
    return web.json_response(body, status=status)


def encode_json(body: Any) -> bytes:
    """``body`` encoded compactly by orjson, for the big answers (a 10,000-task answer is
    encoded several times faster than by the standard library); JSON readers see no
    difference."""
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)


def splice_list(body: Any, items_json: Sequence[bytes | memoryview]) -> bytes:
    """``body`` encoded by ``encode_json`` with its one empty ``"result": []`` list replaced
    by ``items_json`` (the pieces of an encoded JSON array, joined): a list answer made of
    already encoded items, copied once."""
    head, sep, tail = encode_json(body).partition(b'"result":[]')
    if not sep or b'"result":[]' in tail:
        raise ValueError("the body must hold exactly one empty result list")
    return b"".join([head, b'"result":', *items_json, tail])


def state_of(request: web.Request) -> ServerState:
    """The shared ``ServerState``."""
    return request.app[STATE]


def cluster_from_cookies(request: web.Request) -> tuple[ClusterRef, str]:
    """The cluster and session the cookies name, checked; ``ApiError(400)`` otherwise."""
    cookies = request.cookies
    name, namespace, session = (
        cookies.get("cluster_name"),
        cookies.get("cluster_namespace"),
        cookies.get("session_name"),
    )
    if not name or not namespace or not session:
        raise ApiError(
            400,
            "no cluster selected: call /enter_cluster/<namespace>/<kind>/<name>[/<session>] "
            "first (it sets the cluster_name, cluster_namespace and session_name cookies)",
        )
    if session == LIVE_SESSION:
        raise ApiError(
            400, "live clusters are not served: start the server with --enable-live-clusters"
        )
    try:
        ref = ClusterRef.make(
            namespace, name, cookies.get("owner_kind", ""), cookies.get("owner_name", "")
        )
        check_segment(session, "session name")
    except LayoutError as exc:
        raise ApiError(400, str(exc)) from None
    return ref, session


async def get_session(state: ServerState, ref: ClusterRef, session: str) -> SessionSnapshot:
    """The decoded session from the cache; 404 when nothing is stored, 504 on a load
    timeout."""
    key = SessionKey(Layout(ref, root=state.root), session)
    try:
        snapshot = await state.cache.get(key)
    except SessionNotFound:
        raise ApiError(404, f"session {key.describe()} not found") from None
    except TimeoutError:
        raise ApiError(504, f"loading session {key.describe()} timed out") from None
    if state.freshness is not None:
        state.freshness.used(snapshot)
    return snapshot


async def current_session(request: web.Request) -> SessionSnapshot:
    """The session the request's cookies select."""
    ref, session = cluster_from_cookies(request)
    return await get_session(state_of(request), ref, session)


def query_int(request: web.Request, name: str, default: int, *, lo: int, hi: int) -> int:
    """An integer query parameter within ``[lo, hi]``; ``ApiError(400)`` when malformed."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer, got {raw!r}") from None
    if not lo <= value <= hi:
        raise ApiError(400, f"{name} must be between {lo} and {hi}, got {value}")
    return value


def query_bool(request: web.Request, name: str, default: bool) -> bool:
    """A boolean query parameter (``1``/``true``/``yes`` or ``0``/``false``/``no``)."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "t"):
        return True
    if value in ("0", "false", "no", "f"):
        return False
    raise ApiError(400, f"{name} must be true or false, got {raw!r}")
