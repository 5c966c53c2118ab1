"""Liveness/readiness probes KubeRay injects into the Ray container.

Only missing probes are added (and nothing at all with ``ENABLE_PROBES_INJECTION=false``):

* Ray >= 2.53.0 (``rayVersion``): ``httpGet /api/healthz`` on the dashboard agent port
  (``dashboard-agent-listen-port`` start param, default 52365);
* otherwise ``exec bash -c "<checks joined by ' && '>"``: the raylet check via the agent, plus
  for the head the GCS check via the dashboard (``dashboard-port``, default 8265; its wget
  timeout is literally the readiness failure threshold, 10);
* timings: liveness 30/5/1/120 (delay/period/success/failure), readiness 10/5/1/10, timeout 5 on
  the head and 2 on workers;
* workers of RayService-created clusters get an exec readiness probe that also checks the Serve
  proxy (``/-/healthz`` on the ``serve`` container port, default 8000) with failure threshold 1.

A non-numeric port parameter falls back to the default.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.constants import UNIFIED_HEALTH_CHECK_MIN_RAY_VERSION
from kuberay.controllers.common.objects import find_container_port
from kuberay.gocompat.versions import version_at_least

__all__ = [
    "init_liveness_and_readiness_probes",
    "supports_unified_health_check",
    "wget_health_command",
]


def supports_unified_health_check(ray_version: str) -> bool:
    """Ray >= 2.53.0 serves the single HTTP health endpoint used by the probes."""
    return version_at_least(ray_version, UNIFIED_HEALTH_CHECK_MIN_RAY_VERSION)


def wget_health_command(timeout: int, port: int, path: str) -> str:
    """KubeRay ``BaseWgetHealthCommand``."""
    return f"wget --tries 1 -T {timeout} -q -O- http://localhost:{port}/{path} | grep success"


def _port_param(params: Mapping[str, str], key: str, default: int) -> int:
    """Go ``strconv.ParseInt(value, 10, 32)`` of a start parameter, or ``default``."""
    value = params.get(key)
    if value is None:
        return default
    body = value[1:] if value[:1] in ("+", "-") else value
    if not body or not all(ch in "0123456789" for ch in body):
        return default
    number = int(value)
    return number if -(1 << 31) <= number < (1 << 31) else default


def init_liveness_and_readiness_probes(
    container: MutableMapping[str, Any],
    node_type: str,
    creator_crd: str,
    params: Mapping[str, str],
    ray_version: str,
) -> None:
    """KubeRay ``initLivenessAndReadinessProbe`` on the Ray container (in place)."""
    agent_port = _port_param(
        params, "dashboard-agent-listen-port", c.DEFAULT_DASHBOARD_AGENT_LISTEN_PORT
    )
    use_http = supports_unified_health_check(ray_version)

    commands = [
        wget_health_command(
            c.DEFAULT_READINESS_PROBE_TIMEOUT_SECONDS, agent_port, c.RAY_AGENT_RAYLET_HEALTH_PATH
        )
    ]
    if node_type == c.HEAD_NODE:
        commands.append(
            wget_health_command(
                c.DEFAULT_READINESS_PROBE_FAILURE_THRESHOLD,
                _port_param(params, "dashboard-port", c.DEFAULT_DASHBOARD_PORT),
                c.RAY_DASHBOARD_GCS_HEALTH_PATH,
            )
        )

    def handler(cmds: list[str]) -> dict[str, Any]:
        if use_http:
            return {"httpGet": {"path": c.RAY_NODE_HEALTH_PATH, "port": agent_port}}
        return {"exec": {"command": ["bash", "-c", " && ".join(cmds)]}}

    if container.get("livenessProbe") is None:
        container["livenessProbe"] = {
            **handler(commands),
            "initialDelaySeconds": c.DEFAULT_LIVENESS_PROBE_INITIAL_DELAY_SECONDS,
            "timeoutSeconds": c.DEFAULT_HEAD_LIVENESS_PROBE_TIMEOUT_SECONDS
            if node_type == c.HEAD_NODE
            else c.DEFAULT_LIVENESS_PROBE_TIMEOUT_SECONDS,
            "periodSeconds": c.DEFAULT_LIVENESS_PROBE_PERIOD_SECONDS,
            "successThreshold": c.DEFAULT_LIVENESS_PROBE_SUCCESS_THRESHOLD,
            "failureThreshold": c.DEFAULT_LIVENESS_PROBE_FAILURE_THRESHOLD,
        }

    if container.get("readinessProbe") is None:
        readiness: dict[str, Any] = {
            **handler(commands),
            "initialDelaySeconds": c.DEFAULT_READINESS_PROBE_INITIAL_DELAY_SECONDS,
            "timeoutSeconds": c.DEFAULT_HEAD_READINESS_PROBE_TIMEOUT_SECONDS
            if node_type == c.HEAD_NODE
            else c.DEFAULT_READINESS_PROBE_TIMEOUT_SECONDS,
            "periodSeconds": c.DEFAULT_READINESS_PROBE_PERIOD_SECONDS,
            "successThreshold": c.DEFAULT_READINESS_PROBE_SUCCESS_THRESHOLD,
            "failureThreshold": c.DEFAULT_READINESS_PROBE_FAILURE_THRESHOLD,
        }
        if creator_crd == c.KIND_RAYSERVICE and node_type == c.WORKER_NODE:
            serve_check = wget_health_command(
                c.DEFAULT_READINESS_PROBE_INITIAL_DELAY_SECONDS,
                find_container_port(container, c.SERVING_PORT_NAME, c.DEFAULT_SERVING_PORT),
                c.RAY_SERVE_PROXY_HEALTH_PATH,
            )
            readiness.pop("httpGet", None)
            readiness["exec"] = {"command": ["bash", "-c", " && ".join([*commands, serve_check])]}
            readiness["failureThreshold"] = c.SERVE_READINESS_PROBE_FAILURE_THRESHOLD
        container["readinessProbe"] = readiness
