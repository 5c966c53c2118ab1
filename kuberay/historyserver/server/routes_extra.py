"""The rest of the dashboard routes Ray's UI calls, and the ``/api/...`` fallback.

* ``GET /api/v0/tasks/timeline[?job_id=&download=1]``: the Chrome trace (``timeline``) as
  a JSON array; ``download=1`` makes it an attachment ``timeline-<job>-<time>.json``.
* ``GET /events[?job_id=]``: Ray's legacy events (``legacy_events``): without ``job_id``
  ``data.events`` maps job ID -> list, with it ``data.jobId`` and ``data.events`` (an
  unknown job: an empty list). Keys camelCased recursively, as Ray's ``rest_response``.
* ``GET /api/cluster_status``: ``format=1`` -> ``data.clusterStatus`` the status text
  (``cluster_status``); otherwise ``autoscalingStatus``/``autoscalingError``/
  ``clusterStatus`` all null (a stored session has no autoscaler record). A stored
  snapshot of the exact request wins over both.
* ``GET /api/v0/runtime_env_redaction``: ``{redactionEnabled: false}``.
* ``GET /api/v0/platform_events``: the session's PLATFORM_EVENTs (``platform_events``), else
  the stored snapshot, else ``{events: []}``.
* ``GET /api/v0/workers``: ``WorkerState`` from WORKER_* events (``workers``), else the
  stored snapshot of the exact URL.
* ``GET /api/grafana_health`` and ``/api/prometheus_health``: 500 with Ray's failed
  health-check messages (what Ray answers when neither is reachable), so the UI hides its
  metrics tabs.
* ``GET /api/{subpath}`` (registered last): the ``fetched_endpoints`` body stored for the
  exact path and query; if none, an empty valid answer for ``/api/data/datasets/<job>``
  (``{"datasets": []}``), ``/api/serve/applications`` and ``/api/v0/placement_groups``;
  otherwise 404.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aiohttp import web

from kuberay.historyserver.layout import DATASETS_ENDPOINT_PREFIX, LayoutError, ray_camel
from kuberay.historyserver.server import workers as worker_model
from kuberay.historyserver.server.cluster_status import format_status
from kuberay.historyserver.server.context import (
    ApiError,
    current_session,
    json_response,
    list_envelope,
    query_bool,
    query_int,
    state_of,
)
from kuberay.historyserver.server.routes_state import EMPTY_SERVE, MAX_LIMIT
from kuberay.historyserver.server.session import SessionSnapshot
from kuberay.historyserver.server.tasks import FilterError, parse_filters, select_tasks
from kuberay.historyserver.server.timeline import chrome_trace
from kuberay.historyserver.storage.errors import NotFound


def google_style(value: Any) -> Any:
    """Ray's ``to_google_style``: every dict key camelCased, recursively (also inside
    lists of dicts)."""
    if isinstance(value, dict):
        return {ray_camel(str(k)): google_style(v) for k, v in value.items()}
    if isinstance(value, list):
        return [google_style(v) if isinstance(v, dict) else v for v in value]
    return value


def rest(data: dict[str, Any], message: str = "", status: int = 200) -> web.Response:
    """Ray's ``rest_response``: ``result`` true only for 200, keys camelCased."""
    return json_response(
        {"result": status == 200, "msg": message, "data": google_style(data)}, status
    )


async def stored_endpoint(request: web.Request, snap: SessionSnapshot) -> bytes | None:
    """The stored ``fetched_endpoints`` body for this request's path and query, if any."""
    store = state_of(request).store
    candidates = dict.fromkeys([request.rel_url.raw_path_qs, request.path_qs])
    for endpoint in candidates:
        try:
            key = snap.key.layout.endpoint_key(snap.key.session, endpoint)
        except LayoutError:
            raise ApiError(400, f"invalid endpoint {endpoint!r}") from None
        try:
            return await store.get(key)
        except NotFound:
            continue
    return None


async def timeline(request: web.Request) -> web.Response:
    """``GET /api/v0/tasks/timeline``."""
    snap = await current_session(request)
    job_id = request.query.get("job_id") or None
    filters = [("job_id", "=", job_id)] if job_id else []
    tasks = select_tasks(snap.tasks, filters, exclude_driver=True)[:10000]
    response = json_response(chrome_trace(tasks, snap.node_ips()))
    if request.query.get("download") == "1":
        now = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
        response.headers["Content-Disposition"] = (
            f'attachment; filename="timeline-{job_id}-{now}.json"'
        )
    return response


async def events(request: web.Request) -> web.Response:
    """``GET /events[?job_id=]``."""
    snap = await current_session(request)
    job_id = request.query.get("job_id")
    if job_id is None:
        return rest({"events": snap.log_events}, "All events fetched.")
    return rest(
        {"job_id": job_id, "events": snap.log_events.get(job_id, [])}, "Job events fetched."
    )


