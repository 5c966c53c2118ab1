"""kuberay.reconcile.exposition: the operator's /metrics carries the series Go's
client_golang would (no ``_created``), without switching prometheus-client off for the rest
of the process."""

from __future__ import annotations

import subprocess
import sys

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Summary
from prometheus_client.parser import text_string_to_metric_families

from kuberay.reconcile.exposition import go_exposition


def _registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("jobs", "jobs done", ["result"], registry=registry).labels("ok").inc(3)
    Histogram("wait_seconds", "wait", registry=registry).observe(0.2)
    Summary("size_bytes", "size", registry=registry).observe(10)
    Gauge("last_created", "a gauge whose own name ends in _created", registry=registry).set(7)
    return registry


def test_no_created_series_and_every_other_sample_kept() -> None:
    registry = _registry()
    text = go_exposition(registry).decode()
    samples = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
    assert not [name for name in samples if name.endswith("_created") and name != "last_created"]
    assert samples["jobs_total"] == 3
    assert samples["wait_seconds_count"] == 1 and samples["size_bytes_sum"] == 10
    assert samples["last_created"] == 7  # a gauge's own name is not a created series


def test_importing_the_operators_metrics_switches_nothing_process_wide() -> None:
    # A fresh interpreter: the library user's own registry keeps prometheus-client's default.
    code = (
        "import kuberay.reconcile.metrics, kuberay.reconcile.httpserver\n"
        "from prometheus_client import CollectorRegistry, Counter, generate_latest\n"
        "r = CollectorRegistry(); Counter('mine', 'h', registry=r).inc()\n"
        "print('mine_created' in generate_latest(r).decode())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "True"
