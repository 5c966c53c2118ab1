"""Prometheus metrics recorded by named queues, read back from a fresh registry."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from kuberay.workqueue import (
    FakeClock,
    ItemExponentialFailureRateLimiter,
    Queue,
    RateLimitingQueue,
    register_metrics,
)
from kuberay.workqueue.metrics import METRIC_NAMES


async def settle(rounds: int = 20) -> None:
    """Let every runnable task run until it blocks again."""
    for _ in range(rounds):
        await asyncio.sleep(0)


def sample(registry: CollectorRegistry, metric: str, name: str = "q", **extra: str) -> float:
    if metric == "workqueue_depth":  # controller-runtime's third label (no priorities here)
        extra = {"priority": "0", **extra}
    value = registry.get_sample_value(metric, {"name": name, "controller": name, **extra})
    return 0.0 if value is None else value


async def test_adds_and_depth_ignore_deduplicated_adds() -> None:
    registry = CollectorRegistry()
    q: Queue[str] = Queue(name="q", clock=FakeClock(), registry=registry)
    q.add("a")
    q.add("a")
    q.add("b")
    assert sample(registry, "workqueue_adds_total") == 2
    assert sample(registry, "workqueue_depth") == 2
    await q.get()
    assert sample(registry, "workqueue_depth") == 1


async def test_readd_during_processing_counts_as_one_add() -> None:
    registry = CollectorRegistry()
    q: Queue[str] = Queue(name="q", clock=FakeClock(), registry=registry)
    q.add("a")
    await q.get()
    q.add("a")
    q.add("a")
    assert sample(registry, "workqueue_adds_total") == 2
    assert sample(registry, "workqueue_depth") == 1
    q.done("a")
    await q.get()
    assert sample(registry, "workqueue_depth") == 0


async def test_queue_and_work_durations_use_the_clock() -> None:
    registry = CollectorRegistry()
    clock = FakeClock()
    q: Queue[str] = Queue(name="q", clock=clock, registry=registry)
    q.add("a")
    clock.advance(2.0)
    await q.get()
    assert sample(registry, "workqueue_queue_duration_seconds_count") == 1
    assert sample(registry, "workqueue_queue_duration_seconds_sum") == pytest.approx(2.0)
    assert sample(registry, "workqueue_queue_duration_seconds_bucket", le="1.0") == 0
    assert sample(registry, "workqueue_queue_duration_seconds_bucket", le="10.0") == 1
    clock.advance(0.5)
    q.done("a")
    assert sample(registry, "workqueue_work_duration_seconds_count") == 1
    assert sample(registry, "workqueue_work_duration_seconds_sum") == pytest.approx(0.5)


async def test_unfinished_and_longest_running_are_computed_on_scrape() -> None:
    registry = CollectorRegistry()
    clock = FakeClock()
    q: Queue[str] = Queue(name="q", clock=clock, registry=registry)
    q.add("a")
    q.add("b")
    await q.get()
    clock.advance(3.0)
    await q.get()
    clock.advance(1.0)
    assert sample(registry, "workqueue_unfinished_work_seconds") == pytest.approx(5.0)
    assert sample(registry, "workqueue_longest_running_processor_seconds") == pytest.approx(4.0)
    q.done("a")
    assert sample(registry, "workqueue_unfinished_work_seconds") == pytest.approx(1.0)
    assert sample(registry, "workqueue_longest_running_processor_seconds") == pytest.approx(1.0)
    q.done("b")
    assert sample(registry, "workqueue_unfinished_work_seconds") == 0
    assert sample(registry, "workqueue_longest_running_processor_seconds") == 0


async def test_retries_count_delayed_adds_but_not_immediate_ones_nor_after_shutdown() -> None:
    registry = CollectorRegistry()
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(1.0, 10.0), name="q", clock=clock, registry=registry
    )
    try:
        q.add_rate_limited("a")
        q.add_rate_limited("a")
        q.add_after("b", 0)  # no delay: not a retry (controller-runtime's priority queue)
        assert sample(registry, "workqueue_retries_total") == 2
        assert sample(registry, "workqueue_adds_total") == 1  # only "b" so far
        await settle()
        clock.advance(1.0)
        await settle()
        assert sample(registry, "workqueue_adds_total") == 2
        q.shutdown()
        q.add_after("c", 1.0)
        assert sample(registry, "workqueue_retries_total") == 2
    finally:
        await q.aclose()


async def test_queues_are_labelled_by_name_and_share_a_registry() -> None:
    registry = CollectorRegistry()
    first: Queue[str] = Queue(name="first", registry=registry)
    second: Queue[str] = Queue(name="second", registry=registry)
    first.add("a")
    second.add("a")
    second.add("b")
    assert sample(registry, "workqueue_adds_total", name="first") == 1
    assert sample(registry, "workqueue_adds_total", name="second") == 2


def test_unnamed_queue_records_nothing() -> None:
    registry = CollectorRegistry()
    q: Queue[str] = Queue(registry=registry)
    q.add("a")
    assert list(registry.collect()) == []


def test_registration_is_idempotent_per_registry() -> None:
    registry = CollectorRegistry()
    register_metrics(registry)
    register_metrics(registry)
    Queue[str](name="x", registry=registry)
    Queue[str](name="x", registry=registry)
    names = {family.name for family in registry.collect()}
    exposed = {n.removesuffix("_total") for n in METRIC_NAMES}
    assert names == exposed
