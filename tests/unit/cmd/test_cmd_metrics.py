"""kuberay_* metric names and labels, and their registration only with --enable-metrics."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from kuberay.cmd.config import parse_config, refuse_unimplemented
from kuberay.controllers.raycluster.metrics import RayClusterMetrics
from kuberay.controllers.setup import register_all
from kuberay.featuregates.kuberay_gates import new_feature_gate
from kuberay.kube import Client
from kuberay.reconcile import Manager
from kuberay.reconcile.options import ManagerOptions


class FakeCache:
    def __init__(self, clusters: list[dict[str, Any]]) -> None:
        self.clusters = clusters

    def list(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        return self.clusters


def cluster(name: str, provisioned: bool, owner: str | None = None) -> dict[str, Any]:
    labels = {"ray.io/originated-from-crd": owner} if owner else {}
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "labels": labels,
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "status": {
            "conditions": [
                {"type": "RayClusterProvisioned", "status": "True" if provisioned else "False"}
            ]
        },
    }


def test_cluster_metrics_names_and_labels() -> None:
    import datetime as dt

    registry = CollectorRegistry()
    metrics = RayClusterMetrics(
        FakeCache([cluster("a", True), cluster("b", False, "RayJob")]),  # type: ignore[arg-type]
        registry,
    )
    base_a = {"name": "a", "namespace": "ns", "uid": "uid-a"}
    base_b = {"name": "b", "namespace": "ns", "uid": "uid-b"}
    assert registry.get_sample_value("kuberay_cluster_info", {**base_a, "owner_kind": "None"}) == 1
    assert (
        registry.get_sample_value("kuberay_cluster_info", {**base_b, "owner_kind": "RayJob"}) == 1
    )
    assert (
        registry.get_sample_value(
            "kuberay_cluster_condition_provisioned", {**base_a, "condition": "true"}
        )
        == 1
    )
    assert (
        registry.get_sample_value(
            "kuberay_cluster_condition_provisioned", {**base_b, "condition": "false"}
        )
        == 1
    )
    later = dt.datetime(2026, 1, 1, 0, 1, 30, tzinfo=dt.UTC)
    metrics.observe_provisioned(cluster("a", True), now=later)
    assert registry.get_sample_value("kuberay_cluster_provisioned_duration_seconds", base_a) == 90
    metrics.forget("ns", "a")
    assert registry.get_sample_value("kuberay_cluster_provisioned_duration_seconds", base_a) is None


class _Cfg:
    host = "https://127.0.0.1:1"
    ssl_ca_cert = None
    cert_file = None
    key_file = None
    verify_ssl = False


def _manager(registry: CollectorRegistry) -> Manager:
    return Manager(
        Client(_Cfg(), qps=0),
        ManagerOptions(
            metrics_bind_address="0", health_probe_bind_address="0", handle_signals=False
        ),
        registry=registry,
    )


async def test_kuberay_metrics_registered_only_when_enabled() -> None:
    for flag, present in (([], False), (["--enable-metrics"], True)):
        gates = new_feature_gate()
        cfg, _ = parse_config(flag, gates)
        registry = CollectorRegistry()
        names = register_all(_manager(registry), cfg.controller_config(), gates, env={})
        assert names == ["raycluster", "rayjob", "rayservice"]
        families = {m.name for m in registry.collect()}
        assert ("kuberay_cluster_provisioned_duration_seconds" in families) is present
        assert ("kuberay_cluster_info" in families) is present
        assert ("kuberay_job_execution_duration_seconds" in families) is present
        assert ("kuberay_job_info" in families) is present
        assert ("kuberay_service_info" in families) is present
        assert ("kuberay_service_condition_ready" in families) is present


async def test_raycronjob_gate_is_accepted_and_registers_its_controller() -> None:
    for flags, names in (
        ([], ["raycluster", "rayjob", "rayservice"]),
        (["--feature-gates=RayCronJob=true"], ["raycluster", "rayjob", "rayservice", "raycronjob"]),
    ):
        gates = new_feature_gate()
        cfg, _ = parse_config(flags, gates)
        refuse_unimplemented(cfg, gates)  # raises ConfigError for parts this build lacks
        mgr = _manager(CollectorRegistry())
        assert register_all(mgr, cfg.controller_config(), gates, env={}) == names


async def test_security_gates_register_their_controllers() -> None:
    """NetworkPolicy with its gate; mTLS with its gate only when cert-manager is served."""
    cases = (
        ([], True, ["raycluster", "rayjob", "rayservice"]),
        (
            ["--feature-gates=RayClusterNetworkPolicy=true"],
            False,
            ["raycluster", "rayjob", "rayservice", "networkpolicy"],
        ),
        (["--feature-gates=RayClusterMTLS=true"], False, ["raycluster", "rayjob", "rayservice"]),
        (
            ["--feature-gates=RayClusterMTLS=true"],
            True,
            ["raycluster", "rayjob", "rayservice", "raycluster-mtls"],
        ),
    )
    for flags, cert_manager, names in cases:
        gates = new_feature_gate()
        cfg, _ = parse_config(flags, gates)
        refuse_unimplemented(cfg, gates)
        mgr = _manager(CollectorRegistry())
        got = register_all(
            mgr, cfg.controller_config(), gates, env={}, cert_manager_available=cert_manager
        )
        assert got == names, (flags, cert_manager)
