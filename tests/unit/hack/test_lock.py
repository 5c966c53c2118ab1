"""requirements/runtime.lock (hack/release/lock.py): the one list of the operator image's
Python packages, generated from pyproject.toml's dependencies and the installed versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from hack.release import lock, plugin_dist


def test_the_lock_is_current_and_pins_every_runtime_dependency_but_kubernetes_asyncio() -> None:
    assert lock.LOCK.read_text() == lock.lock_text()  # what make lint's --check asserts
    pins = lock.read_lock()
    assert {"aiohttp", "structlog", "orjson", "pyyaml", "prometheus-client", "h11"} <= set(pins)
    assert {"yarl", "multidict"} <= set(pins)  # and what they require
    assert "kubernetes-asyncio" not in pins
    assert not {"pytest", "ruff", "mypy", "moto", "cryptography"} & set(pins)  # extras are not


def test_a_lock_line_without_an_exact_pin_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runtime.lock"
    path.write_text("# comment\nh11==0.16.0\naiohttp>=3.9\n")
    with pytest.raises(ValueError, match=r"aiohttp>=3\.9"):
        lock.read_lock(path)


def test_the_zipapp_bundles_the_lock_and_stops_on_another_installed_version(
    tmp_path: Path,
) -> None:
    bundled = {
        lock.normalize(d.metadata["Name"]): d.version for d in plugin_dist.locked_distributions()
    }
    assert bundled == lock.read_lock()
    stale = tmp_path / "runtime.lock"
    stale.write_text("h11==0.0.1\n")
    with pytest.raises(SystemExit, match=r"h11 .* the lock pins 0\.0\.1"):
        plugin_dist.locked_distributions(stale)
