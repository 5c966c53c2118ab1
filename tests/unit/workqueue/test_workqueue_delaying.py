"""Behaviour of DelayingQueue.add_after, driven by a FakeClock."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncIterator

import pytest

from kuberay.workqueue import DelayingQueue, FakeClock, RealClock


async def settle(rounds: int = 20) -> None:
    """Let every runnable task run until it blocks again."""
    for _ in range(rounds):
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def q(clock: FakeClock) -> AsyncIterator[DelayingQueue[str]]:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    yield queue
    await queue.aclose()


async def test_item_not_available_before_its_time(q: DelayingQueue[str], clock: FakeClock) -> None:
    q.add_after("a", 1.0)
    await settle()
    assert len(q) == 0
    assert q.num_waiting() == 1
    clock.advance(0.999)
    await settle()
    assert len(q) == 0
    clock.advance(0.001)
    await settle()
    assert len(q) == 1
    assert await q.get() == ("a", False)
    assert q.num_waiting() == 0


async def test_blocked_get_receives_delayed_item(q: DelayingQueue[str], clock: FakeClock) -> None:
    getter = asyncio.create_task(q.get())
    q.add_after("a", 1000.0)
    await settle()
    assert not getter.done()
    clock.advance(1000.0)
    assert await asyncio.wait_for(getter, timeout=10) == ("a", False)


async def test_non_positive_delay_adds_immediately(q: DelayingQueue[str]) -> None:
    q.add_after("a", 0)
    q.add_after("b", -1)
    assert len(q) == 2
    assert q.num_waiting() == 0


async def test_earlier_add_after_wins(q: DelayingQueue[str], clock: FakeClock) -> None:
    q.add_after("a", 10.0)
    await settle()
    q.add_after("a", 1.0)
    await settle()
    clock.advance(1.0)
    await settle()
    assert len(q) == 1
    assert await q.get() == ("a", False)
    q.done("a")
    clock.advance(20.0)
    await settle()
    assert len(q) == 0, "the superseded later time must not add the item again"


async def test_later_add_after_does_not_postpone(q: DelayingQueue[str], clock: FakeClock) -> None:
    q.add_after("a", 1.0)
    q.add_after("a", 10.0)
    await settle()
    clock.advance(1.0)
    await settle()
    assert len(q) == 1


async def test_items_become_ready_in_due_order(q: DelayingQueue[str], clock: FakeClock) -> None:
    q.add_after("c", 3.0)
    q.add_after("a", 1.0)
    q.add_after("b", 2.0)
    await settle()
    clock.advance(5.0)
    await settle()
    assert [(await q.get())[0] for _ in range(3)] == ["a", "b", "c"]


async def test_each_item_becomes_ready_at_its_own_time(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    q.add_after("a", 0.1)
    q.add_after("b", 0.3)
    await settle()
    clock.advance(0.1)
    await settle()
    assert len(q) == 1
    clock.advance(0.2)
    await settle()
    assert len(q) == 2


async def test_pending_delayed_add_survives_add_and_done(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    q.add_after("a", 5.0)
    q.add("a")
    assert await q.get() == ("a", False)
    q.done("a")
    await settle()
    assert len(q) == 0
    clock.advance(5.0)
    await settle()
    assert len(q) == 1


async def test_ready_item_already_queued_is_deduplicated(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    q.add("a")
    q.add_after("a", 1.0)
    await settle()
    clock.advance(1.0)
    await settle()
    assert len(q) == 1


async def test_add_after_ignored_when_shutting_down(q: DelayingQueue[str]) -> None:
    q.shutdown()
    q.add_after("a", 1.0)
    q.add_after("b", 0)
    assert len(q) == 0
    assert q.num_waiting() == 0


async def test_shutdown_discards_pending_adds(q: DelayingQueue[str], clock: FakeClock) -> None:
    q.add_after("a", 1.0)
    await settle()
    task = q._task
    q.shutdown()
    clock.advance(2.0)
    await settle()
    assert await q.get() == (None, True)
    assert q.num_waiting() == 0
    assert task is not None and task.done(), "shutdown alone stops the background task"


async def test_shutdown_with_drain_waits_for_in_flight_and_stops_task(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    q.add("a")
    q.add_after("b", 1.0)
    assert await q.get() == ("a", False)
    drain = asyncio.create_task(q.shutdown_with_drain())
    await settle()
    assert not drain.done()
    q.done("a")
    await asyncio.wait_for(drain, timeout=10)
    assert q._task is None
    assert not clock.has_waiters()


async def test_aclose_stops_background_task(clock: FakeClock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1.0)
    await settle()
    assert clock.has_waiters()
    task = q._task
    assert task is not None
    await asyncio.wait_for(q.aclose(), timeout=10)
    assert task.done() and not task.cancelled()
    assert not clock.has_waiters()


def test_add_after_outside_event_loop_is_kept_until_started() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1.0)
    assert q.num_waiting() == 1

    async def scenario() -> tuple[str | None, bool]:
        q.start()
        clock.advance(1.0)
        result = await asyncio.wait_for(q.get(), timeout=10)
        await q.aclose()
        return result

    loop = asyncio.new_event_loop()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert loop.run_until_complete(scenario()) == ("a", False)
    finally:
        loop.close()


async def test_real_clock_short_delay() -> None:
    q: DelayingQueue[str] = DelayingQueue(clock=RealClock())
    try:
        q.add_after("a", 0.02)
        assert await asyncio.wait_for(q.get(), timeout=10) == ("a", False)
    finally:
        await q.aclose()
