"""Routes answering from the decoded session: jobs, tasks, actors, nodes, placement groups,
and the stored dashboard snapshots (cluster metadata, timezone, Serve).

Shapes are the dashboard's: ``/api/jobs/`` a bare ``JobDetails`` list; ``/api/v0/*`` the
state API's ``ListApiResponse`` in the ``rest_response`` envelope; ``/logical/actors`` and
``/nodes`` the camelCase envelope. Unknown job, actor or node IDs are 404s with a message.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kuberay.historyserver.layout import (
    CLUSTER_METADATA_ENDPOINT,
    JOBS_ENDPOINT,
    SERVE_APPLICATIONS_ENDPOINT,
    TIMEZONE_ENDPOINT,
)
from kuberay.historyserver.server import tasks as task_query
from kuberay.historyserver.server.context import (
    ApiError,
    current_session,
    encode_json,
    envelope,
    json_response,
    list_envelope,
    query_bool,
    query_int,
    splice_list,
    state_of,
)
from kuberay.historyserver.server.jobs import find_job
from kuberay.historyserver.server.lineage import summarize_by_lineage
from kuberay.historyserver.server.nodes import logical_resources, node_state, node_summary
from kuberay.historyserver.server.placement_groups import BRIEF_COLUMNS as PG_BRIEF
from kuberay.historyserver.server.task_table import INDEX_COLUMNS

MAX_LIMIT = 10000
EMPTY_SERVE: dict[str, Any] = {
    "controller_info": {},
    "proxy_location": None,
    "http_options": None,
    "grpc_options": None,
    "proxies": {},
    "deploy_mode": "MULTI_APP",
    "applications": {},
    "target_capacity": None,
}


async def jobs(request: web.Request) -> web.Response:
    """``GET /api/jobs/``: every job."""
    snap = await current_session(request)
    return json_response(snap.jobs)


async def job(request: web.Request) -> web.Response:
    """``GET /api/jobs/{job_or_submission_id}``; 404 for an unknown ID."""
    snap = await current_session(request)
    wanted = request.match_info["job_id"]
    found = find_job(snap.jobs, wanted)
    if found is None:
        raise ApiError(404, f"Job {wanted} does not exist")
    return json_response(found)


def _filters(request: web.Request) -> list[tuple[str, str, str]]:
    q = request.query
    try:
        return task_query.parse_filters(
            q.getall("filter_keys", []),
            q.getall("filter_predicates", []),
            q.getall("filter_values", []),
        )
    except task_query.FilterError as exc:
        raise ApiError(400, str(exc)) from None


async def tasks(request: web.Request) -> web.Response:
    """``GET /api/v0/tasks``: ``limit`` (100, at most 10000), ``detail``, ``exclude_driver``
    (true), ``filter_keys``/``filter_predicates``/``filter_values``; by task ID, attempt.
    The detail answer splices the tasks' stored encodings; only answers that had to decode
    tasks (a filter on a column the table does not index) are kept for reuse."""
    snap = await current_session(request)
    answers = state_of(request).answers
    cache_key = (snap.key, snap.fingerprint, request.path_qs)
    body = answers.get(cache_key)
    if body is None:
        limit = query_int(request, "limit", 100, lo=0, hi=MAX_LIMIT)
        detail = query_bool(request, "detail", False)
        filters = _filters(request)
        table = snap.tasks
        selected = task_query.select(
            table, filters, exclude_driver=query_bool(request, "exclude_driver", True)
        )
        shown = selected[:limit]
        items = table.rows_json(shown) if detail else [encode_json([table.brief(i) for i in shown])]
        body = splice_list(list_envelope([], total=len(table), num_filtered=len(selected)), items)
        if any(c not in INDEX_COLUMNS for c, _, _ in filters):
            answers.put(cache_key, body)
    return web.Response(body=body, content_type="application/json")


async def tasks_summarize(request: web.Request) -> web.Response:
    """``GET /api/v0/tasks/summarize``: ``summary_by=func_name`` (default; ``task_name`` is
    the same, as in Ray) counts per ``func_or_class_name`` and state; ``summary_by=lineage``
    the tree of who started whom (``lineage``)."""
    snap = await current_session(request)
    summary_by = request.query.get("summary_by", "func_name")
    if summary_by not in ("func_name", "task_name", "lineage"):
        raise ApiError(400, 'summary_by must be one of "func_name", "task_name", or "lineage".')
    table = snap.tasks
    positions = task_query.select(table, _filters(request), exclude_driver=True)
    if summary_by == "lineage":
        summary = summarize_by_lineage([table[i] for i in positions], snap.actors)
    else:
        summary = task_query.summarize_by_func_name([table.brief(i) for i in positions])
    return json_response(
        envelope(
            {
                "result": {
                    "total": len(positions),
                    "num_after_truncation": len(positions),
                    "num_filtered": len(positions),
                    "result": {"node_id_to_summary": {"cluster": summary}},
                    "partial_failure_warning": "",
                    "warnings": None,
                }
            }
        )
    )


async def actors(request: web.Request) -> web.Response:
    """``GET /logical/actors``: every actor by ID."""
    snap = await current_session(request)
    return json_response(envelope({"actors": snap.actors}))


async def actor(request: web.Request) -> web.Response:
    """``GET /logical/actors/{actor_id}``; 404 for an unknown ID."""
    snap = await current_session(request)
    actor_id = request.match_info["actor_id"].strip("/").lower()
    found = snap.actors.get(actor_id)
    if found is None:
        raise ApiError(404, f"Actor {actor_id} does not exist")
    return json_response(envelope({"detail": found}))


async def nodes_view(request: web.Request) -> web.Response:
    """``GET /nodes?view=summary|hostNameList``."""
    snap = await current_session(request)
    view = request.query.get("view", "summary")
    if view == "summary":
        return json_response(
            envelope(
                {
                    "summary": [node_summary(n) for n in snap.nodes],
                    "nodeLogicalResources": {
                        n["node_id"]: logical_resources(n) for n in snap.nodes
                    },
                }
            )
        )
    if view.lower() == "hostnamelist":
        names = sorted({n["hostname"] or n["node_name"] for n in snap.nodes})
        return json_response(envelope({"hostNameList": names}))
    raise ApiError(400, f"unknown view {view!r}: use summary or hostNameList")


async def node_detail(request: web.Request) -> web.Response:
    """``GET /nodes/{node_id}``; 404 for an unknown node."""
    snap = await current_session(request)
    node_id = request.match_info["node_id"].lower()
    for n in snap.nodes:
        if n["node_id"] == node_id:
            return json_response(envelope({"detail": node_summary(n)}))
    raise ApiError(404, f"Node {node_id} does not exist")


async def state_nodes(request: web.Request) -> web.Response:
    """``GET /api/v0/nodes``: ``limit``, ``detail``."""
    snap = await current_session(request)
    limit = query_int(request, "limit", 100, lo=0, hi=MAX_LIMIT)
    detail = query_bool(request, "detail", False)
    shown = [node_state(n, detail=detail) for n in snap.nodes[:limit]]
    return json_response(list_envelope(shown, total=len(snap.nodes), num_filtered=len(snap.nodes)))


async def placement_groups(request: web.Request) -> web.Response:
    """``GET /api/v0/placement_groups``: ``limit``, ``detail``."""
    snap = await current_session(request)
    limit = query_int(request, "limit", 100, lo=0, hi=MAX_LIMIT)
    detail = query_bool(request, "detail", False)
    groups = snap.placement_groups
    shown: list[dict[str, Any]] = [
        pg if detail else {c: pg.get(c) for c in PG_BRIEF} for pg in groups[:limit]
    ]
    return json_response(list_envelope(shown, total=len(groups), num_filtered=len(groups)))


async def cluster_metadata(request: web.Request) -> web.Response:
    """``GET /api/v0/cluster_metadata``: the stored answer; 404 when none was stored."""
    snap = await current_session(request)
    body = snap.endpoints.get(CLUSTER_METADATA_ENDPOINT)
    if body is None:
        raise ApiError(404, "no cluster metadata was stored for this session")
    return json_response(body)


async def timezone(request: web.Request) -> web.Response:
    """``GET /timezone``: the stored answer, else ``{"offset": "", "value": ""}``."""
    snap = await current_session(request)
    return json_response(snap.endpoints.get(TIMEZONE_ENDPOINT) or {"offset": "", "value": ""})


async def serve_applications(request: web.Request) -> web.Response:
    """``GET /api/serve/applications/``: the stored answer, else an empty valid one."""
    snap = await current_session(request)
    body = snap.endpoints.get(SERVE_APPLICATIONS_ENDPOINT)
    return json_response(body if isinstance(body, dict) else EMPTY_SERVE)


def add_routes(app: web.Application) -> None:
    """Add this module's routes to ``app``."""
    r = app.router
    r.add_get(JOBS_ENDPOINT, jobs)
    r.add_get("/api/jobs", jobs)
    r.add_get("/api/jobs/{job_id}", job)
    r.add_get("/api/v0/tasks", tasks)
    r.add_get("/api/v0/tasks/summarize", tasks_summarize)
    r.add_get("/logical/actors", actors)
    r.add_get("/logical/actors/", actors)
    r.add_get("/logical/actors/{actor_id}", actor)
    r.add_get("/nodes", nodes_view)
    r.add_get("/nodes/{node_id}", node_detail)
    r.add_get("/api/v0/nodes", state_nodes)
    r.add_get("/api/v0/placement_groups", placement_groups)
    r.add_get(CLUSTER_METADATA_ENDPOINT, cluster_metadata)
    r.add_get(TIMEZONE_ENDPOINT, timezone)
    r.add_get(SERVE_APPLICATIONS_ENDPOINT, serve_applications)
    r.add_get("/api/serve/applications", serve_applications)
