"""The operator's /metrics after webhook calls carries controller-runtime's webhook and
certificate-watcher series: names, help, labels and buckets as KubeRay exports them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import prometheus_client
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kuberay.reconcile.httpserver import Server, metrics_app
from kuberay.testing.pki import TinyCA
from kuberay.webhooks import RAYCLUSTER_WEBHOOK, RAYJOB_WEBHOOK, WEBHOOKS, start_webhook_server
from tests.unit.webhooks.test_webhooks_server import _post, _review, _write_pair

# controller-runtime v0.24: pkg/webhook/internal/metrics, pkg/certwatcher/metrics.
CR = "controller_runtime_webhook_"
HELP = {
    f"{CR}requests": "Total number of admission requests by HTTP status code.",
    f"{CR}requests_in_flight": "Current number of admission requests being served.",
    f"{CR}latency_seconds": "Histogram of the latency of processing admission requests",
    "certwatcher_read_certificate": "Total number of certificate reads",
    "certwatcher_read_certificate_errors": "Total number of certificate read errors",
}
# prometheus.ExponentialBuckets(10e-9, 10, 12), as Go writes them.
LE = [
    "1e-08", "1e-07", "1e-06", "9.999999999999999e-06", "9.999999999999999e-05",
    "0.001", "0.01", "0.1", "1.0", "10.0", "100.0", "1000.0", "+Inf",
]  # fmt: skip


@pytest.fixture(scope="module")
def ca() -> TinyCA:
    return TinyCA("webhook-metrics-ca")


@pytest.fixture
async def metrics_url() -> AsyncIterator[str]:
    """The operator's metrics endpoint: the default registry over HTTP."""
    server = Server(metrics_app(prometheus_client.REGISTRY), "127.0.0.1", 0)
    await server.start()
    try:
        yield f"http://127.0.0.1:{server.port}/metrics"
    finally:
        await server.stop()


async def scrape(url: str) -> tuple[str, dict[str, Any]]:
    """The raw text and its families by name."""
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        assert resp.status == 200
        text = await resp.text()
    return text, {f.name: f for f in text_string_to_metric_families(text)}


def value(families: dict[str, Any], sample: str, **labels: str) -> float:
    """A sample's value (0 when absent)."""
    for family in families.values():
        for s in family.samples:
            if s.name == sample and s.labels == labels:
                return float(s.value)
    return 0.0


async def test_webhook_calls_show_on_metrics_with_controller_runtimes_labels(
    ca: TinyCA, tmp_path: Path, metrics_url: str
) -> None:
    _, before = await scrape(metrics_url)
    cert, key = _write_pair(ca, tmp_path)
    server = await start_webhook_server("127.0.0.1", 0, cert, key, None, reload_interval=None)
    try:
        cluster = RAYCLUSTER_WEBHOOK.path
        status, _ = await _post(server, ca, cluster, orjson.dumps(_review("RayCluster", "a")))
        assert status == 200
        status, _ = await _post(server, ca, RAYJOB_WEBHOOK.path, b"{not json")
        assert status == 400
        text, after = await scrape(metrics_url)
    finally:
        await server.stop()

    for family, help_ in HELP.items():
        assert after[family].documentation == help_, family
    total = "controller_runtime_webhook_requests_total"

    def delta(sample: str, **labels: str) -> float:
        return value(after, sample, **labels) - value(before, sample, **labels)

    assert delta(total, webhook=cluster, code="200") == 1
    assert delta(total, webhook=RAYJOB_WEBHOOK.path, code="400") == 1
    # Every served path has its 200 and 500 series and an in-flight gauge, at rest 0.
    for webhook in WEBHOOKS:
        for code in ("200", "500"):
            assert f'{total}{{code="{code}",webhook="{webhook.path}"}}' in text
        assert value(after, f"{total[:-6]}_in_flight", webhook=webhook.path) == 0
        assert (
            f'controller_runtime_webhook_requests_in_flight{{webhook="{webhook.path}"}} 0.0' in text
        )
    latency = "controller_runtime_webhook_latency_seconds"
    assert delta(f"{latency}_count", webhook=cluster) == 1
    les = [
        s.labels["le"]
        for s in after[latency].samples
        if s.name.endswith("_bucket") and s.labels["webhook"] == cluster
    ]
    assert les == LE
    assert {frozenset(s.labels) - {"le"} for s in after[latency].samples} == {
        frozenset({"webhook"})
    }
    # Loading the serving certificate at start was one read, without error.
    assert delta("certwatcher_read_certificate_total") == 1
    assert delta("certwatcher_read_certificate_errors_total") == 0
    assert "certwatcher_read_certificate_total{" not in text  # no labels


async def test_certificate_reads_and_errors_are_counted(
    ca: TinyCA, tmp_path: Path, metrics_url: str
) -> None:
    _, before = await scrape(metrics_url)
    cert, key = _write_pair(ca, tmp_path)
    server = await start_webhook_server("127.0.0.1", 0, cert, key, None, reload_interval=None)
    try:
        server.reload_certificate()  # a poll: files unchanged
        key.unlink()
        server.reload_certificate()  # a poll: key gone
        with pytest.raises(OSError):
            await start_webhook_server("127.0.0.1", 0, cert, key, None, reload_interval=None)
    finally:
        await server.stop()
    _, after = await scrape(metrics_url)
    reads = "certwatcher_read_certificate_total"
    errors = "certwatcher_read_certificate_errors_total"
    assert value(after, reads) - value(before, reads) == 4
    assert value(after, errors) - value(before, errors) == 2
