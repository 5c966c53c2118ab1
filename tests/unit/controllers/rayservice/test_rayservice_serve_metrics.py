"""Serve answers as status, and the ``kuberay_service_*`` series computed from the cache."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from kuberay.controllers.dashboard import ServeDetails
from kuberay.controllers.rayservice.metrics import RayServiceMetrics
from kuberay.controllers.rayservice.serve import app_statuses


def test_unnamed_app_is_default_and_statuses_are_copied() -> None:
    details = ServeDetails.from_json(
        {
            "applications": {
                "": {
                    "name": "",
                    "status": "DEPLOY_FAILED",
                    "message": "boom",
                    "deployments": {"D": {"name": "D", "status": "UNHEALTHY", "message": "x"}},
                },
                "b": {"name": "b", "status": "RUNNING", "deployments": {}},
            }
        }
    )
    assert app_statuses(details) == {
        "default": {
            "status": "DEPLOY_FAILED",
            "message": "boom",
            "serveDeploymentStatuses": {"D": {"status": "UNHEALTHY", "message": "x"}},
        },
        "b": {"status": "RUNNING"},
    }
    assert not details.all_running


class _Cache:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[Any]:
        return self.items if kind == "RayService" else []


def test_service_metrics_follow_the_conditions() -> None:
    registry = CollectorRegistry()
    rs = {
        "metadata": {"name": "s", "namespace": "n", "uid": "u"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "UpgradeInProgress", "status": "False"},
            ]
        },
    }
    RayServiceMetrics(_Cache([rs]), registry)  # type: ignore[arg-type]
    labels = {"name": "s", "namespace": "n", "uid": "u"}
    assert registry.get_sample_value("kuberay_service_info", labels) == 1
    assert (
        registry.get_sample_value(
            "kuberay_service_condition_ready", {**labels, "condition": "true"}
        )
        == 1
    )
    assert (
        registry.get_sample_value(
            "kuberay_service_condition_upgrade_in_progress", {**labels, "condition": "false"}
        )
        == 1
    )
