"""EventCorrelator: client-go's dedupe, per-object spam filter and aggregation."""

from __future__ import annotations

import pytest

from kuberay.reconcile.eventcorrelator import COMBINED_PREFIX, EventCorrelator


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def src(obj: str = "uid-1") -> tuple[str, str, str]:
    return ("kuberay-operator", "host", obj)


def test_a_repeat_patches_the_created_event_with_a_growing_count() -> None:
    c = EventCorrelator(now=Clock())
    first = c.correlate(src(), "ns", "Normal", "Created", "made pod a")
    assert (first.skip, first.count, first.name) == (False, 1, "")
    c.created(first.key, "rc.1")
    second = c.correlate(src(), "ns", "Normal", "Created", "made pod a")
    third = c.correlate(src(), "ns", "Normal", "Created", "made pod a")
    assert (second.count, second.name, second.namespace) == (2, "rc.1", "ns")
    assert (third.count, third.name) == (3, "rc.1")
    # A different message, reason, type or object is a different Event.
    for other in (
        c.correlate(src(), "ns", "Normal", "Created", "made pod b"),
        c.correlate(src(), "ns", "Normal", "Deleted", "made pod a"),
        c.correlate(src(), "ns", "Warning", "Created", "made pod a"),
        c.correlate(src("uid-2"), "ns", "Normal", "Created", "made pod a"),
    ):
        assert other.count == 1


def test_forget_makes_the_next_repeat_a_new_event() -> None:
    c = EventCorrelator(now=Clock())
    first = c.correlate(src(), "ns", "Normal", "R", "m")
    c.created(first.key, "e1")
    c.forget(first.key)
    again = c.correlate(src(), "ns", "Normal", "R", "m")
    assert (again.count, again.name) == (1, "")


def test_spam_filter_allows_a_burst_of_25_per_object_then_one_per_five_minutes() -> None:
    clock = Clock()
    c = EventCorrelator(now=clock)
    verdicts = [c.correlate(src(), "ns", "Normal", "R", f"m{i % 3}") for i in range(30)]
    assert [v.skip for v in verdicts] == [False] * 25 + [True] * 5
    # Another object has its own bucket.
    assert not c.correlate(src("uid-2"), "ns", "Normal", "R", "m").skip
    # The dropped repeats still counted: the next one sent carries the true count.
    clock.t += 300
    allowed = c.correlate(src(), "ns", "Normal", "R", "m0")
    assert not allowed.skip
    assert allowed.count == 11  # m0 was recorded at i = 0, 3, ..., 27 and now
    assert c.correlate(src(), "ns", "Normal", "R", "m0").skip  # one token per 5 minutes


def test_ten_similar_messages_within_ten_minutes_are_combined_into_one_event() -> None:
    clock = Clock()
    c = EventCorrelator(now=clock)
    verdicts = []
    for i in range(12):
        verdicts.append(c.correlate(src(), "ns", "Warning", "Failed", f"pod p{i} failed"))
        clock.t += 30
    assert [v.message for v in verdicts[:9]] == [f"pod p{i} failed" for i in range(9)]
    assert all(v.count == 1 for v in verdicts[:9])
    combined = verdicts[9:]
    assert [v.message for v in combined] == [
        f"{COMBINED_PREFIX}pod p{i} failed" for i in range(9, 12)
    ]
    # The combined ones share one Event: created once, then patched.
    assert [v.count for v in combined] == [1, 2, 3]
    assert len({v.key for v in combined}) == 1
    # Other reasons about the same object are not combined.
    assert c.correlate(src(), "ns", "Warning", "Other", "pod p0 failed").message == (
        "pod p0 failed"
    )


def test_similar_messages_far_apart_are_not_combined() -> None:
    clock = Clock()
    c = EventCorrelator(now=clock)
    for i in range(12):
        verdict = c.correlate(src(), "ns", "Warning", "Failed", f"pod p{i} failed")
        assert not verdict.message.startswith(COMBINED_PREFIX)
        clock.t += 601  # more than the 10-minute interval since the group's last event


def test_every_map_is_bounded() -> None:
    c = EventCorrelator(now=Clock(), max_keys=8)
    for i in range(100):
        c.correlate(src(f"uid-{i}"), "ns", "Normal", "R", f"m{i}")
    assert (len(c.seen), len(c.groups), len(c.buckets)) == (8, 8, 8)
    with pytest.raises(ValueError):
        EventCorrelator(max_keys=0)


def test_dedupe_only_mode_neither_filters_nor_combines() -> None:
    c = EventCorrelator(now=Clock(), spam_filter=False, aggregate=False)
    verdicts = [c.correlate(src(), "ns", "Normal", "R", f"m{i}") for i in range(40)]
    assert not any(v.skip for v in verdicts)
    assert not any(v.message.startswith(COMBINED_PREFIX) for v in verdicts)
    assert c.correlate(src(), "ns", "Normal", "R", "m3").count == 2
