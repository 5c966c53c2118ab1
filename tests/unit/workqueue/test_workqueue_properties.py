"""Property tests: random operation sequences against a reference model.

Each state machine runs the queue on its own private event loop; ``get`` is only
called when an item is queued, so it never blocks.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)

from kuberay.workqueue import DelayingQueue, FakeClock, Queue

ITEMS = st.sampled_from(["a", "b", "c", "d", "e"])


class QueueMachine(RuleBasedStateMachine):
    """Compares Queue against a direct transcription of the documented contract."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.q: Queue[str] = Queue()
        self.model_queue: deque[str] = deque()
        self.model_dirty: set[str] = set()
        self.model_processing: set[str] = set()
        self.shut = False
        # Number of dirty periods started / deliveries made, per item.
        self.dirty_periods: Counter[str] = Counter()
        self.deliveries: Counter[str] = Counter()

    def teardown(self) -> None:
        try:
            self._drain()
        finally:
            self.loop.close()

    def _get(self) -> tuple[str | None, bool]:
        return self.loop.run_until_complete(self.q.get())

    def _drain(self) -> None:
        # Finish everything in flight, then consume until empty: every dirty period
        # must have produced exactly one delivery.
        for in_flight in sorted(self.model_processing):
            self.done_item(in_flight)
        if self.shut:
            # After shutdown nothing more is handed out, even what is still queued.
            assert self._get() == (None, True)
            return
        while len(self.q):
            item, shutdown = self._get()
            assert not shutdown and item is not None
            self.deliveries[item] += 1
            self.q.done(item)
        assert self.deliveries == self.dirty_periods

    @rule(item=ITEMS)
    def add(self, item: str) -> None:
        self.q.add(item)
        if self.shut or item in self.model_dirty:
            return
        self.model_dirty.add(item)
        self.dirty_periods[item] += 1
        if item not in self.model_processing:
            self.model_queue.append(item)

    @precondition(lambda self: bool(self.model_queue) and not self.shut)
    @rule()
    def get(self) -> None:
        item, shutdown = self._get()
        expected = self.model_queue.popleft()
        assert (item, shutdown) == (expected, False)
        self.model_dirty.discard(expected)
        self.model_processing.add(expected)
        self.deliveries[expected] += 1

    @precondition(lambda self: bool(self.model_processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        item = data.draw(st.sampled_from(sorted(self.model_processing)))
        self.done_item(item)

    def done_item(self, item: str) -> None:
        self.q.done(item)
        self.model_processing.discard(item)
        if item in self.model_dirty:
            self.model_queue.append(item)

    @rule()
    def shutdown(self) -> None:
        self.q.shutdown()
        self.shut = True

    @precondition(lambda self: self.shut)
    @rule()
    def get_when_shut_down(self) -> None:
        assert self._get() == (None, True)

    @invariant()
    def matches_model(self) -> None:
        assert list(self.q._queue) == list(self.model_queue)
        assert self.q._dirty == self.model_dirty
        assert self.q._processing == self.model_processing
        assert len(self.q) == len(self.model_queue)

    @invariant()
    def structural_invariants(self) -> None:
        queued = list(self.q._queue)
        assert len(queued) == len(set(queued)), "no duplicates in the FIFO"
        assert set(queued) <= self.q._dirty, "queue is a subset of dirty"
        assert not set(queued) & self.q._processing, "queued items are not in flight"


QueueMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestQueueProperties = QueueMachine.TestCase


@settings(max_examples=100, deadline=None)
@given(
    requests=st.lists(
        st.tuples(ITEMS, st.integers(min_value=-2, max_value=20)), min_size=1, max_size=25
    ),
    steps=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=10),
)
def test_delayed_items_appear_exactly_at_their_earliest_due_time(
    requests: list[tuple[str, int]], steps: list[int]
) -> None:
    """Each item appears once, at the earliest of its requested delays, never before."""
    earliest: dict[str, int] = {}
    for item, delay in requests:
        earliest[item] = min(earliest.get(item, delay), max(delay, 0))

    points = _observation_points([*steps, 100])

    async def scenario() -> None:
        clock = FakeClock()
        q: DelayingQueue[str] = DelayingQueue(clock=clock)
        try:
            for item, delay in requests:
                q.add_after(item, float(delay))
            seen: dict[str, int] = {}
            for index, point in enumerate(points):
                if index:
                    clock.advance(point - points[index - 1])
                for _ in range(10):
                    await asyncio.sleep(0)
                while len(q):
                    got, _ = await q.get()
                    assert got is not None and got not in seen
                    seen[got] = point
            assert set(seen) == set(earliest)
            # Each item shows up at the first observation point at/after its due time.
            for item, due in earliest.items():
                assert seen[item] == min(p for p in points if p >= due)
        finally:
            await q.aclose()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()


def _observation_points(steps: list[int]) -> list[int]:
    points = [0]
    for step in steps:
        points.append(points[-1] + step)
    return points
