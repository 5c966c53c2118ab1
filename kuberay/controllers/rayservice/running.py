"""The Serve config a cluster runs, rebuilt from its Serve status (beyond KubeRay).

A ``target_capacity`` change is a whole Serve config sent again with the new value. KubeRay
sends the config it remembers sending the cluster, and when it remembers none (operator
restart or failover, a RayService evicted from the 1,000-entry cache, or a config it never
sent, as the active cluster's during an upgrade) it sends ``serveConfigV2``, which during an
upgrade is the *new* config: the old cluster would redeploy its applications with it while
still serving. Here the applications come from what Serve reports it was given
(``deployed_app_config`` of each application), so only the capacity changes; the
cluster-wide settings (``proxy_location``, ``http_options``, ``grpc_options``,
``logging_config``) come from ``serveConfigV2``, as KubeRay's fallback (Serve does not report
all of them, and keeps the HTTP and gRPC options of a running instance anyway).
"""

from __future__ import annotations

import json
from typing import Any

from kuberay.controllers.dashboard import ServeDetails

__all__ = ["running_serve_config"]


def running_serve_config(details: ServeDetails, serve_config_v2: str) -> str | None:
    """The Serve config (JSON) ``details`` says the cluster runs, under ``serveConfigV2``'s
    cluster-wide settings (none when it is not a YAML mapping). None when there is no
    application or one has no ``deployed_app_config`` (then only ``serveConfigV2`` is
    left)."""
    import yaml  # first RayService only: an operator without one never loads PyYAML

    apps = list(details.applications.values())
    if not apps or any(app.deployed_app_config is None for app in apps):
        return None
    try:
        loaded: Any = yaml.safe_load(serve_config_v2) if serve_config_v2.strip() else {}
    except yaml.YAMLError:
        loaded = {}
    base = dict(loaded) if isinstance(loaded, dict) else {}
    base.pop("target_capacity", None)
    base["applications"] = [dict(app.deployed_app_config or {}) for app in apps]
    return json.dumps(base, sort_keys=True, separators=(",", ":"), default=str)
