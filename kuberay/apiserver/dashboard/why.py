"""``GET /dashboard/api/namespaces/{ns}/{plural}/{name}/why``: the diagnosis ``kubectl ray
why`` prints (:mod:`kuberay.diagnosis`, the one implementation), for the detail page.

1. The plural must be ``rayclusters``, ``rayjobs`` or ``rayservices`` (404 otherwise) and
   the names are checked (the Pods route's :func:`~.pods.name_problem`: 400) before they
   become path segments.
2. The object is read **as the caller**; a refusal (401, 403, 404...) is passed back as the
   apiserver wrote it and nothing else is read.
3. What the diagnosis looks at (:mod:`kuberay.diagnosis.inputs`: the RayClusters of a
   RayJob or RayService, their pods, Events, auth Secret and head Service, a RayJob's
   submitter Job) is read as the caller too. Pods the caller may not list are listed with
   the server's credentials as the Pods route does (the caller may read the RayCluster);
   any other read the caller may not make is left out, and the answer's ``notes`` say which
   (the rules then give no verdict on it: an unread Secret is not a missing one).
4. The answer is the diagnosis as ``kubectl ray why -o json`` prints it, plus ``notes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from aiohttp import web

from kuberay.api.v1.constants import GROUP, PLURALS, RAY_CLUSTER_LABEL_KEY, VERSION
from kuberay.apiserver.dashboard.answer import JsonAnswer
from kuberay.apiserver.dashboard.pods import API_PREFIX, name_problem
from kuberay.apiserver.errors import UpstreamUnavailable
from kuberay.apiserver.identity import SERVER, Identity
from kuberay.apiserver.kube_calls import KubeCall
from kuberay.apiserver.proxy import IDENTITY
from kuberay.apiserver.upstream import Upstream
from kuberay.diagnosis.findings import Snapshot
from kuberay.diagnosis.inputs import (
    WARNING_EVENTS,
    auth_secret_to_read,
    cluster_events,
    clusters_to_read,
    events_selector,
    head_service_to_read,
)
from kuberay.diagnosis.rules import diagnose
from kuberay.kube.paths import segment

log = structlog.get_logger("apiserver.dashboard.why")

WHY_PATH = API_PREFIX + "/namespaces/{namespace}/{plural}/{name}/why"
ROUTE_NAME = "dashboard-why"
#: The kinds the diagnosis knows, by plural.
KINDS_BY_PLURAL = {PLURALS[k]: k for k in ("RayCluster", "RayJob", "RayService")}

Obj = dict[str, Any]


class _Reader:
    """Reads as the caller (pods: the server's credentials when the caller may not list
    them); what cannot be read is noted, not guessed."""

    def __init__(self, caller: KubeCall, server: KubeCall | None, namespace: str) -> None:
        self.caller, self.server = caller, server
        self.ns = segment("namespace", namespace)
        self.notes: list[str] = []

    async def get(self, api: str, plural: str, name: str, what: str) -> tuple[bool, Obj | None]:
        """(read, object): (True, None) when it does not exist, (False, None) unread."""
        path = f"{api}/namespaces/{self.ns}/{plural}/" + segment("name", name)
        answer = await self.caller("GET", path)
        if answer.status == 404:
            return True, None
        if not answer.ok:
            self.notes.append(f"{what} not read (HTTP {answer.status})")
            return False, None
        obj: Obj = answer.json()
        return True, obj

    async def items(self, path: str, params: Mapping[str, str], what: str) -> list[Obj]:
        """The items of a list as the caller ([] and a note when refused)."""
        answer = await self.caller("GET", f"/api/v1/namespaces/{self.ns}/{path}", params=params)
        if answer.status == 403 and path == "pods" and self.server is not None:
            answer = await self.server("GET", f"/api/v1/namespaces/{self.ns}/pods", params=params)
        if not answer.ok:
            self.notes.append(f"{what} not read (HTTP {answer.status})")
            return []
        return list(answer.json().get("items") or [])

    async def events(self, kind: str, name: str) -> list[Obj]:
        """The Events about ``kind/name``."""
        return await self.items(
            "events", {"fieldSelector": events_selector(kind, name)}, f"Events of {kind}/{name}"
        )

    async def cluster(self, cluster: Obj) -> Snapshot:
        """A RayCluster's snapshot, as ``kubectl ray why`` takes it."""
        name = cluster["metadata"]["name"]
        label = {"labelSelector": f"{RAY_CLUSTER_LABEL_KEY}={name}"}
        pods = await self.items("pods", label, f"Pods of RayCluster/{name}")
        own = await self.events("RayCluster", name)
        warnings = await self.items(
            "events", {"fieldSelector": WARNING_EVENTS}, "Warning Events of its pods"
        )
        secrets: dict[str, Obj | None] = {}
        secret = auth_secret_to_read(cluster)
        if secret is not None:
            read, obj = await self.get("/api/v1", "secrets", secret, f"Secret/{secret}")
            if read:
                secrets[secret] = obj
        services: dict[str, Obj | None] = {}
        service = head_service_to_read(cluster)
        if service is not None:
            read, obj = await self.get("/api/v1", "services", service, f"Service/{service}")
            if read:
                services[service] = obj
        events = cluster_events(name, pods, own, warnings)
        return Snapshot(obj=cluster, pods=pods, events=events, secrets=secrets, services=services)


