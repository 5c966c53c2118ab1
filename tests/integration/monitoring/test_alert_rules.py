"""The alerting rules of ``manifests/monitoring`` under the real ``promtool``.

* ``promtool check rules`` accepts the rule file, and the PrometheusRule objects (the
  manifest's and the operator chart's) carry exactly its groups;
* ``promtool test rules`` runs ``kuberay-alerts.test.yaml``: each alert fires on the series of
  its failure with the labels and text an on-call engineer reads, and stays quiet on the
  healthy series beside them; every alert has at least one firing case there.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
MONITORING = ROOT / "manifests" / "monitoring"
RULES = MONITORING / "rules" / "kuberay-alerts.yaml"
TESTS = Path(__file__).with_name("kuberay-alerts.test.yaml")


def _promtool(promtool: Path, *args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(promtool), *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )
    assert done.returncode == 0, f"promtool {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def _alert_names(groups: dict[str, Any]) -> list[str]:
    return [r["alert"] for g in groups["groups"] for r in g["rules"] if "alert" in r]


def test_promtool_accepts_the_rule_file(promtool: Path) -> None:
    out = _promtool(promtool, "check", "rules", str(RULES))
    assert (
        "SUCCESS" in out and f"{len(_alert_names(yaml.safe_load(RULES.read_text())))} rules" in out
    )


def test_promtool_accepts_the_prometheusrule_spec(promtool: Path, tmp_path: Path) -> None:
    """The manifest's PrometheusRule is the rule file's groups, and promtool accepts them
    (a PrometheusRule is loaded into Prometheus as its spec)."""
    manifest = yaml.safe_load((MONITORING / "prometheusrule.yaml").read_text())
    assert manifest["kind"] == "PrometheusRule"
    assert manifest["spec"] == yaml.safe_load(RULES.read_text())
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(manifest["spec"]))
    _promtool(promtool, "check", "rules", str(spec))


def test_every_alert_fires_in_promtool_unit_tests(promtool: Path) -> None:
    alerts = _alert_names(yaml.safe_load(RULES.read_text()))
    assert len(alerts) >= 10
    cases = yaml.safe_load(TESTS.read_text())["tests"]
    firing = {
        t["alertname"] for case in cases for t in case.get("alert_rule_test", []) if t["exp_alerts"]
    }
    assert sorted(set(alerts) - firing) == [], "alerts without a firing case"
    assert sorted(firing - set(alerts)) == [], "cases for alerts that do not exist"
    out = _promtool(promtool, "test", "rules", TESTS.name, cwd=TESTS.parent)
    assert "SUCCESS" in out
