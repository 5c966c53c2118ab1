"""Which controllers the operator runs, decided by its configuration and gates.

KubeRay registers RayCluster, RayService, RayJob, RayCronJob (gate RayCronJob),
NetworkPolicy (gate RayClusterNetworkPolicy) and mTLS (gate RayClusterMTLS).
This build registers the controllers implemented so far; see the README.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.raycluster import RayClusterSettings, setup_raycluster_controller
from kuberay.featuregates import FeatureGate
from kuberay.reconcile import Manager

if TYPE_CHECKING:
    from kuberay.cmd.config import OperatorConfig

REQUEUE_ENV = "RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV"
DEFAULT_REQUEUE_SECONDS = 300.0


def requeue_seconds(env: Mapping[str, str]) -> float:
    """``RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV`` when a positive number, else 300."""
    try:
        value = float(env.get(REQUEUE_ENV, ""))
    except ValueError:
        return DEFAULT_REQUEUE_SECONDS
    return value if value > 0 else DEFAULT_REQUEUE_SECONDS


def build_options(cfg: OperatorConfig, env: Mapping[str, str]) -> BuildOptions:
    """Builder inputs from the operator's env switches and its config file."""
    return BuildOptions.from_env(
        env,
        default_container_envs=tuple(cfg.default_container_envs),
        head_sidecar_containers=tuple(cfg.head_sidecar_containers),
        worker_sidecar_containers=tuple(cfg.worker_sidecar_containers),
        default_pod_annotations=dict(cfg.default_pod_annotations),
        default_pod_labels=dict(cfg.default_pod_labels),
    )


def register_all(
    mgr: Manager,
    cfg: OperatorConfig,
    gates: FeatureGate,
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """Register every implemented controller the gates allow; their names."""
    environ = dict(os.environ if env is None else env)
    settings = RayClusterSettings(
        options=build_options(cfg, environ),
        features=gates.as_dict(),
        requeue_seconds=requeue_seconds(environ),
        enable_metrics=cfg.enable_metrics,
    )
    controller = setup_raycluster_controller(mgr, settings)
    return [controller.name]