def _typed(obj: Obj, kind: str) -> Obj:
    obj.setdefault("apiVersion", f"{GROUP}/{VERSION}")
    obj.setdefault("kind", kind)
    return obj


async def diagnosis_answer(
    caller: KubeCall, server: KubeCall | None, namespace: str, plural: str, name: str
) -> JsonAnswer:
    """The answer for ``plural``/``name`` in ``namespace`` (see the module doc); ``server``
    is the server's own call, None when the caller already is the server."""
    kind = KINDS_BY_PLURAL.get(plural)
    if kind is None:
        return JsonAnswer.refused(404, "NotFound", f"no diagnosis for {plural!r}")
    problem = name_problem(namespace, name)
    if problem is not None:
        return JsonAnswer.refused(400, "BadRequest", problem)
    ray_api = f"/apis/{GROUP}/{VERSION}"
    reader = _Reader(caller, server, namespace)
    try:
        path = f"{ray_api}/namespaces/{reader.ns}/{plural}/" + segment("name", name)
        found = await caller("GET", path)
        if not found.ok:
            return JsonAnswer.passed_back(found)
        obj = _typed(found.json(), kind)
        if kind == "RayCluster":
            snap = await reader.cluster(obj)
        else:
            jobs: list[Obj] = []
            if kind == "RayJob":
                read, job = await reader.get("/apis/batch/v1", "jobs", name, f"Job/{name}")
                jobs = [_typed(job, "Job")] if read and job is not None else []
            clusters: list[Snapshot] = []
            for cname in clusters_to_read(obj):
                what = f"RayCluster/{cname}"
                read, cluster = await reader.get(ray_api, PLURALS["RayCluster"], cname, what)
                if cluster is not None:
                    clusters.append(await reader.cluster(_typed(cluster, "RayCluster")))
            events = await reader.events(kind, name)
            snap = Snapshot(obj=obj, events=events, clusters=clusters, jobs=jobs)
        body = {**diagnose(snap).as_dict(), "notes": reader.notes}
        return JsonAnswer.of(body)
    except UpstreamUnavailable as exc:
        log.warning("diagnosis read failed", namespace=namespace, error=str(exc))
        return JsonAnswer.refused(502, "ServiceUnavailable", "the kube-apiserver did not answer")
    except (ValueError, AttributeError, TypeError, KeyError):
        return JsonAnswer.refused(
            500, "InternalError", "the kube-apiserver's answer was unreadable"
        )


def add_why_route(router: web.UrlDispatcher, upstream: Upstream) -> None:
    """Add ``GET``/``HEAD`` :data:`WHY_PATH` over ``upstream`` (before the dashboard's files)."""

    async def handle(request: web.Request) -> web.Response:
        identity: Identity = request[IDENTITY]
        server = None if identity.own else upstream.call_for(SERVER)
        info = request.match_info
        answer = await diagnosis_answer(
            upstream.call_for(identity), server, info["namespace"], info["plural"], info["name"]
        )
        return answer.response()

    router.add_get(WHY_PATH, handle, name=ROUTE_NAME, allow_head=True)
