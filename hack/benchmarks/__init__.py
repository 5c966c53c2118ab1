"""Benchmarks beside ``hack/bench.py`` and ``hack/bench_history.py``, the stress hog, mutants."""
