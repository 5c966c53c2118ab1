"""controller-runtime's admission-webhook metrics (``pkg/webhook/internal/metrics``,
v0.24), per webhook path, as KubeRay's /metrics exports them.

* ``controller_runtime_webhook_requests_total{webhook, code}``: requests by HTTP
  status code; the ``200`` and ``500`` series of every served path exist from start;
* ``controller_runtime_webhook_requests_in_flight{webhook}``: requests being served;
* ``controller_runtime_webhook_latency_seconds{webhook}``: a histogram with Go's
  ``ExponentialBuckets(10e-9, 10, 12)`` (10 ns to 1000 s).

``webhook`` is the path (``/validate-ray-io-v1-raycluster``). The families are
registered on first use (:func:`instrument`), i.e. when a webhook server starts:
Go's exposition leaves out label-vectors without series, so an operator with
webhooks off shows none of them. The certificate-read counters live in
:mod:`kuberay.reconcile.metrics` (always exported).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable

import prometheus_client
from aiohttp import web
from prometheus_client import Counter, Gauge, Histogram

__all__ = ["LATENCY_BUCKETS", "WebhookMetrics", "instrument", "webhook_metrics"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    """prometheus.ExponentialBuckets: the same float products, hence the same ``le``."""
    out = []
    for _ in range(count):
        out.append(start)
        start *= factor
    return tuple(out)


LATENCY_BUCKETS = _exponential(10e-9, 10, 12)


class WebhookMetrics:
    """The three webhook families, registered in ``registry``."""

    def __init__(self, registry: prometheus_client.CollectorRegistry) -> None:
        self.latency = Histogram(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            ["webhook"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.requests = Counter(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code.",
            ["webhook", "code"],
            registry=registry,
        )
        self.in_flight = Gauge(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            ["webhook"],
            registry=registry,
        )


@functools.cache
def webhook_metrics() -> WebhookMetrics:
    """The process-wide families, registered in the default registry on first call."""
    return WebhookMetrics(prometheus_client.REGISTRY)


def instrument(path: str, handler: Handler, metrics: WebhookMetrics | None = None) -> Handler:
    """``handler`` counted, timed and gauged under ``webhook=path``, as
    controller-runtime's InstrumentedHook does (codes ``200``/``500`` pre-created). A
    handler that raises counts as ``500`` (what aiohttp answers)."""
    m = metrics or webhook_metrics()
    m.requests.labels(webhook=path, code="200")
    m.requests.labels(webhook=path, code="500")
    gauge = m.in_flight.labels(webhook=path)
    latency = m.latency.labels(webhook=path)

    async def instrumented(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        gauge.inc()
        code = 500
        try:
            response = await handler(request)
            code = response.status
            return response
        except web.HTTPException as exc:
            code = exc.status
            raise
        finally:
            gauge.dec()
            m.requests.labels(webhook=path, code=str(code)).inc()
            latency.observe(time.perf_counter() - started)

    return instrumented
