"""``GET /dashboard/api/namespaces/{ns}/rayclusters/{name}/pods``: the Ray pods of one
RayCluster, for a caller who may read the RayCluster but not list Pods.

1. The names are checked first (namespace a DNS-1123 label, name a DNS-1123 subdomain:
   400 ``Status`` otherwise), before they become path segments.
2. The RayCluster is read **as the caller** (their token in caller mode); a refusal (401,
   403, 404...) is passed back as the apiserver wrote it and no Pod is listed.
3. The Pods labelled ``ray.io/cluster=<name>`` in that namespace are listed as the caller;
   when the caller may not list Pods (403) they are listed with the server's own
   credentials. The server holds no rights in caller mode unless an operator grants its
   ServiceAccount ``pods: list`` (the opt-in); without them the answer is 403 with
   :data:`NO_POD_RIGHTS`.
4. The answer is trimmed to what the page shows (:func:`trim_pod`): never a spec, an env
   var, an IP or an annotation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from aiohttp import web

from kuberay.api.v1.constants import (
    GROUP,
    PLURALS,
    RAY_CLUSTER_LABEL_KEY,
    RAY_NODE_GROUP_LABEL_KEY,
    RAY_NODE_TYPE_LABEL_KEY,
    VERSION,
)
from kuberay.apiserver.dashboard.answer import JsonAnswer
from kuberay.apiserver.errors import UpstreamUnavailable
from kuberay.apiserver.identity import SERVER, Identity
from kuberay.apiserver.kube_calls import KubeAnswer, KubeCall
from kuberay.apiserver.proxy import IDENTITY
from kuberay.apiserver.upstream import Upstream
from kuberay.gocompat.goutil import is_dns1123_label, is_dns1123_subdomain
from kuberay.kube.paths import segment

log = structlog.get_logger("apiserver.dashboard.pods")

#: The dashboard's own API: credentials needed (unlike the dashboard's files).
API_PREFIX = "/dashboard/api"
#: The route (aiohttp pattern) under :data:`API_PREFIX`.
PODS_PATH = API_PREFIX + "/namespaces/{namespace}/rayclusters/{name}/pods"
ROUTE_NAME = "dashboard-pods"
NO_POD_RIGHTS = (
    "the API server has no rights to list pods: grant its ServiceAccount pods list, "
    "or give the user pods list"
)


def name_problem(namespace: str, name: str) -> str | None:
    """Why ``namespace``/``name`` cannot name a RayCluster (None: they can)."""
    for what, problems in (
        ("namespace", is_dns1123_label(namespace)),
        ("name", is_dns1123_subdomain(name)),
    ):
        if problems:
            return f"invalid {what}: {problems[0]}"
    return None


def _ready(pod: Mapping[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def trim_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``pod`` the page shows: name, node type, group, phase, ready, restarts
    (the sum of its containers' ``restartCount``), creation and start time."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    status = pod.get("status") or {}
    restarts = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
    return {
        "name": meta.get("name", ""),
        "nodeType": labels.get(RAY_NODE_TYPE_LABEL_KEY, ""),
        "group": labels.get(RAY_NODE_GROUP_LABEL_KEY, ""),
        "phase": status.get("phase", ""),
        "ready": _ready(pod),
        "restarts": restarts,
        "creationTimestamp": meta.get("creationTimestamp", ""),
        "startTime": status.get("startTime", ""),
    }


def trimmed_list(answer: KubeAnswer, cluster: str) -> JsonAnswer:
    """The page's list from a PodList answer: only pods labelled for ``cluster``, by name."""
    items = answer.json().get("items") or []
    pods = [
        trim_pod(p)
        for p in items
        if ((p.get("metadata") or {}).get("labels") or {}).get(RAY_CLUSTER_LABEL_KEY) == cluster
    ]
    pods.sort(key=lambda p: str(p["name"]))
    body = {"kind": "RayClusterPodList", "cluster": cluster, "items": pods}
    return JsonAnswer.of(body)


async def cluster_pods(
    caller: KubeCall, server: KubeCall | None, namespace: str, name: str
) -> JsonAnswer:
    """The answer for ``namespace``/``name`` (see the module doc); ``server`` is the
    server's own call, None when the caller already is the server."""
    problem = name_problem(namespace, name)
    if problem is not None:
        return JsonAnswer.refused(400, "BadRequest", problem)
    ns = segment("namespace", namespace)
    cluster = f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/{PLURALS['RayCluster']}/" + segment(
        "name", name
    )
    try:
        found = await caller("GET", cluster)
        if not found.ok:
            return JsonAnswer.passed_back(found)
        path = f"/api/v1/namespaces/{ns}/pods"
        params = {"labelSelector": f"{RAY_CLUSTER_LABEL_KEY}={name}"}
        listed = await caller("GET", path, params=params)
        if listed.status == 403 and server is not None:
            listed = await server("GET", path, params=params)
            if listed.status in (401, 403):
                log.info("no rights to list pods", namespace=namespace, code=listed.status)
                return JsonAnswer.refused(403, "Forbidden", NO_POD_RIGHTS)
        if not listed.ok:
            return JsonAnswer.passed_back(listed)
        return trimmed_list(listed, name)
    except UpstreamUnavailable as exc:
        log.warning("pods read failed", namespace=namespace, error=str(exc))
        return JsonAnswer.refused(502, "ServiceUnavailable", "the kube-apiserver did not answer")
    except (ValueError, AttributeError, TypeError):
        return JsonAnswer.refused(
            500, "InternalError", "the kube-apiserver's pod list was unreadable"
        )


def add_pods_route(router: web.UrlDispatcher, upstream: Upstream) -> None:
    """Add ``GET``/``HEAD`` :data:`PODS_PATH` over ``upstream`` (before the dashboard's files,
    whose pattern would match it too)."""

    async def handle(request: web.Request) -> web.Response:
        identity: Identity = request[IDENTITY]
        server = None if identity.own else upstream.call_for(SERVER)
        answer = await cluster_pods(
            upstream.call_for(identity),
            server,
            request.match_info["namespace"],
            request.match_info["name"],
        )
        return answer.response()

    router.add_get(PODS_PATH, handle, name=ROUTE_NAME, allow_head=True)
