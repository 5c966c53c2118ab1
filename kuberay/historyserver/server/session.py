"""One stored session, decoded once into the entities the routes serve.

``load_session`` reads every event file of the session (``event_files``), hands each event
to the builder of its kind, and reads the collector's dashboard snapshots
(``fetched_endpoints/``). The result, ``SessionSnapshot``, is immutable by convention: the
routes only read it, so one snapshot is shared by every request (see ``cache``).
"""

from __future__ import annotations

from typing import Any

import attrs
import orjson
import structlog

from kuberay.historyserver.layout import (
    CLUSTER_METADATA_ENDPOINT,
    JOBS_ENDPOINT,
    PLACEMENT_GROUPS_ENDPOINT,
    SERVE_APPLICATIONS_ENDPOINT,
    TIMEZONE_ENDPOINT,
    Layout,
)
from kuberay.historyserver.server.actors import ActorBuilder
from kuberay.historyserver.server.event_files import (
    DecodeStats,
    EventFile,
    find_event_files,
    read_session_events,
    session_nodes,
)
from kuberay.historyserver.server.jobs import JobBuilder
from kuberay.historyserver.server.legacy_events import read_log_events
from kuberay.historyserver.server.memory import gc_paused, release_free_memory
from kuberay.historyserver.server.nodes import NodeBuilder
from kuberay.historyserver.server.placement_groups import PlacementGroupBuilder, from_snapshot
from kuberay.historyserver.server.platform_events import PlatformEventBuilder
from kuberay.historyserver.server.task_table import TaskTable
from kuberay.historyserver.server.tasks import TaskBuilder
from kuberay.historyserver.server.workers import WorkerBuilder
from kuberay.historyserver.storage.base import ObjectStore, list_all
from kuberay.historyserver.storage.errors import NotFound

log = structlog.get_logger("historyserver.server.session")


class SessionNotFound(LookupError):
    """Nothing is stored for the session (no marker and no files)."""


@attrs.frozen
class SessionKey:
    """Which session: the cluster's layout and the session's name."""

    layout: Layout
    session: str

    def describe(self) -> str:
        """``<kind>/<ns>/[<owner>/]<cluster>/<session>`` for messages and logs."""
        c = self.layout.cluster
        parts = [c.kind_dir, c.namespace, c.owner_name, c.name, self.session]
        return "/".join(p for p in parts if p)


@attrs.frozen
class SessionSnapshot:
    """A decoded session. ``tasks`` are ``TaskState`` dicts (detail) sorted by ID and
    attempt, kept encoded (``TaskTable``); ``actors`` dashboard actor dicts by ID; ``jobs``
    ``JobDetails``; ``nodes`` ``NodeState`` dicts (detail) plus hostname;
    ``placement_groups`` ``PlacementGroupState`` (detail); ``endpoints`` the parsed bodies of
    the snapshots found (by endpoint path);
    ``storage_nodes`` the node directories in storage (for logs); ``log_events`` Ray's
    legacy events (``logs/events/event_*.log``) by job ID; ``workers`` ``WorkerState``
    dicts from WORKER_* events and ``platform_events`` the PLATFORM_EVENT RayEvents (each
    ``None`` when the session has no such event); ``approx_bytes`` the size of it all as
    JSON, what the cache budgets; ``fingerprint`` the stored objects it was decoded from
    (``freshness``)."""

    key: SessionKey
    tasks: TaskTable
    actors: dict[str, dict[str, Any]]
    jobs: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    placement_groups: list[dict[str, Any]]
    endpoints: dict[str, Any]
    storage_nodes: tuple[str, ...]
    stats: DecodeStats
    log_events: dict[str, list[dict[str, Any]]] = attrs.field(factory=dict)
    workers: list[dict[str, Any]] | None = None
    platform_events: list[dict[str, Any]] | None = None
    fingerprint: int = 0
    approx_bytes: int = 0

    def node_ips(self) -> dict[str, str]:
        """Node ID -> IP for every node seen in events."""
        return {n["node_id"]: n["node_ip"] for n in self.nodes}


def fingerprint(files: list[EventFile], endpoint_objects: list[tuple[str, int]]) -> int:
    """A hash of the event files' and snapshots' keys and sizes (``freshness`` compares it)."""
    return hash((tuple((f.key, f.size) for f in files), tuple(sorted(endpoint_objects))))


