"""This pod's Ray node ID (KubeRay ``FetchCurrentNodeID`` / ``GetNodeRayIDWithFQIP``).

``GET /api/v0/nodes?limit=10000`` on the head's dashboard; the entry whose ``node_ip`` is
``POD_IP`` and whose ``state`` is ``ALIVE``; its ID normalised to lowercase hex. A raylet
restart hands out a new ID, so both collectors ask again every few seconds.
"""

from __future__ import annotations

import asyncio

import orjson
import structlog

from kuberay.historyserver.collector.auth import AuthConfigError, AuthRejected
from kuberay.historyserver.collector.dashboard import DashboardClient, DashboardError
from kuberay.historyserver.ids import InvalidID, to_hex

log = structlog.get_logger("historyserver.collector.nodeid")

NODES_PATH = "/api/v0/nodes?limit=10000"


class NodeNotFound(Exception):
    """The dashboard answered, but lists no ALIVE node with this pod's IP (yet)."""


async def fetch_node_id(client: DashboardClient, pod_ip: str, *, timeout: float = 1.0) -> str:
    """One lookup; the hex node ID. Raises ``NodeNotFound``, ``DashboardError``,
    ``AuthRejected`` or ``AuthConfigError``."""
    body = await client.get(NODES_PATH, timeout=timeout)
    try:
        rows = orjson.loads(body)["data"]["result"]["result"]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise DashboardError(f"unexpected {NODES_PATH} answer: {exc}") from exc
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        node_id = row.get("node_id")
        if row.get("node_ip") == pod_ip and row.get("state") == "ALIVE" and node_id:
            try:
                return to_hex(str(node_id))
            except InvalidID as exc:
                raise DashboardError(str(exc)) from exc
    raise NodeNotFound(f"no ALIVE Ray node found for Pod IP {pod_ip}")


async def discover_node_id(
    client: DashboardClient, pod_ip: str, *, attempts: int = 12, interval: float = 5.0
) -> str:
    """``fetch_node_id`` retried ``attempts`` times ``interval`` apart (KubeRay: 12 x 5 s);
    auth errors end it at once. Raises the last error when every attempt failed."""
    last: Exception | None = None
    for attempt in range(1, attempts + 1):
        try:
            return await fetch_node_id(client, pod_ip)
        except (AuthRejected, AuthConfigError):
            raise
        except (NodeNotFound, DashboardError) as exc:
            last = exc
            log.warning("node id not found yet", attempt=attempt, attempts=attempts, error=str(exc))
        if attempt < attempts:
            await asyncio.sleep(interval)
    assert last is not None
    raise last
