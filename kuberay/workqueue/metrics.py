"""Prometheus instrumentation for the work queues.

The metric names, help texts, labels and buckets are controller-runtime's (v0.24,
``pkg/internal/metrics/workqueue.go``) so existing dashboards and alerts keep
working.  Collectors are created once per :class:`~prometheus_client.CollectorRegistry`
(registering the same name twice on one registry is an error in prometheus-client),
and every named queue records into its own ``{name, controller}`` label set, both
the queue's name (a controller's queue is named after the controller).
``workqueue_depth`` has controller-runtime's third label, ``priority``; these
queues have no priorities, so it is always ``"0"`` (controller-runtime's priority
queue also uses ``"-100"``, for items from an informer's initial list).
``workqueue_retries_total`` counts adds with a non-zero delay, as controller-runtime's
priority queue does.  A queue without a name records nothing.

``unfinished_work_seconds`` and ``longest_running_processor_seconds`` are computed
when the registry is scraped, from the start times of the items currently being
processed, so they are exact without a background updater task.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from threading import Lock
from typing import Protocol

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from .clock import Clock

__all__ = [
    "DURATION_BUCKETS",
    "METRIC_NAMES",
    "NoopQueueMetrics",
    "PrometheusQueueMetrics",
    "QueueMetrics",
    "new_queue_metrics",
    "register_metrics",
]

#: Exponential buckets 1e-8 s .. 1e3 s (factor 10, 12 buckets), as in client-go.
DURATION_BUCKETS: tuple[float, ...] = tuple(float(f"1e{exp}") for exp in range(-8, 4))

_LABELS = ("name", "controller")
_DEPTH_LABELS = ("name", "controller", "priority")
#: The ``priority`` label of ``workqueue_depth`` (these queues have no priorities).
DEFAULT_PRIORITY = "0"

#: Names of the exposed metric families (counters are exposed with ``_total``).
METRIC_NAMES: tuple[str, ...] = (
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_queue_duration_seconds",
    "workqueue_work_duration_seconds",
    "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds",
    "workqueue_retries_total",
)


class QueueMetrics(Protocol):
    """Hooks a queue calls at each state transition."""

    def add(self, item: Hashable) -> None:
        """An item became dirty (a real insertion, not a deduplicated add)."""
        ...

    def get(self, item: Hashable) -> None:
        """An item was handed to a worker."""
        ...

    def done(self, item: Hashable) -> None:
        """A worker finished processing an item."""
        ...

    def retry(self) -> None:
        """An add with a non-zero delay was requested."""
        ...


class NoopQueueMetrics:
    """Metrics sink for unnamed queues: records nothing."""

    def add(self, item: Hashable) -> None:
        """Do nothing."""

    def get(self, item: Hashable) -> None:
        """Do nothing."""

    def done(self, item: Hashable) -> None:
        """Do nothing."""

    def retry(self) -> None:
        """Do nothing."""


@dataclass(frozen=True)
class _Collectors:
    depth: Gauge
    adds: Counter
    queue_duration: Histogram
    work_duration: Histogram
    unfinished_work: Gauge
    longest_running: Gauge
    retries: Counter


_registered: weakref.WeakKeyDictionary[CollectorRegistry, _Collectors] = weakref.WeakKeyDictionary()
_registered_lock = Lock()


def register_metrics(registry: CollectorRegistry | None = None) -> None:
    """Register the workqueue metric families on ``registry`` (default: global).

    Idempotent: calling it again for the same registry is a no-op.  Queues call it
    implicitly; call it eagerly to expose the families before any queue exists.
    """
    _collectors_for(REGISTRY if registry is None else registry)


def _collectors_for(registry: CollectorRegistry) -> _Collectors:
    with _registered_lock:
        found = _registered.get(registry)
        if found is None:
            found = _create_collectors(registry)
            _registered[registry] = found
        return found


def _create_collectors(registry: CollectorRegistry) -> _Collectors:
    return _Collectors(
        depth=Gauge(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            _DEPTH_LABELS,
            registry=registry,
        ),
        adds=Counter(
            "workqueue_adds_total",
            "Total number of adds handled by workqueue",
            _LABELS,
            registry=registry,
        ),
        queue_duration=Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            _LABELS,
            buckets=DURATION_BUCKETS,
            registry=registry,
        ),
        work_duration=Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            _LABELS,
            buckets=DURATION_BUCKETS,
            registry=registry,
        ),
        unfinished_work=Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't "
            "been observed by work_duration. Large values indicate stuck threads. "
            "One can deduce the number of stuck threads by observing the rate at "
            "which this increases.",
            _LABELS,
            registry=registry,
        ),
        longest_running=Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            _LABELS,
            registry=registry,
        ),
        retries=Counter(
            "workqueue_retries_total",
            "Total number of items added to the workqueue with a non-zero delay "
            "(rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
            _LABELS,
            registry=registry,
        ),
    )


class PrometheusQueueMetrics:
    """Records one named queue's transitions into the shared collectors."""

    def __init__(self, name: str, clock: Clock, registry: CollectorRegistry) -> None:
        """Bind to ``registry``'s collectors under labels ``name=controller=name``."""
        collectors = _collectors_for(registry)
        self._clock = clock
        self._depth = collectors.depth.labels(name, name, DEFAULT_PRIORITY)
        self._adds = collectors.adds.labels(name, name)
        self._queue_duration = collectors.queue_duration.labels(name, name)
        self._work_duration = collectors.work_duration.labels(name, name)
        self._retries = collectors.retries.labels(name, name)
        # item -> time it became dirty (cleared when it is handed out).
        self._add_times: dict[Hashable, float] = {}
        # item -> time a worker got it (cleared when it is done).
        self._processing_start: dict[Hashable, float] = {}
        # The scrape-time callbacks must not keep the queue alive forever.
        ref = weakref.ref(self)
        collectors.unfinished_work.labels(name, name).set_function(
            lambda: _call_or_zero(ref, PrometheusQueueMetrics.unfinished_work_seconds)
        )
        collectors.longest_running.labels(name, name).set_function(
            lambda: _call_or_zero(ref, PrometheusQueueMetrics.longest_running_seconds)
        )

    def add(self, item: Hashable) -> None:
        """Count the add, grow the depth, remember when the item became dirty."""
        self._adds.inc()
        self._depth.inc()
        self._add_times.setdefault(item, self._clock.now())

    def get(self, item: Hashable) -> None:
        """Shrink the depth, observe queue latency, start the work timer."""
        now = self._clock.now()
        self._depth.dec()
        self._processing_start[item] = now
        added = self._add_times.pop(item, None)
        if added is not None:
            self._queue_duration.observe(max(0.0, now - added))

    def done(self, item: Hashable) -> None:
        """Observe how long the item was processed."""
        started = self._processing_start.pop(item, None)
        if started is not None:
            self._work_duration.observe(max(0.0, self._clock.now() - started))

    def retry(self) -> None:
        """Count a retry."""
        self._retries.inc()

    def unfinished_work_seconds(self) -> float:
        """Sum of the ages of all items currently being processed."""
        now = self._clock.now()
        return sum(max(0.0, now - t) for t in self._processing_start.values())

    def longest_running_seconds(self) -> float:
        """Age of the oldest item currently being processed (0 if none)."""
        now = self._clock.now()
        return max((max(0.0, now - t) for t in self._processing_start.values()), default=0.0)


def _call_or_zero(
    ref: weakref.ref[PrometheusQueueMetrics],
    method: Callable[[PrometheusQueueMetrics], float],
) -> float:
    target = ref()
    return 0.0 if target is None else method(target)


def new_queue_metrics(
    name: str | None, clock: Clock, registry: CollectorRegistry | None
) -> QueueMetrics:
    """Return Prometheus-backed hooks for a named queue, no-op hooks otherwise."""
    if not name:
        return NoopQueueMetrics()
    return PrometheusQueueMetrics(name, clock, REGISTRY if registry is None else registry)
