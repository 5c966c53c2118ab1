"""The Serve config a cluster runs, rebuilt from Ray's answer when the operator does not
remember what it sent (issue 26, item 2): applications as Serve reports them, cluster-wide
settings from ``serveConfigV2``, nothing when Serve does not report every application's."""

from __future__ import annotations

import json
from typing import Any

from kuberay.controllers.dashboard import ServeDetails
from kuberay.controllers.rayservice.running import running_serve_config

SPEC = """\
http_options:
  port: 8000
target_capacity: 30
applications:
  - name: fruit
    import_path: fruit.v2:app
"""


def _details(**apps: Any) -> ServeDetails:
    return ServeDetails.from_json(
        {
            "applications": {
                name: {"name": name, "status": "RUNNING", "deployed_app_config": config}
                for name, config in apps.items()
            }
        }
    )


def test_the_applications_serve_runs_under_the_specs_cluster_wide_settings() -> None:
    running = {"name": "fruit", "import_path": "fruit.v1:app", "route_prefix": "/fruit"}
    config = running_serve_config(_details(fruit=running), SPEC)
    assert config is not None
    assert json.loads(config) == {"http_options": {"port": 8000}, "applications": [running]}


def test_nothing_when_serve_does_not_report_every_applications_config() -> None:
    assert running_serve_config(_details(), SPEC) is None
    assert running_serve_config(_details(a={"import_path": "m:a"}, b=None), SPEC) is None
    # a field of the wrong type is ignored, as KubeRay ignores the field altogether
    assert running_serve_config(_details(a="not an object"), SPEC) is None


def test_a_broken_spec_leaves_only_the_applications() -> None:
    config = running_serve_config(_details(a={"import_path": "m:a"}), "applications: [")
    assert config is not None
    assert json.loads(config) == {"applications": [{"import_path": "m:a"}]}
