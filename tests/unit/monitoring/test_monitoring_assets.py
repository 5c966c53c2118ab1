"""The monitoring assets of ``manifests/monitoring`` and the operator chart's copies of them.

* the dashboards are what ``hack/docs/gen_grafana_dashboards.py`` writes, and the chart's copies of
  the dashboards and the rule file are byte for byte the originals;
* every dashboard panel has a query, an id of its own and a place on the 24-column grid that
  no other panel takes; every query selects only the operator's job or the Ray pods;
* the PodMonitor scrapes the port the operator gives every Ray container and labels series
  with their RayCluster; the ServiceMonitor honours the exported labels the rules rely on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.docs import gen_grafana_dashboards
from kuberay.api.v1 import constants as C

ROOT = Path(__file__).resolve().parents[3]
MONITORING = ROOT / "manifests" / "monitoring"
CHART_FILES = ROOT / "manifests" / "helm" / "kuberay-operator" / "files" / "monitoring"
DASHBOARDS = sorted((MONITORING / "grafana").glob("*.json"))


def panels(path: Path) -> list[dict[str, Any]]:
    """The dashboard's panels, rows excluded."""
    return [p for p in json.loads(path.read_text())["panels"] if p["type"] != "row"]


def test_dashboards_are_generated_from_the_panel_lists() -> None:
    assert gen_grafana_dashboards.main(["--check"]) == 0
    assert [p.name for p in DASHBOARDS] == ["kuberay-fleet.json", "kuberay-operator.json"]


@pytest.mark.parametrize(
    "original",
    [*DASHBOARDS, MONITORING / "rules" / "kuberay-alerts.yaml"],
    ids=lambda p: p.name,
)
def test_chart_copies_are_the_originals(original: Path) -> None:
    copy = CHART_FILES / original.name
    assert copy.read_bytes() == original.read_bytes(), f"cp {original} {copy}"


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_panels_have_queries_ids_and_places_of_their_own(path: Path) -> None:
    model = json.loads(path.read_text())
    ids = [p["id"] for p in model["panels"]]
    assert len(ids) == len(set(ids))
    taken: set[tuple[int, int]] = set()
    for panel in model["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24, panel["title"]
        cells = {(pos["y"] + dy, pos["x"] + dx) for dy in range(pos["h"]) for dx in range(pos["w"])}
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells
    for panel in panels(path):
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            expr = target["expr"]
            assert 'job=~"$job"' in expr or 'namespace=~"$namespace"' in expr, expr
            assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


def test_operator_dashboard_covers_what_an_operator_owner_watches() -> None:
    exprs = " ".join(
        t["expr"]
        for p in panels(MONITORING / "grafana" / "kuberay-operator.json")
        for t in p["targets"]
    )
    for metric in (
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "workqueue_depth",
        "workqueue_queue_duration_seconds_bucket",
        "workqueue_longest_running_processor_seconds",
        "rest_client_requests_total",
    ):
        assert metric in exprs
    assert re.search(r"sum by \(code\) \(rate\(rest_client_requests_total", exprs)


def test_fleet_dashboard_groups_objects_by_state() -> None:
    exprs = [
        t["expr"]
        for p in panels(MONITORING / "grafana" / "kuberay-fleet.json")
        for t in p["targets"]
    ]
    for grouping in (
        "sum by (condition) (kuberay_cluster_condition_provisioned",
        "sum by (deployment_status) (kuberay_job_deployment_status",
        "kuberay_job_execution_duration_seconds",
        "sum by (condition) (kuberay_service_condition_ready",
        "sum by (condition) (kuberay_service_condition_upgrade_in_progress",
    ):
        assert any(grouping in e for e in exprs), grouping


def test_podmonitor_scrapes_the_metrics_port_of_every_ray_pod() -> None:
    monitor = yaml.safe_load((MONITORING / "podmonitor-ray.yaml").read_text())
    assert monitor["kind"] == "PodMonitor"
    assert monitor["spec"]["selector"] == {"matchLabels": {C.RAY_NODE_LABEL_KEY: "yes"}}
    assert monitor["spec"]["namespaceSelector"] == {"any": True}
    endpoints = monitor["spec"]["podMetricsEndpoints"]
    assert endpoints[0]["port"] == C.METRICS_PORT_NAME
    for endpoint in endpoints:
        targets = {r["targetLabel"] for r in endpoint["relabelings"]}
        assert "ray_io_cluster" in targets


def test_servicemonitor_selects_the_operator_service_and_honours_labels() -> None:
    monitor = yaml.safe_load((MONITORING / "servicemonitor.yaml").read_text())
    service = yaml.safe_load((ROOT / "manifests" / "operator" / "service.yaml").read_text())
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert endpoint["honorLabels"] is True
    # the rules select the operator by job = the Service's name
    rules = (MONITORING / "rules" / "kuberay-alerts.yaml").read_text()
    assert f'job="{service["metadata"]["name"]}"' in rules


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((MONITORING / "kustomization.yaml").read_text())
    manifests = {p.name for p in MONITORING.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == manifests
    (generator,) = kustomization["configMapGenerator"]
    assert sorted(generator["files"]) == sorted(f"grafana/{p.name}" for p in DASHBOARDS)
