"""The storage layout: KubeRay's key scheme, byte for byte, for the collector and the server;
and the rest of what the two programs share on the wire (the dashboard endpoints snapshotted,
the auth header, the camelCase names of stored events), defined here once so the server
imports nothing of the collector.

::

    <root>/cluster-metadata/raycluster/<ns>_<cluster>/<session>                  empty marker
    <root>/cluster-metadata/{rayjob|rayservice}/<ns>_<owner>_<cluster>/<session>  empty marker
    <root>/cluster-history/raycluster/<ns>/<cluster>/<session>/...
    <root>/cluster-history/{rayjob|rayservice}/<ns>/<owner>/<cluster>/<session>/
        <node>/logs/<relative path>
        <node>/node_events/<node>-<YYYY-MM-DD-HH>-<unixNano>.jsonl[.gz]
        <node>/job_events/<jobHex>/<node>-<YYYY-MM-DD-HH>-<unixNano>.jsonl[.gz]
        fetched_endpoints/restful__<path with / as __>[?query]

(KubeRay ``pkg/storage/clusterlogs``, ``pkg/storage/clustermetadata``, ``utils.Connector``,
``EndpointPathToStorageKey`` and the event collector's ``buildEventStorageKey``.)

Every name that becomes one key segment (session, node, job, cluster, namespace, owner) is
checked by :func:`check_segment`; a log file's relative path by :func:`check_relative_path`.
Anything that would leave its place in the layout (``..``, ``.``, ``/`` inside a segment, an
empty segment, control characters) raises ``LayoutError``, so no caller can build a key in
another cluster's or session's tree. Keys never start or end with ``/``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import attrs

CLUSTER_METADATA_DIR = "cluster-metadata"
CLUSTER_HISTORY_DIR = "cluster-history"
LOGS_DIR = "logs"
NODE_EVENTS_DIR = "node_events"
JOB_EVENTS_DIR = "job_events"
FETCHED_ENDPOINTS_DIR = "fetched_endpoints"
ENDPOINT_KEY_PREFIX = "restful__"
CONNECTOR = "_"

RAYCLUSTER_KIND = "raycluster"
RAYJOB_KIND = "rayjob"
RAYSERVICE_KIND = "rayservice"
OWNER_KINDS = (RAYJOB_KIND, RAYSERVICE_KIND)

#: The history server's images ship without ``kuberay.api`` (only the top level,
#: ``historyserver`` and ``gocompat``): the operator's names it needs are defined here once for
#: both its programs (``kuberay.api.v1.constants`` holds the same values for the operator).
#: The header carrying a Ray auth token to the dashboard (``Bearer <token>``).
RAY_AUTH_HEADER = "x-ray-authorization"
#: The API version of the Ray custom resources read for live clusters.
RAY_API_VERSION = "ray.io/v1"
#: Labels KubeRay puts on a RayJob's or RayService's cluster naming its owner.
RAY_ORIGINATED_FROM_CRD_LABEL_KEY = "ray.io/originated-from-crd"
RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY = "ray.io/originated-from-cr-name"
#: Ray's own node label (in Ray's node table, not on a Pod): the node's group, ``headgroup``
#: for the head (KubeRay ``cluster_status.go``).
RAY_NODE_GROUP_NODE_LABEL_KEY = "ray.io/node-group"
HEAD_NODE_GROUP = "headgroup"

#: Ray dashboard endpoints the collector stores under ``fetched_endpoints/`` and the server
#: answers from (KubeRay's collector ``fetchOnce``/poll lists and server routes): once per
#: session ...
CLUSTER_METADATA_ENDPOINT = "/api/v0/cluster_metadata"
TIMEZONE_ENDPOINT = "/timezone"
#: ... polled while it runs ...
SERVE_APPLICATIONS_ENDPOINT = "/api/serve/applications/"
PLACEMENT_GROUPS_ENDPOINT = "/api/v0/placement_groups?detail=1&limit=10000"
JOBS_ENDPOINT = "/api/jobs/"
#: ... and per job, ``<prefix><job id>``.
DATASETS_ENDPOINT_PREFIX = "/api/data/datasets/"

#: protobuf map fields reachable from ``RayEvent`` (Ray 2.60): their keys are data, kept as
#: they are by :func:`to_camel`.
MAP_FIELDS = frozenset(
    {
        "custom_fields",
        "custom_resources",
        "label_selector",
        "labels",
        "metadata",
        "ref_ids",
        "required_resources",
        "resources",
        "unit_resources",
    }
)

EVENT_FILE_SUFFIX = ".jsonl"
GZIP_SUFFIX = ".gz"

#: What KubeRay's history server accepts as an event file name (``eventserver.go``).
EVENT_FILE_RE = re.compile(r"-\d{4}-\d{2}-\d{2}-\d{2}(-\d+)?(\.jsonl)?(\.gz)?$")
#: How both programs read a session's creation time (``utils.SESSION_ID_REGEX``).
SESSION_TIME_RE = re.compile(r"session_(\d{4}-\d{2}-\d{2})_(\d{2}-\d{2}-\d{2})_(\d{6})")

_SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9._-]+$")
_OUR_EVENT_FILE = re.compile(
    r"^(?P<node>[A-Za-z0-9._-]+?)-(?P<hour>\d{4}-\d{2}-\d{2}-\d{2})-(?P<ns>\d+)"
    r"(?P<ext>\.jsonl(?:\.gz)?)$"
)


class LayoutError(ValueError):
    """A name or path that does not fit the layout (it would escape its place)."""


def camel(name: str) -> str:
    """protobuf's JSON name of a field: each ``_x`` becomes ``X`` (``task_id`` -> ``taskId``,
    the rest of the word untouched)."""
    if "_" not in name:
        return name
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def ray_camel(name: str) -> str:
    """Ray's ``to_camel_case`` of a dashboard answer's key: each later word ``str.title``-d
    (``job_id`` -> ``jobId``; unlike :func:`camel`, ``gpu_2x`` -> ``gpu2X``)."""
    first, *rest = name.split("_")
    return first + "".join(p.title() for p in rest)


def _camel_value(value: Any) -> Any:
    if isinstance(value, dict):
        return _camel_message(value)
    if isinstance(value, list):
        return [_camel_value(v) for v in value]
    return value


def _camel_message(msg: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in msg.items():
        if key in MAP_FIELDS and isinstance(value, dict):
            out[camel(key)] = {
                k: _camel_value(v) if isinstance(v, dict | list) else v for k, v in value.items()
            }
        else:
            out[camel(key)] = _camel_value(value)
    return out


def to_camel(event: dict[str, Any]) -> dict[str, Any]:
    """A Ray event with protobuf's camelCase field names (a snake_case one, as Ray sends with
    ``RAY_DASHBOARD_AGGREGATOR_AGENT_PRESERVE_PROTO_FIELD_NAME=true``, renamed recursively; map
    fields keep their keys); camelCase input is returned as it is."""
    if not any("_" in key for key in event):
        return event
    return _camel_message(event)


def check_segment(value: str, what: str) -> str:
    """``value`` if it is safe as one key segment: ``^[A-Za-z0-9._-]+$`` and not ``.``/``..``
    (KubeRay's ``isSafePathComponent``); raises ``LayoutError`` otherwise."""
    if not isinstance(value, str) or value in (".", "..") or not _SAFE_SEGMENT.fullmatch(value):
        raise LayoutError(
            f"invalid {what} {value!r}: must match [A-Za-z0-9._-]+ and not be . or .."
        )
    return value


def is_safe_segment(value: object) -> bool:
    """Whether :func:`check_segment` accepts ``value``."""
    return (
        isinstance(value, str) and value not in (".", "..") and bool(_SAFE_SEGMENT.fullmatch(value))
    )


def check_relative_path(rel: str) -> str:
    """A log file's path relative to ``logs/``, ``/``-separated, checked: no empty, ``.`` or
    ``..`` segment, no leading ``/``, no backslash or control character. Returns it."""
    if not rel or rel.startswith("/") or "\\" in rel or any(ord(ch) < 0x20 for ch in rel):
        raise LayoutError(f"invalid relative path {rel!r}")
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            raise LayoutError(f"invalid relative path {rel!r}: segment {part!r}")
    return rel


def normalize_root(root: str) -> str:
    """``STORAGE_ROOT_DIR`` as a key prefix: surrounding and repeated ``/`` dropped (as Go's
    ``path.Join`` does); ``.``/``..`` segments are refused rather than resolved."""
    parts = [p for p in (root or "").split("/") if p]
    for part in parts:
        if part in (".", "..") or "\\" in part or any(ord(ch) < 0x20 for ch in part):
            raise LayoutError(f"invalid storage root dir {root!r}")
    return "/".join(parts)


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


def endpoint_storage_key(endpoint: str) -> str:
    """KubeRay's ``EndpointPathToStorageKey``: ``"restful__"`` + the path without surrounding
    ``/`` and with every ``/`` as ``__``; the query string is kept as it is."""
    return ENDPOINT_KEY_PREFIX + endpoint.strip("/").replace("/", "__")


def event_hour(created_ns: int) -> str:
    """``YYYY-MM-DD-HH`` of a file's creation time (UTC, the collector container's zone)."""
    return datetime.fromtimestamp(created_ns // 1_000_000_000, tz=UTC).strftime("%Y-%m-%d-%H")


def event_file_name(node_id: str, created_ns: int, *, compressed: bool) -> str:
    """``<node>-<YYYY-MM-DD-HH>-<unixNano>.jsonl[.gz]``, the uploaded name of an event file."""
    check_segment(node_id, "node id")
    ext = EVENT_FILE_SUFFIX + (GZIP_SUFFIX if compressed else "")
    return f"{node_id}-{event_hour(created_ns)}-{created_ns}{ext}"


@attrs.frozen
class EventFileName:
    """A parsed event file name as :func:`event_file_name` writes it."""

    node_id: str
    hour: str
    created_ns: int
    compressed: bool


def parse_event_file_name(name: str) -> EventFileName | None:
    """The parts of a name :func:`event_file_name` wrote, or ``None`` for any other name."""
    m = _OUR_EVENT_FILE.fullmatch(name)
    if m is None:
        return None
    return EventFileName(
        node_id=m["node"], hour=m["hour"], created_ns=int(m["ns"]), compressed=m["ext"] != ".jsonl"
    )


def is_event_file(name: str) -> bool:
    """Whether KubeRay's history server would read ``name`` as an event file."""
    return EVENT_FILE_RE.search(name) is not None


def session_created_at(session: str) -> datetime | None:
    """A session's creation time from its name (``session_YYYY-MM-DD_HH-MM-SS_micro``), as
    naive UTC-less wall time the way KubeRay parses it; ``None`` when the name has none."""
    m = SESSION_TIME_RE.search(session)
    if m is None:
        return None
    try:
        return datetime.strptime(f"{m[1]}_{m[2]}.{m[3]}", "%Y-%m-%d_%H-%M-%S.%f")
    except ValueError:
        return None


@attrs.frozen
class ClusterRef:
    """Which cluster a tree belongs to. ``owner_kind`` is ``""``, ``rayjob`` or ``rayservice``
    (lowercased); set both owner fields or neither. Every name is a safe segment."""

    namespace: str
    name: str
    owner_kind: str = ""
    owner_name: str = ""

    def __attrs_post_init__(self) -> None:
        check_segment(self.namespace, "namespace")
        check_segment(self.name, "cluster name")
        if bool(self.owner_kind) != bool(self.owner_name):
            raise LayoutError("owner kind and owner name must be set together, or neither")
        if self.owner_kind:
            if self.owner_kind not in OWNER_KINDS:
                raise LayoutError(
                    f"unsupported owner kind {self.owner_kind!r}: use rayjob or rayservice"
                )
            check_segment(self.owner_name, "owner name")
        for value in (self.namespace, self.owner_name, self.name):
            if CONNECTOR in value:
                raise LayoutError(f"{value!r} contains {CONNECTOR!r}, which the markers split on")

    @classmethod
    def make(
        cls, namespace: str, name: str, owner_kind: str = "", owner_name: str = ""
    ) -> ClusterRef:
        """A ref from user input: owner kind trimmed and lowercased, names trimmed."""
        return cls(
            namespace=namespace.strip(),
            name=name.strip(),
            owner_kind=owner_kind.strip().lower(),
            owner_name=owner_name.strip(),
        )

    @property
    def kind_dir(self) -> str:
        """``raycluster``, ``rayjob`` or ``rayservice``."""
        return self.owner_kind or RAYCLUSTER_KIND


@attrs.frozen
class Layout:
    """Keys for one cluster under one storage root (``STORAGE_ROOT_DIR``)."""

    cluster: ClusterRef
    root: str = attrs.field(default="", converter=normalize_root)

    # ----- cluster-metadata markers -----------------------------------------------------
    def metadata_prefix(self) -> str:
        """``<root>/cluster-metadata/`` (with the trailing ``/``, as KubeRay lists it)."""
        return _join(self.root, CLUSTER_METADATA_DIR) + "/"

    def session_marker_key(self, session: str) -> str:
        """The empty object that announces ``session`` to the server."""
        check_segment(session, "session name")
        c = self.cluster
        names = [c.namespace, c.owner_name, c.name] if c.owner_kind else [c.namespace, c.name]
        return _join(self.root, CLUSTER_METADATA_DIR, c.kind_dir, CONNECTOR.join(names), session)

    # ----- cluster-history tree ---------------------------------------------------------
    def cluster_prefix(self) -> str:
        """``<root>/cluster-history/<kind>/<ns>/[<owner>/]<cluster>`` (no trailing ``/``)."""
        c = self.cluster
        return _join(self.root, CLUSTER_HISTORY_DIR, c.kind_dir, c.namespace, c.owner_name, c.name)

    def session_prefix(self, session: str) -> str:
        """``<cluster prefix>/<session>``."""
        return _join(self.cluster_prefix(), check_segment(session, "session name"))

    def node_prefix(self, session: str, node_id: str) -> str:
        """``<session prefix>/<node>``."""
        return _join(self.session_prefix(session), check_segment(node_id, "node id"))

    def log_key(self, session: str, node_id: str, rel_path: str) -> str:
        """``<node prefix>/logs/<rel_path>`` (sub-directories kept)."""
        return _join(self.node_prefix(session, node_id), LOGS_DIR, check_relative_path(rel_path))

    def node_events_key(self, session: str, node_id: str, file_name: str) -> str:
        """``<node prefix>/node_events/<file_name>``."""
        check_segment(file_name, "event file name")
        return _join(self.node_prefix(session, node_id), NODE_EVENTS_DIR, file_name)

    def job_events_key(self, session: str, node_id: str, job_id: str, file_name: str) -> str:
        """``<node prefix>/job_events/<job hex>/<file_name>``."""
        check_segment(file_name, "event file name")
        check_segment(job_id, "job id")
        return _join(self.node_prefix(session, node_id), JOB_EVENTS_DIR, job_id, file_name)

    def endpoint_key(self, session: str, endpoint: str) -> str:
        """``<session prefix>/fetched_endpoints/restful__...`` for a dashboard path (query
        kept)."""
        name = endpoint_storage_key(endpoint)
        if name == ENDPOINT_KEY_PREFIX or ".." in name.split("__") or "\\" in name:
            raise LayoutError(f"invalid endpoint {endpoint!r}")
        return _join(self.session_prefix(session), FETCHED_ENDPOINTS_DIR, name)


def parse_session_marker(key: str, root: str = "") -> tuple[ClusterRef, str] | None:
    """The cluster and session of a marker key (KubeRay ``clustermetadata.DecodePath``), or
    ``None`` for a key that is not a well-formed marker under ``root``."""
    prefix = _join(normalize_root(root), CLUSTER_METADATA_DIR) + "/"
    key = key.strip("/")
    if not key.startswith(prefix):
        return None
    parts = key[len(prefix) :].split("/")
    if len(parts) != 3:
        return None
    kind, names, session = parts[0].lower(), parts[1].split(CONNECTOR), parts[2]
    try:
        if kind == RAYCLUSTER_KIND and len(names) == 2:
            ref = ClusterRef(namespace=names[0], name=names[1])
        elif kind in OWNER_KINDS and len(names) == 3:
            ref = ClusterRef(names[0], names[2], owner_kind=kind, owner_name=names[1])
        else:
            return None
        check_segment(session, "session name")
    except LayoutError:
        return None
    return ref, session
