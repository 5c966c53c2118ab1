"""``GET /dashboard/api/namespaces/{ns}/rayjobs/{name}/log``: the tail of a RayJob's driver
log, from the Ray dashboard of its cluster through the kube-apiserver's Service proxy.

1. The names are checked as the Pods route checks them (400).
2. The RayJob, then its RayCluster (``status.rayClusterName``), are read **as the caller**;
   a refusal is passed back.
3. ``status.jobId`` (the submission ID) must be a plain name (:data:`JOB_ID`: letters,
   digits, ``.``, ``_``, ``-``; 409 otherwise, never sent) before it becomes a path segment.
4. ``GET /api/v1/namespaces/NS/services/http:<head>:dashboard/proxy/api/jobs/<id>/logs``
   (``<head>``: the cluster's ``status.head.serviceName``) is sent **as the caller** (the
   kube-apiserver checks their ``services/proxy`` right); its refusal (or the Ray
   dashboard's) is passed back as a ``Status``. Ray answers the whole log; at most
   :data:`~kuberay.apiserver.kube_calls.MAX_BUFFERED_ANSWER` bytes are read and the last
   :data:`TAIL_BYTES` of it kept, from a line start.
5. The answer: ``{"kind": "RayJobLog", "jobId", "cluster", "log", "truncated"}``; while the
   RayJob has no Ray job yet, ``log`` is empty and ``pending`` true.
"""

from __future__ import annotations

import re
from typing import Any

import structlog
from aiohttp import web

from kuberay.api.v1.constants import GROUP, PLURALS, VERSION
from kuberay.apiserver.dashboard.answer import JsonAnswer
from kuberay.apiserver.dashboard.pods import API_PREFIX, name_problem
from kuberay.apiserver.errors import UpstreamUnavailable
from kuberay.apiserver.identity import Identity
from kuberay.apiserver.kube_calls import KubeCall
from kuberay.apiserver.proxy import IDENTITY
from kuberay.apiserver.upstream import Upstream
from kuberay.diagnosis.inputs import head_service_to_read
from kuberay.kube.paths import segment

log = structlog.get_logger("apiserver.dashboard.driver_log")

LOG_PATH = API_PREFIX + "/namespaces/{namespace}/rayjobs/{name}/log"
ROUTE_NAME = "dashboard-driver-log"
#: What of the log is kept: its last 64 KiB.
TAIL_BYTES = 64 * 1024
#: A submission ID that may become a path segment.
JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")
#: The head Service's port the Ray dashboard listens on (the operator names it so).
DASHBOARD_PORT = "dashboard"


def tail(text: str, limit: int = TAIL_BYTES) -> tuple[str, bool]:
    """The end of ``text``: at most ``limit`` UTF-8 bytes, from a line start when cut;
    and whether it was cut."""
    raw = text.encode()
    if len(raw) <= limit:
        return text, False
    end = raw[-limit:]
    newline = end.find(b"\n")
    if 0 <= newline < len(end) - 1:
        end = end[newline + 1 :]
    return end.decode("utf-8", "ignore"), True


def _answer(body: dict[str, Any]) -> JsonAnswer:
    return JsonAnswer.of({"kind": "RayJobLog", **body})


async def driver_log(caller: KubeCall, namespace: str, name: str) -> JsonAnswer:
    """The answer for RayJob ``name`` in ``namespace`` (see the module doc)."""
    problem = name_problem(namespace, name)
    if problem is not None:
        return JsonAnswer.refused(400, "BadRequest", problem)
    ns = segment("namespace", namespace)
    ray = f"/apis/{GROUP}/{VERSION}/namespaces/{ns}"
    try:
        found = await caller("GET", f"{ray}/{PLURALS['RayJob']}/" + segment("name", name))
        if not found.ok:
            return JsonAnswer.passed_back(found)
        status = found.json().get("status") or {}
        job_id, cluster_name = status.get("jobId") or "", status.get("rayClusterName") or ""
        if not job_id or not cluster_name:
            return _answer({"jobId": job_id, "cluster": cluster_name, "log": "", "pending": True})
        if not JOB_ID.match(job_id):
            return JsonAnswer.refused(
                409, "Conflict", "the RayJob's jobId cannot be asked for in a URL"
            )
        path = f"{ray}/{PLURALS['RayCluster']}/" + segment("name", cluster_name)
        cluster_answer = await caller("GET", path)
        if not cluster_answer.ok:
            return JsonAnswer.passed_back(cluster_answer)
        cluster = cluster_answer.json()
        service = ((cluster.get("status") or {}).get("head") or {}).get("serviceName")
        service = service or head_service_to_read(cluster)
        if not service:
            return _answer({"jobId": job_id, "cluster": cluster_name, "log": "", "pending": True})
        proxy = f"http:{segment('service', service)}:{DASHBOARD_PORT}"
        job = segment("job id", job_id)
        logs = await caller(
            "GET", f"/api/v1/namespaces/{ns}/services/{proxy}/proxy/api/jobs/{job}/logs"
        )
        if not logs.ok:
            return JsonAnswer.passed_back(logs)
        text, truncated = tail(str(logs.json().get("logs") or ""))
    except UpstreamUnavailable as exc:
        log.warning("driver log read failed", namespace=namespace, error=str(exc))
        return JsonAnswer.refused(502, "ServiceUnavailable", f"the log could not be read: {exc}")
    except (ValueError, AttributeError, TypeError):
        return JsonAnswer.refused(
            502, "ServiceUnavailable", "the Ray dashboard's answer was unreadable"
        )
    body = {"jobId": job_id, "cluster": cluster_name, "log": text, "truncated": truncated}
    return _answer(body)


def add_driver_log_route(router: web.UrlDispatcher, upstream: Upstream) -> None:
    """Add ``GET``/``HEAD`` :data:`LOG_PATH` over ``upstream``."""

    async def handle(request: web.Request) -> web.Response:
        identity: Identity = request[IDENTITY]
        info = request.match_info
        answer = await driver_log(upstream.call_for(identity), info["namespace"], info["name"])
        return answer.response()

    router.add_get(LOG_PATH, handle, name=ROUTE_NAME, allow_head=True)
