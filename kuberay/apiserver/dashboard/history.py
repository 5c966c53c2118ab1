"""``GET /dashboard/api/namespaces/{ns}/{plural}/{name}/history``: the sessions the history
server (``--history-server-url``) keeps of a RayCluster, RayJob or RayService, for the
detail page's History links (registered only when the flag is set).

1. The plural and names are checked as the Why route checks them (404, 400).
2. **The rights check**: the object is read as the caller. A 200 or a 404 both say the
   caller may ``get`` that kind in that namespace (the kube-apiserver authorizes before it
   looks the object up, so a caller without the right gets 403 whether it exists or not):
   a deleted cluster's history stays visible to whoever could read it. Any other answer is
   passed back and the history server is not asked.
3. The history server's ``/clusters`` is read by this server (no caller token, no cookie
   forwarded; at most :data:`MAX_LISTING` bytes, :data:`TIMEOUT` seconds) and cut to the
   sessions of that object in that namespace: a RayCluster's by its name, a RayJob's or
   RayService's by owner. Each item carries ``url``, the history server's
   ``/enter_cluster/{ns}/raycluster/{cluster}/{session}`` page (the browser opens the
   history server's own UI there: its own login, ``--kubernetes-login``, applies).
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from typing import Any

import structlog
from aiohttp import web

from kuberay import http
from kuberay.api.v1.constants import GROUP, VERSION
from kuberay.apiserver.dashboard.answer import JsonAnswer
from kuberay.apiserver.dashboard.pods import API_PREFIX, name_problem
from kuberay.apiserver.dashboard.why import KINDS_BY_PLURAL
from kuberay.apiserver.errors import UpstreamUnavailable
from kuberay.apiserver.identity import Identity
from kuberay.apiserver.kube_calls import KubeCall
from kuberay.apiserver.proxy import IDENTITY
from kuberay.apiserver.upstream import USER_AGENT, Upstream
from kuberay.kube.paths import segment

log = structlog.get_logger("apiserver.dashboard.history")

HISTORY_PATH = API_PREFIX + "/namespaces/{namespace}/{plural}/{name}/history"
ROUTE_NAME = "dashboard-history"
#: The largest ``/clusters`` answer read from the history server.
MAX_LISTING = 4 * 2**20
#: Seconds the history server has to answer.
TIMEOUT = 10.0
CLUSTERS = "/clusters"


class HistoryServer:
    """The history server at ``url`` (its base URL: a path prefix is kept), read with this
    server's own connection and nothing of the caller's."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self._pool = http.ConnectionPool(self.url, user_agent=USER_AGENT)

    async def clusters(self) -> list[dict[str, Any]]:
        """The ``/clusters`` entries (``UpstreamUnavailable`` when they cannot be read)."""
        try:
            async with asyncio.timeout(TIMEOUT):
                response = await self._pool.request(
                    "GET", CLUSTERS, headers=[("Accept", "application/json")]
                )
                try:
                    raw = await response.read(limit=MAX_LISTING)
                finally:
                    response.close()
        except (http.HTTPClientError, TimeoutError) as exc:
            raise UpstreamUnavailable(f"the history server did not answer: {exc}") from exc
        if response.status != 200:
            raise UpstreamUnavailable(f"the history server answered {response.status}")
        entries = json.loads(raw)
        if not isinstance(entries, list):
            raise ValueError("the history server's /clusters is not a list")
        return [e for e in entries if isinstance(e, dict)]

    def enter_url(self, namespace: str, cluster: str, session: str) -> str:
        """The history server's page of ``session`` of RayCluster ``cluster``."""
        parts = [namespace, "raycluster", cluster, session]
        quoted = "/".join(urllib.parse.quote(p, safe="") for p in parts)
        return f"{self.url}/enter_cluster/{quoted}"

    async def close(self) -> None:
        """Close the connections."""
        await self._pool.close()


def sessions_of(
    entries: list[dict[str, Any]], kind: str, namespace: str, name: str
) -> list[dict[str, Any]]:
    """The entries of ``kind`` ``name`` in ``namespace``: a RayCluster's by cluster name,
    a RayJob's or RayService's by owner; newest first as the history server lists them."""
    owned = kind != "RayCluster"
    return [
        e
        for e in entries
        if e.get("namespace") == namespace
        and (
            (str(e.get("ownerKind", "")).lower() == kind.lower() and e.get("ownerName") == name)
            if owned
            else e.get("name") == name
        )
        and isinstance(e.get("name"), str)
        and isinstance(e.get("sessionName"), str)
    ]


async def history_answer(
    caller: KubeCall, history: HistoryServer, namespace: str, plural: str, name: str
) -> JsonAnswer:
    """The answer for ``plural``/``name`` in ``namespace`` (see the module doc)."""
    kind = KINDS_BY_PLURAL.get(plural)
    if kind is None:
        return JsonAnswer.refused(404, "NotFound", f"no history for {plural!r}")
    problem = name_problem(namespace, name)
    if problem is not None:
        return JsonAnswer.refused(400, "BadRequest", problem)
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{segment('namespace', namespace)}/{plural}/"
    try:
        found = await caller("GET", path + segment("name", name))
        if not found.ok and found.status != 404:
            return JsonAnswer.passed_back(found)
        entries = sessions_of(await history.clusters(), kind, namespace, name)
    except UpstreamUnavailable as exc:
        log.warning("history read failed", namespace=namespace, error=str(exc))
        return JsonAnswer.refused(502, "ServiceUnavailable", str(exc))
    except ValueError:
        return JsonAnswer.refused(
            502, "ServiceUnavailable", "the history server's answer was unreadable"
        )
    items = [
        {
            "cluster": e["name"],
            "sessionName": e["sessionName"],
            "createTime": e.get("createTime", ""),
            "url": history.enter_url(namespace, e["name"], e["sessionName"]),
        }
        for e in entries
    ]
    body = {"kind": "HistorySessionList", "exists": found.ok, "items": items}
    return JsonAnswer.of(body)


def add_history_route(app: web.Application, upstream: Upstream, url: str) -> None:
    """Add ``GET``/``HEAD`` :data:`HISTORY_PATH` reading the history server at ``url``
    (closed with ``app``)."""
    history = HistoryServer(url)

    async def handle(request: web.Request) -> web.Response:
        identity: Identity = request[IDENTITY]
        info = request.match_info
        answer = await history_answer(
            upstream.call_for(identity), history, info["namespace"], info["plural"], info["name"]
        )
        return answer.response()

    async def close(_app: web.Application) -> None:
        await history.close()

    app.router.add_get(HISTORY_PATH, handle, name=ROUTE_NAME, allow_head=True)
    app.on_cleanup.append(close)
