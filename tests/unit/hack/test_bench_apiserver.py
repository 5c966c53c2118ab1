"""The API server benchmark's arithmetic (``hack/benchmarks/bench_apiserver.py``): the
summary of a path's timings and the verdict against the goal."""

from __future__ import annotations

from hack.benchmarks.bench_apiserver import summary, verdict


def test_the_summary_is_in_milliseconds_with_a_nearest_rank_p90() -> None:
    seconds = [i / 1000 for i in range(1, 21)]  # 1..20 ms, given in reverse below
    assert summary(list(reversed(seconds))) == {
        "median_ms": 10.5,
        "p90_ms": 18.0,
        "min_ms": 1.0,
        "max_ms": 20.0,
    }
    assert summary([0.004]) == {"median_ms": 4.0, "p90_ms": 4.0, "min_ms": 4.0, "max_ms": 4.0}


def _paths(direct: float, proxy: float) -> dict[str, dict[str, float]]:
    return {
        "direct": {"median_ms": direct, "p90_ms": direct * 2},
        "proxy": {"median_ms": proxy, "p90_ms": proxy * 2},
    }


def test_the_goal_is_met_only_when_both_overheads_are_within_it() -> None:
    met = verdict(_paths(100.0, 110.0), _paths(4.0, 6.0))
    assert met["list_overhead_percent"] == 10.0 and met["get_median_overhead_ms"] == 2.0
    assert met["goal_met"]
    slow_list = verdict(_paths(100.0, 111.0), _paths(4.0, 5.0))
    assert slow_list["list_overhead_percent"] == 11.0 and not slow_list["goal_met"]
    slow_get = verdict(_paths(100.0, 90.0), _paths(4.0, 6.5))
    assert slow_get["list_overhead_percent"] == -10.0
    assert slow_get["get_median_overhead_ms"] == 2.5 and not slow_get["goal_met"]
    assert slow_get["get_p90_overhead_ms"] == 5.0
