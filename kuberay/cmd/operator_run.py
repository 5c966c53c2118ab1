"""The ``kuberay-operator`` process after :func:`kuberay.cmd.lean_imports.slim_process`:
flags and ``--config`` parsed, logging configured, the Manager built with its controllers and
run (:func:`main`; the process entry point is :mod:`kuberay.cmd.operator`)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any

import structlog

from kuberay.api.v1 import constants as C
from kuberay.cmd.config import (
    LEADER_ELECTION_ID,
    ConfigError,
    OperatorConfig,
    parse_config,
    refuse_unimplemented,
)
from kuberay.featuregates import FeatureGate
from kuberay.featuregates.kuberay_gates import KUBERNETES_WAS, RAY_CLUSTER_MTLS, new_feature_gate
from kuberay.kube import Client, KubeError
from kuberay.logging import configure_logging
from kuberay.reconcile import ByObject, CacheSyncTimeout, LeaderElectionLost, Manager
from kuberay.reconcile.options import ControllerOptions, ManagerOptions
from kuberay.webhooks.switch import webhook_listen, webhooks_enabled

log = structlog.get_logger("kuberay.operator")

USER_AGENT = "kuberay-operator/nightly"

# KubeRay caches only the pods and jobs it manages (main.go / managercache). Secrets
# too: the only one the operator reads is the token-auth Secret it creates, labelled
# ray.io/cluster, so user Secrets (and their data) never enter the cache.
CACHE_SCOPE = {
    ("v1", "Pod"): ByObject(
        label_selector=f"{C.RAY_NODE_TYPE_LABEL_KEY} in (head,worker,redis-cleanup)"
    ),
    ("batch/v1", "Job"): ByObject(label_selector="app.kubernetes.io/created-by=kuberay-operator"),
    ("v1", "Secret"): ByObject(label_selector=C.RAY_CLUSTER_LABEL_KEY),
}


def build_manager(cfg: OperatorConfig, client: Client) -> Manager:
    """The Manager for ``cfg`` (controllers not yet registered)."""
    options = ManagerOptions(
        namespaces=cfg.watch_namespaces or None,
        by_object=CACHE_SCOPE,
        leader_election=cfg.enable_leader_election,
        leader_election_id=LEADER_ELECTION_ID,
        leader_election_namespace=cfg.leader_election_namespace or None,
        metrics_bind_address=cfg.metrics_addr,
        health_probe_bind_address=cfg.probe_addr,
        controller=ControllerOptions(
            max_concurrent_reconciles=cfg.reconcile_concurrency,
            cache_sync_timeout=cfg.cache_sync_timeout,
        ),
    )
    return Manager(client, options)


def register_controllers(
    mgr: Manager,
    cfg: OperatorConfig,
    gates: FeatureGate,
    openshift_api_groups: frozenset[str] = frozenset(),
    cert_manager: bool = False,
) -> list[str]:
    """Register every controller the gates allow; returns their names."""
    from kuberay.controllers.setup import register_all

    return register_all(
        mgr,
        cfg.controller_config(),
        gates,
        openshift_api_groups=openshift_api_groups,
        cert_manager_available=cert_manager,
    )


async def start_webhooks(
    mgr: Manager, cfg: OperatorConfig, gates: FeatureGate, cert_dir: str, port: int
) -> Any:
    """Serve the validating webhooks and node label delivery's two mutating ones (reading
    RayClusters and Ray pods from the manager's cache) on ``port``."""
    from kuberay.webhooks.pods import BINDING_WEBHOOK_COMPONENT, CachedReads, PodWebhooks
    from kuberay.webhooks.server import maybe_start_webhook_server

    allowed = frozenset(cfg.allowed_node_labels)
    pods = PodWebhooks(
        CachedReads(mgr.client, mgr.cache),
        mgr.event_recorder(BINDING_WEBHOOK_COMPONENT),
        gates.enabled,
        allowed,
    )
    return await maybe_start_webhook_server(
        gates.enabled, port=port, cert_dir=cert_dir, allowed_node_labels=allowed, pods=pods
    )


