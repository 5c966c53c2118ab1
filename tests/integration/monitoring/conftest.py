"""Fixtures: ``promtool`` and ``prometheus`` built from the Go module proxy
(``hack/build/build_prometheus.py``; ``make test`` starts the build in the background, and the first
test needing them waits for it, or builds them itself when the cache lacks them). The tests
are skipped, with the reason, only when they cannot be built here (no Go, or the module proxy
unreachable)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def _build_prometheus() -> Any:
    from hack.build import build_prometheus

    return build_prometheus


def prometheus_binaries() -> tuple[Path, Path]:
    """``(prometheus, promtool)``, built now if missing; skip the test if they cannot be."""
    build = _build_prometheus()
    try:
        prometheus, promtool = build.build()
    except build.BuildError as exc:
        pytest.skip(f"promtool/prometheus {build.PROMETHEUS_VERSION} not built here: {exc}")
    return Path(prometheus), Path(promtool)


@pytest.fixture(scope="session")
def promtool() -> Path:
    """The cached promtool binary."""
    return prometheus_binaries()[1]
