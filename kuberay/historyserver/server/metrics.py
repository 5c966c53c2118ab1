"""The history server's Prometheus metrics, in their own registry, served at ``GET /metrics``
(KubeRay's history server has none; names follow the operator's ``kuberay_`` prefix).

* ``kuberay_history_server_event_files_skipped_total{reason}``: event files a session load
  left out; ``reason="too_large"``: stored or decompressed size over
  ``event_files.EVENT_FILE_MAX_BYTES``.
"""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

#: every history-server metric, and nothing else of the process
REGISTRY = CollectorRegistry(auto_describe=True)

EVENT_FILES_SKIPPED = Counter(
    "kuberay_history_server_event_files_skipped",
    "Event files left out of a session load, by reason (too_large: over the size cap).",
    ["reason"],
    registry=REGISTRY,
)
#: the ``reason`` of a file over ``EVENT_FILE_MAX_BYTES`` (stored or decompressed)
TOO_LARGE = "too_large"


async def metrics(_request: web.Request) -> web.Response:
    """``GET /metrics``: the registry in Prometheus' text format."""
    response = web.Response(body=generate_latest(REGISTRY))
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response


def add_routes(app: web.Application) -> None:
    """Add ``GET /metrics`` to ``app``."""
    app.router.add_get("/metrics", metrics)
