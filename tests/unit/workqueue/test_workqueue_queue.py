"""Behaviour of the basic deduplicating Queue."""

from __future__ import annotations

import asyncio

import pytest

from kuberay.workqueue import Queue


async def settle(rounds: int = 20) -> None:
    """Let every runnable task run until it blocks again."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def get_now(q: Queue[str]) -> str:
    item, shutdown = await asyncio.wait_for(q.get(), timeout=10)
    assert not shutdown
    assert item is not None
    return item


async def test_fifo_order() -> None:
    q: Queue[str] = Queue()
    for item in ["a", "b", "c"]:
        q.add(item)
    assert [await get_now(q) for _ in range(3)] == ["a", "b", "c"]


async def test_add_is_deduplicated_while_queued() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    q.add("a")
    assert len(q) == 2
    assert await get_now(q) == "a"
    assert await get_now(q) == "b"
    assert len(q) == 0


async def test_readded_while_processing_comes_back_once_after_done() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    assert await get_now(q) == "a"
    for _ in range(5):
        q.add("a")
    assert len(q) == 0, "an item being processed must not be handed out again"
    q.done("a")
    assert len(q) == 1
    assert await get_now(q) == "a"
    q.done("a")
    assert len(q) == 0


async def test_done_without_readd_does_not_requeue() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    await get_now(q)
    q.done("a")
    assert len(q) == 0


async def test_get_blocks_until_add() -> None:
    q: Queue[str] = Queue()
    getter = asyncio.create_task(q.get())
    await settle()
    assert not getter.done()
    q.add("x")
    assert await asyncio.wait_for(getter, timeout=10) == ("x", False)


async def test_each_add_wakes_one_waiting_getter() -> None:
    q: Queue[str] = Queue()
    getters = [asyncio.create_task(q.get()) for _ in range(3)]
    await settle()
    q.add("a")
    q.add("b")
    await settle()
    finished = [g for g in getters if g.done()]
    assert sorted(g.result()[0] or "" for g in finished) == ["a", "b"]
    q.shutdown()
    results = await asyncio.gather(*getters)
    assert (None, True) in results


async def test_cancelled_getter_does_not_lose_an_item() -> None:
    q: Queue[str] = Queue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await settle()
    q.add("a")  # wakes `first`...
    first.cancel()  # ...which is cancelled before it can take the item.
    await settle()
    assert first.cancelled()
    assert await asyncio.wait_for(second, timeout=10) == ("a", False)


async def test_shutdown_wakes_getters() -> None:
    q: Queue[str] = Queue()
    getter = asyncio.create_task(q.get())
    await settle()
    q.shutdown()
    assert await asyncio.wait_for(getter, timeout=10) == (None, True)
    assert q.shutting_down()


async def test_get_after_shutdown_hands_out_nothing_even_if_items_are_queued() -> None:
    """A stopping controller (or one that lost its lease) must not start queued work."""
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    q.shutdown()
    q.add("c")  # ignored
    assert await q.get() == (None, True)
    assert await q.get() == (None, True)


async def test_done_after_shutdown_does_not_hand_the_item_out_again() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    await get_now(q)
    q.add("a")
    q.shutdown()
    q.done("a")
    assert await q.get() == (None, True)


async def test_shutdown_with_drain_waits_for_in_flight_not_queued() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    await get_now(q)  # "a" in flight, "b" queued
    drain = asyncio.create_task(q.shutdown_with_drain())
    await settle()
    assert not drain.done()
    assert await q.get() == (None, True), "queued 'b' is not handed out while draining"
    q.done("a")
    await asyncio.wait_for(drain, timeout=10)


async def test_shutdown_with_drain_waits_for_in_flight_items() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    await get_now(q)
    await get_now(q)
    drain = asyncio.create_task(q.shutdown_with_drain())
    await settle()
    assert q.shutting_down()
    assert not drain.done()
    q.done("a")
    await settle()
    assert not drain.done()
    q.done("b")
    await asyncio.wait_for(drain, timeout=10)


async def test_shutdown_with_drain_returns_at_once_when_idle() -> None:
    q: Queue[str] = Queue()
    await asyncio.wait_for(q.shutdown_with_drain(), timeout=10)
    assert q.shutting_down()


async def test_an_item_is_never_processed_by_two_workers_at_once() -> None:
    q: Queue[int] = Queue()
    in_flight: set[int] = set()
    processed: list[int] = []

    async def worker() -> None:
        while True:
            item, shutdown = await q.get()
            if shutdown:
                return
            assert item is not None
            assert item not in in_flight
            in_flight.add(item)
            await asyncio.sleep(0)
            q.add(item % 3)  # re-add something, possibly ourselves
            await asyncio.sleep(0)
            in_flight.discard(item)
            processed.append(item)
            q.done(item)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for i in range(20):
        q.add(i)
        await asyncio.sleep(0)
    await settle(200)
    await q.shutdown_with_drain()
    await asyncio.wait_for(asyncio.gather(*workers), timeout=10)
    assert set(range(20)) <= set(processed)
    assert not in_flight


@pytest.mark.parametrize("name", [None, ""])
async def test_unnamed_queue_works(name: str | None) -> None:
    q: Queue[str] = Queue(name=name)
    q.add("a")
    assert await get_now(q) == "a"
