"""The RayCluster operator's /metrics carries KubeRay's series: the names, label names
and buckets controller-runtime v0.24 and KubeRay's client-go metrics export, under the
controller name controller-runtime derives from the kind (``raycluster``)."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from kuberay.kube import Client
from kuberay.reconcile.exposition import go_exposition
from kuberay.reconcile.leaderelection import LeaderElector
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator
from tests.integration.raycluster.helpers import events_for, raycluster

CONTROLLER = "raycluster"

#: family -> label names of its samples (histograms: of the _bucket samples, without le).
KUBERAY_SERIES: dict[str, frozenset[str]] = {
    "controller_runtime_reconcile": frozenset({"controller", "result"}),
    "controller_runtime_reconcile_errors": frozenset({"controller"}),
    "controller_runtime_terminal_reconcile_errors": frozenset({"controller"}),
    "controller_runtime_reconcile_panics": frozenset({"controller"}),
    "controller_runtime_reconcile_timeouts": frozenset({"controller"}),
    "controller_runtime_reconcile_time_seconds": frozenset({"controller"}),
    "controller_runtime_max_concurrent_reconciles": frozenset({"controller"}),
    "controller_runtime_active_workers": frozenset({"controller"}),
    "workqueue_depth": frozenset({"name", "controller", "priority"}),
    "workqueue_adds": frozenset({"name", "controller"}),
    "workqueue_queue_duration_seconds": frozenset({"name", "controller"}),
    "workqueue_work_duration_seconds": frozenset({"name", "controller"}),
    "workqueue_unfinished_work_seconds": frozenset({"name", "controller"}),
    "workqueue_longest_running_processor_seconds": frozenset({"name", "controller"}),
    "workqueue_retries": frozenset({"name", "controller"}),
    "rest_client_requests": frozenset({"code", "method", "host"}),
    "rest_client_request_duration_seconds": frozenset({"verb", "host"}),
    "rest_client_rate_limiter_duration_seconds": frozenset({"verb", "host"}),
    "rest_client_request_size_bytes": frozenset({"verb", "host"}),
    "rest_client_response_size_bytes": frozenset({"verb", "host"}),
    # Only after a retried request / a DNS lookup (the test apiserver is an IP).
    "rest_client_request_retries": frozenset({"code", "verb", "host"}),
    "rest_client_dns_resolution_duration_seconds": frozenset({"host"}),
    "leader_election_master_status": frozenset({"name"}),
    # controller-runtime's certificate watcher: unlabelled, exported (at 0) even with
    # webhooks off; the webhook families only exist once webhooks are served.
    "certwatcher_read_certificate": frozenset(),
    "certwatcher_read_certificate_errors": frozenset(),
}
#: Once any webhook server has run in this process (the registry is the process-wide one, as
#: in Go), controller-runtime's webhook families are there too: KubeRay's names and labels.
WEBHOOK_SERIES: dict[str, frozenset[str]] = {
    "controller_runtime_webhook_requests": frozenset({"webhook", "code"}),
    "controller_runtime_webhook_requests_in_flight": frozenset({"webhook"}),
    "controller_runtime_webhook_latency_seconds": frozenset({"webhook"}),
}
PREFIXES = ("controller_runtime_", "workqueue_", "rest_client_", "leader_election_", "certwatcher_")

LATENCY = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0]
SIZES: list[float] = [64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216]
BUCKETS: dict[str, list[float]] = {
    "controller_runtime_reconcile_time_seconds": [
        *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5),
        *(0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5),
        *(6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60),
    ],
    "workqueue_queue_duration_seconds": [10e-9 * 10**i for i in range(12)],
    "workqueue_work_duration_seconds": [10e-9 * 10**i for i in range(12)],
    "rest_client_request_duration_seconds": LATENCY,
    "rest_client_rate_limiter_duration_seconds": LATENCY,
    "rest_client_request_size_bytes": SIZES,
    "rest_client_response_size_bytes": SIZES,
}


def _parse(text: str) -> dict[str, list[Any]]:
    return {
        f.name: list(f.samples)
        for f in text_string_to_metric_families(text)
        if f.name.startswith(PREFIXES)
    }


async def test_metrics_after_a_reconcile_are_kuberays(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    # A leader elector that never campaigns: a standby's gauge reads 0 (client-go).
    LeaderElector(kclient, namespace, "wire-metrics-lease")
    async with start_operator(kclient, namespace) as op:
        await kclient.create(raycluster("wire", namespace, replicas=1))

        def scraped() -> dict[str, list[Any]]:
            # What the /metrics endpoint serves: the manager's registry, as text.
            families = _parse(go_exposition(op.manager.registry).decode())
            done = [
                s
                for s in families.get("controller_runtime_reconcile", [])
                if s.labels.get("controller") == CONTROLLER and s.value > 0
            ]
            # Series appear once first observed (labelled histograms, the Event writer's
            # requests): wait until every family is there, then pin the exact set below.
            return families if done and set(KUBERAY_SERIES) <= set(families) else {}

        families = await eventually(
            scraped, timeout=60, message="a counted reconcile and every KubeRay family"
        )

        async def events() -> bool:
            return bool(await events_for(kclient, namespace, "wire"))

        await eventually(events, timeout=60, message="the reconcile's Events")

    # Exactly KubeRay's families (Go exposes no *_created series), plus the webhook ones
    # when an earlier test in this process served webhooks.
    webhook = set(families) - set(KUBERAY_SERIES)
    assert webhook in (set(), set(WEBHOOK_SERIES)), set(families) ^ set(KUBERAY_SERIES)
    expected = {**KUBERAY_SERIES, **WEBHOOK_SERIES}
    for family, samples in families.items():
        for s in samples:
            labels = set(s.labels) - {"le"}
            assert labels == expected[family], (family, s)
            if "controller" in labels:
                assert labels.isdisjoint({"name"}) or s.labels["name"] == s.labels["controller"]
    ours = {
        family: [s for s in samples if s.labels.get("controller") == CONTROLLER]
        for family, samples in families.items()
        if family.startswith(("controller_runtime_", "workqueue_")) and family not in WEBHOOK_SERIES
    }
    for family, samples in ours.items():
        assert samples, f"no {family} series for controller {CONTROLLER!r}"
    # controller-runtime pre-creates every result of reconcile_total at start.
    results = {s.labels["result"] for s in ours["controller_runtime_reconcile"]}
    assert results == {"success", "error", "requeue", "requeue_after"}
    assert {s.labels["priority"] for s in ours["workqueue_depth"]} == {"0"}
    for family, bounds in BUCKETS.items():
        les = {
            float(s.labels["le"])
            for s in families[family]
            if s.name.endswith("_bucket") and s.labels.get("le") != "+Inf"
        }
        assert sorted(les) == sorted(float(b) for b in bounds), family
    host = kclient.host.split("://", 1)[1]
    verbs = {
        s.labels["verb"]
        for s in families["rest_client_request_duration_seconds"]
        if s.labels["host"] == host
    }
    assert {"GET", "POST"} <= verbs, verbs  # HTTP methods, as client-go labels them
    leader = families["leader_election_master_status"]
    assert any(s.labels["name"] == "wire-metrics-lease" and s.value == 0 for s in leader)