async def cluster_status(request: web.Request) -> web.Response:
    """``GET /api/cluster_status[?format=1]``."""
    snap = await current_session(request)
    stored = await stored_endpoint(request, snap)
    if stored is not None:
        return web.Response(body=stored, content_type="application/json")
    if request.query.get("format", "0") == "1":
        text = format_status(snap.nodes, snap.tasks, snap.actors)
        return rest({"cluster_status": text}, "Got formatted cluster status.")
    return rest(
        {"autoscaling_status": None, "autoscaling_error": None, "cluster_status": None},
        "Got cluster status.",
    )


async def runtime_env_redaction(_request: web.Request) -> web.Response:
    """``GET /api/v0/runtime_env_redaction``."""
    return rest({"redaction_enabled": False})


async def platform_events(request: web.Request) -> web.Response:
    """``GET /api/v0/platform_events``: the session's PLATFORM_EVENTs, newest first (as
    Ray's head answers); else a stored snapshot; else none."""
    snap = await current_session(request)
    if snap.platform_events is not None:
        return json_response(
            {
                "result": True,
                "msg": "Retrieved platform events",
                "data": {"events": snap.platform_events},
            }
        )
    stored = await stored_endpoint(request, snap)
    if stored is not None:
        return web.Response(body=stored, content_type="application/json")
    return rest({"events": []}, "Retrieved platform events")


async def grafana_health(_request: web.Request) -> web.Response:
    """``GET /api/grafana_health``: not reachable (as Ray with no Grafana)."""
    return rest(
        {"exception": "Grafana is not available for a stored session"},
        "Grafana healthcheck failed",
        500,
    )


async def prometheus_health(_request: web.Request) -> web.Response:
    """``GET /api/prometheus_health``: not reachable (as Ray with no Prometheus)."""
    return rest(
        {"reason": "Prometheus is not available for a stored session"},
        "prometheus healthcheck failed.",
        500,
    )


def _empty_answer(path: str) -> Any | None:
    p = path.rstrip("/")
    if p.startswith(DATASETS_ENDPOINT_PREFIX) and p.count("/") == 4:
        return {"datasets": []}
    if p == "/api/serve/applications":
        return EMPTY_SERVE
    if p == "/api/v0/placement_groups":
        return list_envelope([], total=0)
    return None


async def api_fallback(request: web.Request) -> web.Response:
    """``GET /api/{subpath}``: a stored snapshot, an empty valid answer, or 404."""
    snap = await current_session(request)
    stored = await stored_endpoint(request, snap)
    if stored is not None:
        return web.Response(body=stored, content_type="application/json")
    empty = _empty_answer(request.path)
    if empty is None:
        raise ApiError(404, f"{request.path} was not stored for this session")
    return json_response(empty)


async def workers(request: web.Request) -> web.Response:
    """``GET /api/v0/workers``: ``limit`` (100), ``detail``, ``filter_keys``/
    ``filter_predicates``/``filter_values`` on ``WorkerState``'s brief columns; from WORKER_*
    events, else the stored snapshot of this URL (``api_fallback``)."""
    snap = await current_session(request)
    if snap.workers is None:
        return await api_fallback(request)
    limit = query_int(request, "limit", 100, lo=0, hi=MAX_LIMIT)
    detail = query_bool(request, "detail", False)
    q = request.query
    try:
        filters = parse_filters(
            q.getall("filter_keys", []),
            q.getall("filter_predicates", []),
            q.getall("filter_values", []),
            columns=worker_model.FILTER_COLUMNS,
        )
    except FilterError as exc:
        raise ApiError(400, str(exc)) from None
    selected = [
        w for w in snap.workers if all(worker_model.matches(w, c, p, v) for c, p, v in filters)
    ]
    shown = [
        w if detail else {c: w[c] for c in worker_model.BRIEF_COLUMNS} for w in selected[:limit]
    ]
    return json_response(list_envelope(shown, total=len(snap.workers), num_filtered=len(selected)))


def add_routes(app: web.Application) -> None:
    """Add this module's routes to ``app``; the fallback last, so it must be called after
    every other module that adds ``/api/`` routes."""
    r = app.router
    r.add_get("/api/v0/tasks/timeline", timeline)
    r.add_get("/events", events)
    r.add_get("/api/cluster_status", cluster_status)
    r.add_get("/api/v0/runtime_env_redaction", runtime_env_redaction)
    r.add_get("/api/v0/platform_events", platform_events)
    r.add_get("/api/v0/workers", workers)
    r.add_get("/api/grafana_health", grafana_health)
    r.add_get("/api/prometheus_health", prometheus_health)
    r.add_get("/api/{subpath:.*}", api_fallback)
