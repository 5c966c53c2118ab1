"""What a chart user sees besides the objects: the operator chart's appVersion, README tables
generated from values.yaml, values.schema.json rejecting a wrongly typed value, NOTES.txt after
install, and KubeRay v1.8's ``webhooks.enabled`` spelling."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import yaml

import kuberay
from tests.unit.manifests.manifests_expected import CHART_DIR, REPO
from tests.unit.manifests.ray_cluster_chart_cases import helm, needs_helm

README_SCRIPT = REPO / "hack" / "release" / "chart_readme.py"


def _render(*args: str) -> list[dict[str, Any]]:
    proc = helm("template", "kuberay", str(CHART_DIR), "-n", "ray-system", *args)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def test_app_version_is_the_package_version() -> None:
    chart = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
    assert chart["appVersion"] == kuberay.__version__


def test_readmes_are_generated_from_the_current_values() -> None:
    proc = subprocess.run(
        [sys.executable, str(README_SCRIPT), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    readme = (CHART_DIR / "README.md").read_text()
    assert "| webhook.enabled | bool | `false` |" in readme
    assert "| reconcileConcurrency | int | `4` | Concurrent reconciles" in readme


def test_readme_rows_follow_the_values() -> None:
    from hack.release import chart_readme

    values = (CHART_DIR / "values.yaml").read_text().replace("replicas: 1\n", "replicas: 3\n", 1)
    rows = {row[0]: row for row in chart_readme.rows(values)}
    assert rows["replicas"][2] == "3"


@needs_helm
def test_schema_rejects_a_wrongly_typed_value() -> None:
    json.loads((CHART_DIR / "values.schema.json").read_text())
    proc = helm("template", "kuberay", str(CHART_DIR), "--set", "replicas=two")
    assert proc.returncode != 0
    assert "/replicas" in proc.stderr and "want integer" in proc.stderr
    proc = helm("template", "kuberay", str(CHART_DIR), "--set", "webhook.failurePolicy=Maybe")
    assert proc.returncode != 0 and "/webhook/failurePolicy" in proc.stderr
    # values the templates check themselves keep their own message
    proc = helm("template", "kuberay", str(CHART_DIR), "--set", "kubeClient.qps=fast")
    assert proc.returncode != 0 and "kubeClient.qps must be a non-negative number" in proc.stderr


@needs_helm
def test_kuberay_v1_8_webhooks_enabled_is_accepted() -> None:
    ours = _render("--set", "webhook.enabled=true", "--set", "webhook.caBundle=QUJD")
    theirs = _render("--set", "webhooks.enabled=true", "--set", "webhook.caBundle=QUJD")
    assert theirs == ours
    assert any(o["kind"] == "ValidatingWebhookConfiguration" for o in theirs)
    off = _render("--set", "webhooks.enabled=false")
    assert not any(o["kind"] == "ValidatingWebhookConfiguration" for o in off)


@needs_helm
def test_notes_after_install() -> None:
    proc = helm(
        "install", "kuberay", str(CHART_DIR), "-n", "team-a", "--dry-run=client",
        "--set", "singleNamespaceInstall=true",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    notes = proc.stdout.split("NOTES:", 1)[1]
    assert f"kuberay-operator {kuberay.__version__}" in notes
    assert "It watches namespaces team-a." in notes
    assert "kubectl -n team-a rollout status deployment/kuberay-operator" in notes


@needs_helm
def test_log_keys_and_rotation_values_become_flags_the_operator_parses() -> None:
    from kuberay.cmd.config import parse_config
    from kuberay.featuregates.kuberay_gates import new_feature_gate

    default_args = _deployment_args()
    assert not any(a.startswith(("--log-keys", "--log-file-max")) for a in default_args)
    args = _deployment_args(
        "--set", "logging.keys=structlog",
        "--set", "logging.fileMaxSizeMB=100",
        "--set", "logging.fileMaxBackups=3",
        "--set", "logging.fileMaxAgeDays=7",
    )  # fmt: skip
    cfg, _ = parse_config(args, new_feature_gate())
    assert cfg.log_keys == "structlog"
    assert (cfg.log_file_max_size_mb, cfg.log_file_max_backups) == (100.0, 3)
    assert cfg.log_file_max_age_days == 7.0
    proc = helm("template", "kuberay", str(CHART_DIR), "--set", "logging.keys=zap")
    assert proc.returncode != 0 and "/logging/keys" in proc.stderr


def _deployment_args(*values: str) -> list[str]:
    deployment = next(o for o in _render(*values) if o["kind"] == "Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    args: list[str] = container["args"]
    return args
