"""The operator chart's ``monitoring:`` values (rendered with ``helm template``): nothing by
default; each switch renders its object, for this release's name and namespace, with the
labels Prometheus and Grafana select on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.build import build_helm

ROOT = Path(__file__).resolve().parents[3]
CHART_DIR = ROOT / "manifests" / "helm" / "kuberay-operator"
HELM = build_helm.binary_path()
pytestmark = pytest.mark.skipif(not HELM.exists(), reason=f"no helm binary at {HELM}")
MONITORING_KINDS = {"PodMonitor", "PrometheusRule"}


def render(values: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    """``helm template`` of the chart in namespace ``ops`` with ``values``."""
    values_file = tmp_path / "values.json"
    values_file.write_text(json.dumps(values))
    proc = subprocess.run(
        [str(HELM), "template", "kr", str(CHART_DIR), "-n", "ops", "-f", str(values_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _dashboards(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        o
        for o in objs
        if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-grafana-dashboards")
    ]


def test_nothing_is_rendered_by_default(tmp_path: Path) -> None:
    objs = render({}, tmp_path)
    assert objs
    assert [o for o in objs if o["kind"] in MONITORING_KINDS] == []
    assert _dashboards(objs) == []


def test_each_switch_renders_its_object(tmp_path: Path) -> None:
    objs = render(
        {
            "fullnameOverride": "ray-op",
            "monitoring": {
                "namespace": "monitoring",
                "additionalLabels": {"release": "prom"},
                "podMonitor": {"enabled": True, "namespaces": ["team-a"], "interval": "15s"},
                "prometheusRules": {"enabled": True},
                "grafanaDashboards": {
                    "enabled": True,
                    "annotations": {"grafana_folder": "KubeRay"},
                },
            },
        },
        tmp_path,
    )
    by_kind = {o["kind"]: o for o in objs if o["kind"] in MONITORING_KINDS}
    assert set(by_kind) == MONITORING_KINDS
    for obj in [*by_kind.values(), *_dashboards(objs)]:
        assert obj["metadata"]["namespace"] == "monitoring"
        assert obj["metadata"]["labels"]["release"] == "prom"

    pod_monitor = by_kind["PodMonitor"]["spec"]
    assert pod_monitor["namespaceSelector"] == {"matchNames": ["team-a"]}
    assert [e["port"] for e in pod_monitor["podMetricsEndpoints"]] == [
        "metrics",
        "as-metrics",
        "dash-metrics",
    ]
    assert {e["interval"] for e in pod_monitor["podMetricsEndpoints"]} == {"15s"}

    rules = yaml.safe_load((ROOT / "manifests/monitoring/rules/kuberay-alerts.yaml").read_text())
    rendered = by_kind["PrometheusRule"]["spec"]
    assert [g["name"] for g in rendered["groups"]] == [g["name"] for g in rules["groups"]]
    text = json.dumps(rendered)
    # the alerts select this release's operator Service (the ServiceMonitor's job) ...
    assert 'job=\\"ray-op\\"' in text and 'job=\\"kuberay-operator\\"' not in text
    # ... and keep Prometheus's own template syntax for the alert text
    assert "{{ $labels.namespace }}/{{ $labels.name }}" in text

    (dashboards,) = _dashboards(objs)
    assert dashboards["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboards["metadata"]["annotations"] == {"grafana_folder": "KubeRay"}
    for name, text in dashboards["data"].items():
        original = ROOT / "manifests/monitoring/grafana" / name
        assert json.loads(text) == json.loads(original.read_text())


def test_podmonitor_scrapes_every_namespace_unless_listed(tmp_path: Path) -> None:
    objs = render({"monitoring": {"podMonitor": {"enabled": True}}}, tmp_path)
    (monitor,) = [o for o in objs if o["kind"] == "PodMonitor"]
    assert monitor["metadata"]["namespace"] == "ops"
    assert monitor["spec"]["namespaceSelector"] == {"any": True}
    assert monitor["spec"]["selector"] == {"matchLabels": {"ray.io/is-ray-node": "yes"}}


def test_a_misspelled_monitoring_value_is_refused(tmp_path: Path) -> None:
    """``values.schema.json`` types the block: ``enable`` for ``enabled`` fails the install
    instead of silently rendering nothing."""
    values_file = tmp_path / "values.json"
    values_file.write_text(json.dumps({"monitoring": {"podMonitor": {"enable": True}}}))
    proc = subprocess.run(
        [str(HELM), "template", "kr", str(CHART_DIR), "-f", str(values_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "/monitoring/podMonitor" in proc.stderr and "'enable' not allowed" in proc.stderr
