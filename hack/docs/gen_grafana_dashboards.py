#!/usr/bin/env python3
"""Write the Grafana dashboards of ``manifests/monitoring/grafana/`` from the panel lists below.

    python hack/docs/gen_grafana_dashboards.py           # rewrite the JSON files
    python hack/docs/gen_grafana_dashboards.py --check   # exit 1 if a file is not up to date

Two dashboards, each a plain Grafana dashboard JSON model (import it, or let Grafana's
dashboard sidecar load it from the operator chart's ConfigMap):

* ``kuberay-operator.json``: the operator's health: up, leadership, memory and CPU;
  reconcile rate by result, errors and latency; workqueue depth, adds, wait, in-progress
  work and retries; Kubernetes API requests by code and by verb, their latency and the
  client-side rate limiter's delay.
* ``kuberay-fleet.json``: the Ray objects: RayClusters by provisioned condition and owner,
  time to provision; RayJobs by deployment status and execution duration; RayService
  readiness and upgrades; Ray's own metrics per RayCluster (the PodMonitor's series).

Every query uses only series the operator (``job=~"$job"``) or the Ray PodMonitor
(``ray_io_cluster``) exports. tests/e2e/test_monitoring_real.py runs every query against a
real Prometheus and expects series from each.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "manifests" / "monitoring" / "grafana"
DS = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"
OP = 'job=~"$job"'
OPC = 'job=~"$job", controller=~"$controller"'
OPQ = 'job=~"$job", name=~"$controller"'
NS = 'namespace=~"$namespace"'
RAY = 'ray_io_cluster!="", namespace=~"$namespace"'


@dataclass(frozen=True)
class Panel:
    """One panel: its title, (expr, legend) queries, unit and kind."""

    title: str
    queries: tuple[tuple[str, str], ...]
    unit: str = "short"
    kind: str = "timeseries"
    description: str = ""
    width: int = 12


@dataclass(frozen=True)
class Row:
    """A titled row of panels."""

    title: str
    panels: tuple[Panel, ...] = field(default_factory=tuple)


def _quantiles(metric: str, selector: str, by: str) -> tuple[tuple[str, str], ...]:
    return tuple(
        (
            f"histogram_quantile({q}, sum by ({by}, le) (rate({metric}{{{selector}}}[{RATE}])))",
            f"p{int(q * 100)} {{{{{by.split(', ')[0]}}}}}",
        )
        for q in (0.5, 0.95, 0.99)
    )


OPERATOR_ROWS = (
    Row(
        "Operator",
        (
            Panel(
                "Operator up",
                ((f"sum(up{{{OP}}})", "scraped targets up"),),
                kind="stat",
                width=6,
                description="kuberay-operator /metrics endpoints scraped successfully.",
            ),
            Panel(
                "Leader",
                ((f"max(leader_election_master_status{{{OP}}})", "leading"),),
                kind="stat",
                width=6,
                description="1 while a replica holds the leader-election Lease.",
            ),
            Panel(
                "Resident memory",
                ((f"process_resident_memory_bytes{{{OP}}}", "{{instance}}"),),
                unit="bytes",
                width=6,
            ),
            Panel(
                "CPU",
                ((f"rate(process_cpu_seconds_total{{{OP}}}[{RATE}])", "{{instance}}"),),
                unit="percentunit",
                width=6,
            ),
        ),
    ),
    Row(
        "Reconciles",
        (
            Panel(
                "Reconcile rate by result",
                (
                    (
                        f"sum by (controller, result) "
                        f"(rate(controller_runtime_reconcile_total{{{OPC}}}[{RATE}]))",
                        "{{controller}} {{result}}",
                    ),
                ),
                unit="ops",
            ),
            Panel(
                "Reconcile errors",
                (
                    (
                        f"sum by (controller) "
                        f"(rate(controller_runtime_reconcile_errors_total{{{OPC}}}[{RATE}]))",
                        "{{controller}}",
                    ),
                ),
                unit="ops",
            ),
            Panel(
                "Reconcile latency",
                _quantiles("controller_runtime_reconcile_time_seconds_bucket", OPC, "controller"),
                unit="s",
            ),
            Panel(
                "Workers in use",
                (
                    (
                        f"sum by (controller) (controller_runtime_active_workers{{{OPC}}})",
                        "{{controller}} active",
                    ),
                    (
                        f"sum by (controller) "
                        f"(controller_runtime_max_concurrent_reconciles{{{OPC}}})",
                        "{{controller}} max",
                    ),
                ),
            ),
        ),
    ),
    Row(
        "Workqueues",
        (
            Panel(
                "Depth",
                ((f"sum by (name) (workqueue_depth{{{OPQ}}})", "{{name}}"),),
                description="Objects waiting to be reconciled.",
            ),
            Panel(
                "Adds",
                ((f"sum by (name) (rate(workqueue_adds_total{{{OPQ}}}[{RATE}]))", "{{name}}"),),
                unit="ops",
            ),
            Panel(
                "Time waiting in the queue",
                _quantiles("workqueue_queue_duration_seconds_bucket", OPQ, "name"),
                unit="s",
                description="How long an object waits before a worker picks it up.",
            ),
            Panel(
                "Work in progress",
                (
                    (
                        f"max by (name) (workqueue_longest_running_processor_seconds{{{OPQ}}})",
                        "{{name}} longest running",
                    ),
                    (
                        f"sum by (name) (workqueue_unfinished_work_seconds{{{OPQ}}})",
                        "{{name}} unfinished total",
                    ),
                ),
                unit="s",
            ),
            Panel(
                "Requeues with delay",
                (
                    (
                        f"sum by (name) (rate(workqueue_retries_total{{{OPQ}}}[{RATE}]))",
                        "{{name}}",
                    ),
                ),
                unit="ops",
                width=24,
            ),
        ),
    ),
    Row(
        "Kubernetes API",
        (
            Panel(
                "API requests by code",
                (
                    (
                        f"sum by (code) (rate(rest_client_requests_total{{{OP}}}[{RATE}]))",
                        "{{code}}",
                    ),
                ),
                unit="reqps",
            ),
            Panel(
                "API requests by verb and code",
                (
                    (
                        f"sum by (verb, code) "
                        f"(rate(kuberay_rest_client_requests_by_verb_total{{{OP}}}[{RATE}]))",
                        "{{verb}} {{code}}",
                    ),
                ),
                unit="reqps",
            ),
            Panel(
                "API request latency",
                _quantiles("rest_client_request_duration_seconds_bucket", OP, "verb"),
                unit="s",
            ),
            Panel(
                "Client-side rate limiter delay",
                _quantiles("rest_client_rate_limiter_duration_seconds_bucket", OP, "verb"),
                unit="s",
                description="Time requests waited for the --qps/--burst token bucket.",
            ),
        ),
    ),
)

FLEET_ROWS = (
    Row(
        "RayClusters",
        (
            Panel(
                "RayClusters",
                ((f"count(kuberay_cluster_info{{{NS}}})", "RayClusters"),),
                kind="stat",
                width=6,
            ),
            Panel(
                "RayClusters by provisioned condition",
                (
                    (
                        f"sum by (condition) (kuberay_cluster_condition_provisioned{{{NS}}})",
                        "provisioned={{condition}}",
                    ),
                ),
                width=9,
                description="RayClusterProvisioned: all Ray pods were running and ready once.",
            ),
            Panel(
                "RayClusters by namespace and owner",
                (
                    (
                        f"sum by (namespace, owner_kind) (kuberay_cluster_info{{{NS}}})",
                        "{{namespace}} {{owner_kind}}",
                    ),
                ),
                width=9,
            ),
            Panel(
                "Time to provision",
                (
                    (
                        f"max by (namespace, name) "
                        f"(kuberay_cluster_provisioned_duration_seconds{{{NS}}})",
                        "{{namespace}}/{{name}}",
                    ),
                ),
                unit="s",
                kind="bargauge",
            ),
            Panel(
                "RayClusters not provisioned",
                (
                    (
                        f"max by (namespace, name) (kuberay_cluster_condition_provisioned"
                        f'{{{NS}, condition="false"}})',
                        "{{namespace}}/{{name}}",
                    ),
                ),
                kind="table",
            ),
        ),
    ),
    Row(
        "RayJobs",
        (
            Panel(
                "RayJobs",
                ((f"count(kuberay_job_info{{{NS}}})", "RayJobs"),),
                kind="stat",
                width=6,
            ),
            Panel(
                "RayJobs by deployment status",
                (
                    (
                        f"sum by (deployment_status) (kuberay_job_deployment_status{{{NS}}})",
                        "{{deployment_status}}",
                    ),
                ),
                width=18,
            ),
            Panel(
                "Execution duration",
                (
                    (
                        f"max by (namespace, name, job_deployment_status) "
                        f"(kuberay_job_execution_duration_seconds{{{NS}}})",
                        "{{namespace}}/{{name}} {{job_deployment_status}}",
                    ),
                ),
                unit="s",
                kind="bargauge",
            ),
            Panel(
                "Failed RayJobs",
                (
                    (
                        f"max by (namespace, name) (kuberay_job_deployment_status"
                        f'{{{NS}, deployment_status="Failed"}})',
                        "{{namespace}}/{{name}}",
                    ),
                ),
                kind="table",
            ),
        ),
    ),
    Row(
        "RayServices",
        (
            Panel(
                "RayServices",
                ((f"count(kuberay_service_info{{{NS}}})", "RayServices"),),
                kind="stat",
                width=6,
            ),
            Panel(
                "RayServices by readiness",
                (
                    (
                        f"sum by (condition) (kuberay_service_condition_ready{{{NS}}})",
                        "ready={{condition}}",
                    ),
                ),
                width=9,
            ),
            Panel(
                "RayService upgrades",
                (
                    (
                        f"sum by (condition) "
                        f"(kuberay_service_condition_upgrade_in_progress{{{NS}}})",
                        "upgrading={{condition}}",
                    ),
                ),
                width=9,
            ),
            Panel(
                "RayServices not ready",
                (
                    (
                        f"max by (namespace, name) (kuberay_service_condition_ready"
                        f'{{{NS}, condition="false"}})',
                        "{{namespace}}/{{name}}",
                    ),
                ),
                kind="table",
                width=24,
            ),
        ),
    ),
    Row(
        "Ray (the PodMonitor's series)",
        (
            Panel(
                "Ray pods scraped per RayCluster",
                (
                    (
                        f"count by (namespace, ray_io_cluster) (up{{{RAY}}} == 1)",
                        "{{namespace}}/{{ray_io_cluster}}",
                    ),
                ),
            ),
            Panel(
                "Ray node CPU utilisation",
                (
                    (
                        f"avg by (namespace, ray_io_cluster) (ray_node_cpu_utilization{{{RAY}}})",
                        "{{namespace}}/{{ray_io_cluster}}",
                    ),
                ),
                unit="percent",
            ),
            Panel(
                "Ray node memory used",
                (
                    (
                        f"sum by (namespace, ray_io_cluster) (ray_node_mem_used{{{RAY}}})",
                        "{{namespace}}/{{ray_io_cluster}}",
                    ),
                ),
                unit="bytes",
            ),
            Panel(
                "Ray object store memory",
                (
                    (
                        f"sum by (namespace, ray_io_cluster) (ray_object_store_memory{{{RAY}}})",
                        "{{namespace}}/{{ray_io_cluster}}",
                    ),
                ),
                unit="bytes",
            ),
        ),
    ),
)


def _variable(name: str, label: str, query: str, *, multi: bool, default: str) -> dict[str, Any]:
    definition = f"label_values({query}, {label})"
    return {
        "name": name,
        "label": name,
        "type": "query",
        "datasource": DS,
        "definition": definition,
        "query": {"query": definition, "refId": f"{name}-variable"},
        "refresh": 2,
        "sort": 1,
        "multi": multi,
        "includeAll": multi,
        "allValue": ".*" if multi else None,
        "current": {"selected": True, "text": default, "value": default},
        "hide": 0,
        "options": [],
    }


def _panel(panel: Panel, panel_id: int, x: int, y: int) -> dict[str, Any]:
    targets = [
        {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": chr(ord("A") + i)}
        for i, (expr, legend) in enumerate(panel.queries)
    ]
    out: dict[str, Any] = {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "datasource": DS,
        "gridPos": {"h": 8, "w": panel.width, "x": x, "y": y},
        "targets": targets,
        "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
        "options": {},
    }
    if panel.description:
        out["description"] = panel.description
    if panel.kind == "table":
        for target in targets:
            target.update(format="table", instant=True)
    if panel.kind in ("stat", "bargauge"):
        out["options"] = {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}
        }
    return out


def dashboard(
    uid: str, title: str, description: str, rows: tuple[Row, ...], variables: list[dict[str, Any]]
) -> dict[str, Any]:
    """The dashboard JSON model: ``rows`` laid out left to right, 24 columns wide."""
    panels: list[dict[str, Any]] = []
    next_id, y = 1, 0
    for row in rows:
        panels.append(
            {
                "id": next_id,
                "type": "row",
                "title": row.title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "panels": [],
            }
        )
        next_id, y, x = next_id + 1, y + 1, 0
        for panel in row.panels:
            if x + panel.width > 24:
                x, y = 0, y + 8
            panels.append(_panel(panel, next_id, x, y))
            next_id, x = next_id + 1, x + panel.width
        y += 8
    datasource = {
        "name": "datasource",
        "label": "Data source",
        "type": "datasource",
        "query": "prometheus",
        "current": {},
        "hide": 0,
        "options": [],
        "refresh": 1,
    }
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": ["kuberay", "ray"],
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": 39,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-3h", "to": "now"},
        "timezone": "browser",
        "annotations": {"list": []},
        "links": [],
        "templating": {"list": [datasource, *variables]},
        "panels": panels,
    }


def dashboards() -> dict[str, dict[str, Any]]:
    """File name -> dashboard JSON model."""
    job = _variable(
        "job",
        "job",
        "controller_runtime_reconcile_total",
        multi=False,
        default="kuberay-operator",
    )
    controller = _variable(
        "controller",
        "controller",
        'controller_runtime_reconcile_total{job=~"$job"}',
        multi=True,
        default="$__all",
    )
    namespace = _variable(
        "namespace",
        "namespace",
        '{__name__=~"kuberay_(cluster|job|service)_info"}',
        multi=True,
        default="$__all",
    )
    return {
        "kuberay-operator.json": dashboard(
            "kuberay-operator-health",
            "KubeRay operator",
            "kuberay-operator: reconciles, workqueues and Kubernetes API requests.",
            OPERATOR_ROWS,
            [job, controller],
        ),
        "kuberay-fleet.json": dashboard(
            "kuberay-fleet",
            "KubeRay fleet",
            "RayClusters, RayJobs and RayServices, and Ray's own metrics per RayCluster.",
            FLEET_ROWS,
            [namespace],
        ),
    }


def render(model: dict[str, Any]) -> str:
    """The file text of one dashboard."""
    return json.dumps(model, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or ``--check``) every dashboard file."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is out of date")
    args = parser.parse_args(argv)
    stale = []
    for name, model in dashboards().items():
        path = OUT / name
        text = render(model)
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(path)
    if stale:
        print(f"out of date (run hack/docs/gen_grafana_dashboards.py): {' '.join(stale)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
