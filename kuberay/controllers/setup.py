"""Which controllers the operator runs, decided by its configuration and gates.

KubeRay registers RayCluster, RayService, RayJob, RayCronJob (gate RayCronJob),
NetworkPolicy (gate RayClusterNetworkPolicy) and mTLS (gate RayClusterMTLS).
This build registers RayCluster, RayJob and RayService, RayCronJob when its gate is
on, NetworkPolicy when its gate is on, mTLS when its gate is on and the apiserver
serves cert-manager.io/v1, and KubeRay v1.8's opt-in node event forwarder when
``--enable-node-event-forwarder`` is set; see docs/raycluster.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from kuberay.controllers.batchscheduler import KUBERNETES_WAS_PLUGIN
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.config import ControllerConfig
from kuberay.controllers.dashboard.setup import setup_dashboard_poller
from kuberay.controllers.raycluster import RayClusterSettings, setup_raycluster_controller
from kuberay.controllers.rayjob import RayJobSettings, setup_rayjob_controller
from kuberay.controllers.rayservice import RayServiceSettings, setup_rayservice_controller
from kuberay.featuregates import FeatureGate
from kuberay.featuregates.kuberay_gates import (
    KUBERNETES_WAS,
    RAY_CLUSTER_MTLS,
    RAY_CLUSTER_NETWORK_POLICY,
    RAY_CRON_JOB,
)
from kuberay.gocompat.goutil import go_atoi
from kuberay.reconcile import Manager

REQUEUE_ENV = "RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV"
DEFAULT_REQUEUE_SECONDS = 300.0


def requeue_seconds(env: Mapping[str, str]) -> float:
    """``RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV`` as KubeRay reads it (``strconv.Atoi``):
    a decimal integer, used as is, so 0 or a negative value means no periodic requeue;
    anything else (unset, "1.5", " 5", "abc", beyond int64) means 300."""
    try:
        return float(go_atoi(env.get(REQUEUE_ENV, "")))
    except ValueError:
        return DEFAULT_REQUEUE_SECONDS


def build_options(cfg: ControllerConfig, env: Mapping[str, str]) -> BuildOptions:
    """Builder inputs from the operator's env switches and its configuration."""
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
    cfg: ControllerConfig,
    gates: FeatureGate,
    env: Mapping[str, str] | None = None,
    *,
    openshift_api_groups: frozenset[str] = frozenset(),
    cert_manager_available: bool = False,
) -> list[str]:
    """Register every implemented controller the gates allow; their names.
    ``openshift_api_groups``: from ``detect_openshift_api_groups`` at start-up;
    ``cert_manager_available``: the apiserver serves cert-manager.io/v1 (the mTLS
    controller runs only then, as in KubeRay)."""
    environ = dict(os.environ if env is None else env)
    settings = RayClusterSettings(
        options=build_options(cfg, environ),
        features=gates.as_dict(),
        requeue_seconds=requeue_seconds(environ),
        enable_metrics=cfg.enable_metrics,
        openshift_api_groups=openshift_api_groups,
        cert_manager_available=cert_manager_available,
        # KubeRay: the gate selects the WAS plugin (the config refuses it with a batch flag);
        # its hooks only act on RayClusters, so the RayJob controller needs none
        batch_scheduler=(
            KUBERNETES_WAS_PLUGIN if gates.enabled(KUBERNETES_WAS) else cfg.batch_scheduler
        ),
        webhooks_served=cfg.webhooks_served,
    )
    controller = setup_raycluster_controller(mgr, settings)
    poller = setup_dashboard_poller(mgr, use_kubernetes_proxy=cfg.use_kubernetes_proxy, env=environ)
    rayjob = setup_rayjob_controller(
        mgr,
        RayJobSettings.from_env(
            environ,
            options=settings.options,
            features=gates.as_dict(),
            enable_metrics=cfg.enable_metrics,
            batch_scheduler=cfg.batch_scheduler,
        ),
        poller,
    )
    service_settings = RayServiceSettings(
        options=settings.options,
        features=gates.as_dict(),
        env=environ,
        enable_metrics=cfg.enable_metrics,
    )
    # After RayJob: the RayService setup chains the poller's on_result to the one before it.
    rayservice = setup_rayservice_controller(mgr, service_settings, poller)
    names = [controller.name, rayjob.name, rayservice.name]
    # the gated controllers are imported only when their gate is on
    if gates.enabled(RAY_CRON_JOB):
        from kuberay.controllers.raycronjob import RayCronJobSettings, setup_raycronjob_controller

        cron = RayCronJobSettings(features=gates.as_dict())
        names.append(setup_raycronjob_controller(mgr, cron).name)
    if gates.enabled(RAY_CLUSTER_MTLS) and cert_manager_available:
        from kuberay.controllers.mtls import MTLSSettings, setup_mtls_controller

        mtls = MTLSSettings(
            features=gates.as_dict(), cluster_domain=settings.options.cluster_domain
        )
        names.append(setup_mtls_controller(mgr, mtls).name)
    if gates.enabled(RAY_CLUSTER_NETWORK_POLICY):
        from kuberay.controllers.networkpolicy import setup_networkpolicy_controller

        names.append(setup_networkpolicy_controller(mgr).name)
    if cfg.node_event_forwarder is not None:
        from kuberay.controllers.nodeevents import setup_node_event_forwarder

        names.append(setup_node_event_forwarder(mgr, cfg.node_event_forwarder).name)
    return names