async def run(cfg: OperatorConfig, gates: FeatureGate) -> int:
    """Run the operator until stopped; the process exit code."""
    try:
        client = await Client.from_env(
            cfg.kubeconfig or None, qps=cfg.qps, burst=cfg.burst, user_agent=USER_AGENT
        )
    except (KubeError, OSError, Exception) as exc:  # kubeconfig parse errors are untyped
        log.error("cannot configure the Kubernetes client", error=str(exc) or repr(exc))
        return 1
    mgr: Manager | None = None
    try:
        mgr = build_manager(cfg, client)
        # /metrics and the probes answer from here on (readyz fails until the caches
        # synced), before the controllers are imported and the cluster is probed.
        await mgr.start_servers()
        # Imported only now, and only what the configuration uses.
        from kuberay.controllers.raycluster.setup import detect_openshift_api_groups

        try:
            openshift = await detect_openshift_api_groups(client)
        except (KubeError, OSError) as exc:
            log.error("unable to detect cluster type (OpenShift vs Kubernetes)", error=str(exc))
            return 1
        cert_manager = False
        if gates.enabled(RAY_CLUSTER_MTLS):
            from kuberay.controllers.mtls.setup import cert_manager_available

            try:
                cert_manager = await cert_manager_available(client)
            except (KubeError, OSError) as exc:
                log.error("unable to discover the cert-manager API", error=str(exc))
                return 1
            if not cert_manager:
                log.info(
                    "cert-manager API not found; mTLS controller disabled (RayClusters with "
                    "tlsOptions will be refused)"
                )
        if gates.enabled(KUBERNETES_WAS):
            from kuberay.controllers.batchscheduler.kubernetes_was import unavailable_reason

            try:
                reason = await unavailable_reason(client)
            except (KubeError, OSError) as exc:
                reason = f"unable to discover the scheduling.k8s.io API: {exc}"
            if reason:
                log.error("unable to create the batch scheduler", error=reason)
                return 1
        names = register_controllers(mgr, cfg, gates, openshift, cert_manager)
        log.info(
            "starting operator",
            controllers=names,
            feature_gates=gates.as_dict(),
            watch_namespaces=cfg.watch_namespaces or "all",
            leader_election=cfg.enable_leader_election,
        )
        webhook = None
        cert_dir, port = webhook_listen()
        try:
            if webhooks_enabled():
                webhook = await start_webhooks(mgr, cfg, gates, cert_dir, port)
        except OSError as exc:
            log.error(
                "cannot serve webhooks (ENABLE_WEBHOOKS=true): serving certificate missing "
                f"or unreadable in {cert_dir}, or port {port} taken",
                error=str(exc),
            )
            return 1
        if webhook is not None:
            log.info("serving webhooks", port=webhook.port)
        try:
            await mgr.run()
        finally:
            if webhook is not None:
                await webhook.stop()
    except LeaderElectionLost as exc:
        log.error("leader election lost; exiting", error=str(exc))
        return 1
    except CacheSyncTimeout as exc:
        log.error("cannot start; exiting (see --cache-sync-timeout)", error=str(exc))
        return 1
    except ValueError as exc:
        log.error("invalid operator setup", error=str(exc))
        return 2
    finally:
        if mgr is not None:
            await mgr.stop_servers()
        await client.close()
    return 0


def main(argv: list[str] | None = None, notes: Sequence[str] = ()) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), configure logging, log ``notes`` (what
    :func:`~kuberay.cmd.lean_imports.slim_process` reported) and run; the exit code."""
    gates = new_feature_gate()
    try:
        cfg, warnings = parse_config(list(sys.argv[1:] if argv is None else argv), gates)
        cfg.webhooks_served = webhooks_enabled()
        webhook_listen()  # a bad port setting stops the operator here, with one line
        refuse_unimplemented(cfg, gates)
        configure_logging(
            cfg.log_stdout_encoder,
            level=cfg.log_level,
            file_path=cfg.log_file_path or None,
            file_encoder=cfg.log_file_encoder,
            keys=cfg.log_keys,
            file_max_size_mb=cfg.log_file_max_size_mb,
            file_max_backups=cfg.log_file_max_backups,
            file_max_age_days=cfg.log_file_max_age_days,
        )
    except ConfigError as exc:
        print(f"kuberay-operator: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"kuberay-operator: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        log.warning(note)
    for warning in warnings:
        log.warning(warning)
    code: Any = asyncio.run(run(cfg, gates))
    return int(code)
