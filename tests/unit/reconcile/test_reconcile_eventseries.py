"""EventSeries: client-go's events.k8s.io series cache -- create, start the series on the
second occurrence, count the rest, finish idle ones."""

from __future__ import annotations

import pytest

from kuberay.reconcile.eventseries import COUNTED, CREATE, PATCH, EventSeries


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def key(note: str = "head is not ready", obj: str = "uid-1") -> tuple[str, ...]:
    return ("ctl", "host", obj, "Warning", "Unhealthy", "Check", note)


def test_create_then_series_of_two_then_only_counted() -> None:
    series = EventSeries(now=Clock())
    verdict, entry = series.observe(key(), "ns", 3, "t1")
    assert verdict == CREATE and entry.count == 1 and not entry.grown
    entry.name, entry.written = "cm.1", 1
    verdicts = [series.observe(key(), "ns", 3, f"t{i}")[0] for i in range(2, 101)]
    assert verdicts == [PATCH] + [COUNTED] * 98
    assert (entry.count, entry.observed, entry.shard) == (100, "t100", 3)
    assert entry.grown and series.grown() == [entry]
    # Another note, object or reason is another Event.
    assert series.observe(key("other"), "ns", 3, "t")[0] == CREATE
    assert series.observe(key(obj="uid-2"), "ns", 3, "t")[0] == CREATE


def test_an_uncreated_event_is_never_written_as_a_series() -> None:
    series = EventSeries(now=Clock())
    series.observe(key(), "ns", 0, "t1")
    series.observe(key(), "ns", 0, "t2")
    assert series.grown() == []  # not created (yet, or it failed)
    series.forget(key())
    assert series.observe(key(), "ns", 0, "t3")[0] == CREATE


def test_finish_forgets_idle_events_and_returns_the_grown_ones() -> None:
    clock = Clock()
    series = EventSeries(now=clock, finish=360.0)
    _, grown = series.observe(key("a"), "ns", 0, "t")
    _, singleton = series.observe(key("b"), "ns", 0, "t")
    _, written = series.observe(key("c"), "ns", 0, "t")
    for entry in (grown, singleton, written):
        entry.name, entry.written = "e", 1
    for k in (key("a"), key("a"), key("c")):
        series.observe(k, "ns", 0, "t")
    written.written = 2
    clock.t += 200
    _, busy = series.observe(key("d"), "ns", 0, "t")
    assert series.finish() == []
    clock.t += 200  # a, b, c idle for 400 s; d for 200 s
    assert series.finish() == [grown]
    assert list(series.entries.items.values()) == [busy]
    # A finished Event's next occurrence is a new Event.
    assert series.observe(key("a"), "ns", 0, "t")[0] == CREATE


def test_the_cache_is_bounded() -> None:
    series = EventSeries(now=Clock(), max_keys=3)
    for i in range(10):
        series.observe(key(f"n{i}"), "ns", 0, "t")
    assert len(series) == 3
    with pytest.raises(ValueError, match="max_keys"):
        EventSeries(max_keys=0)