async def endpoint_objects(store: ObjectStore, key: SessionKey) -> list[tuple[str, int]]:
    """``(key, size)`` of every stored dashboard snapshot of the session."""
    prefix = key.layout.session_prefix(key.session) + "/fetched_endpoints/"
    listing = await list_all(store, prefix, delimiter=None)
    return [(o.key, o.size) for o in listing.objects]


async def read_endpoint(store: ObjectStore, key: SessionKey, endpoint: str) -> Any | None:
    """The parsed JSON body the collector stored for ``endpoint``; ``None`` when there is
    none or it is not JSON."""
    try:
        body = await store.get(key.layout.endpoint_key(key.session, endpoint))
    except NotFound:
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        log.warning("stored endpoint body is not JSON", endpoint=endpoint)
        return None


async def session_exists(store: ObjectStore, key: SessionKey) -> bool:
    """Whether the session's marker exists or anything is stored under its prefix."""
    if await store.exists(key.layout.session_marker_key(key.session)):
        return True
    page = await store.list(key.layout.session_prefix(key.session) + "/", limit=1)
    return bool(page.objects or page.prefixes)


async def load_session(store: ObjectStore, key: SessionKey) -> SessionSnapshot:
    """Decode the session; ``SessionNotFound`` when nothing is stored for it."""
    with gc_paused():
        snapshot = await _load_session(store, key)
    release_free_memory()
    return snapshot


async def _load_session(store: ObjectStore, key: SessionKey) -> SessionSnapshot:
    if not await session_exists(store, key):
        raise SessionNotFound(key.describe())
    stats = DecodeStats()
    files = await find_event_files(store, key.layout, key.session)
    stored_endpoints = await endpoint_objects(store, key)
    events = await read_session_events(store, files, stats)
    tasks, actors, jobs, nodes, pgs = (
        TaskBuilder(),
        ActorBuilder(),
        JobBuilder(),
        NodeBuilder(),
        PlacementGroupBuilder(),
    )
    workers, platform = WorkerBuilder(), PlatformEventBuilder()
    builders = (tasks, actors, jobs, nodes, pgs, workers, platform)
    for event in events:
        for builder in builders:
            if builder.add(event):
                break
    del events
    endpoints: dict[str, Any] = {}
    for endpoint in (
        JOBS_ENDPOINT,
        PLACEMENT_GROUPS_ENDPOINT,
        CLUSTER_METADATA_ENDPOINT,
        TIMEZONE_ENDPOINT,
        SERVE_APPLICATIONS_ENDPOINT,
    ):
        body = await read_endpoint(store, key, endpoint)
        if body is not None:
            endpoints[endpoint] = body
    node_list = nodes.build()
    ips = {n["node_id"]: n["node_ip"] for n in node_list}
    job_snapshot = endpoints.get(JOBS_ENDPOINT)
    job_list = jobs.build(
        [j for j in job_snapshot if isinstance(j, dict)]
        if isinstance(job_snapshot, list)
        else None,
        ips,
    )
    stored_groups = from_snapshot(endpoints.get(PLACEMENT_GROUPS_ENDPOINT))
    groups = pgs.build() if pgs else stored_groups or []
    storage_nodes = tuple(await session_nodes(store, key.layout, key.session))
    log_events = await read_log_events(store, key.layout, key.session, storage_nodes)
    snapshot = SessionSnapshot(
        key=key,
        tasks=tasks.build(),
        actors=actors.build(ips),
        jobs=job_list,
        nodes=node_list,
        placement_groups=groups,
        endpoints=endpoints,
        storage_nodes=storage_nodes,
        stats=stats,
        log_events=log_events,
        workers=workers.build(ips),
        platform_events=platform.build(),
        fingerprint=fingerprint(files, stored_endpoints),
    )
    size = snapshot.tasks.nbytes + len(
        orjson.dumps(
            [
                snapshot.actors,
                snapshot.jobs,
                snapshot.nodes,
                groups,
                endpoints,
                log_events,
                snapshot.workers,
                snapshot.platform_events,
            ]
        )
    )
    log.info(
        "session loaded",
        session=key.describe(),
        files=stats.files,
        events=stats.events,
        skipped=stats.skipped,
        tasks=len(snapshot.tasks),
        approx_bytes=size,
    )
    return attrs.evolve(snapshot, approx_bytes=size)
