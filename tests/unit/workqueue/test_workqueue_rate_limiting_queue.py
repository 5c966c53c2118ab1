"""RateLimitingQueue: backoff-driven retries on a FakeClock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from kuberay.workqueue import FakeClock, ItemExponentialFailureRateLimiter, RateLimitingQueue


async def settle(rounds: int = 20) -> None:
    """Let every runnable task run until it blocks again."""
    for _ in range(rounds):
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def q(clock: FakeClock) -> AsyncIterator[RateLimitingQueue[str]]:
    queue: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(1.0, 1000.0), clock=clock
    )
    yield queue
    await queue.aclose()


async def test_add_rate_limited_backs_off_exponentially(
    q: RateLimitingQueue[str], clock: FakeClock
) -> None:
    for expected_delay in [1.0, 2.0, 4.0]:
        q.add_rate_limited("a")
        await settle()
        clock.advance(expected_delay - 0.001)
        await settle()
        assert len(q) == 0
        clock.advance(0.001)
        await settle()
        assert await q.get() == ("a", False)
        q.done("a")
    assert q.num_requeues("a") == 3


async def test_forget_resets_backoff(q: RateLimitingQueue[str], clock: FakeClock) -> None:
    q.add_rate_limited("a")
    q.add_rate_limited("a")
    assert q.num_requeues("a") == 2
    q.forget("a")
    assert q.num_requeues("a") == 0
    clock.advance(1.0)
    await settle()
    assert len(q) == 1, "forget must not cancel the pending delayed add"
    assert await q.get() == ("a", False)
    q.done("a")
    q.add_rate_limited("a")
    await settle()
    clock.advance(1.0)
    await settle()
    assert len(q) == 1


async def test_fast_forward_through_max_backoff(clock: FakeClock) -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    try:
        for _ in range(30):
            q.rate_limiter.when("a")
        q.add_rate_limited("a")  # 1000 s
        await settle()
        clock.advance(999.0)
        await settle()
        assert len(q) == 0
        clock.advance(1.0)
        assert await asyncio.wait_for(q.get(), timeout=10) == ("a", False)
    finally:
        await q.aclose()


async def test_default_rate_limiter_uses_queue_clock(clock: FakeClock) -> None:
    q: RateLimitingQueue[int] = RateLimitingQueue(clock=clock)
    try:
        for i in range(100):
            q.add_rate_limited(i)  # 5 ms each, burst not exhausted
        q.add_rate_limited(100)  # bucket debt: 0.1 s
        await settle()
        clock.advance(0.005)
        await settle()
        assert len(q) == 100
        clock.advance(0.095)
        await settle()
        assert len(q) == 101
    finally:
        await q.aclose()
