"""Where envtest finds its binaries and the source checkout (kuberay.testing.binaries,
kuberay.testing.checkout): ``$KUBEBUILDER_ASSETS`` first, then the project's cache; without a
checkout a missing binary and the checkout-only modes fail with what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from kuberay.testing import binaries, checkout
from kuberay.testing.envtest import CheckoutNotFound, ControlPlane

ROOT = Path(__file__).resolve().parents[3]


def _binary(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_kubebuilder_assets_come_before_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERAY_BIN_CACHE", str(tmp_path / "cache"))
    cached = _binary(tmp_path / "cache" / binaries.KUBERNETES_VERSION, "etcd")
    assert binaries.find_binary("etcd") == cached
    assets = _binary(tmp_path / "assets", "etcd")
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path / "assets"))
    assert binaries.find_binary("etcd") == assets
    assert binaries.locate("etcd", build=False) == assets
    assert binaries.find_binary("kube-apiserver") is None


def test_a_missing_binary_outside_a_checkout_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERAY_BIN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path / "assets"))
    monkeypatch.setattr(binaries, "checkout_root", lambda: None)
    with pytest.raises(binaries.BuildError) as err:
        binaries.locate("kube-apiserver", build=True)
    message = str(err.value)
    assert "KUBEBUILDER_ASSETS" in message and str(tmp_path / "assets") in message
    assert "hack/build/build.py" in message


def test_the_checkout_is_this_repository_or_kuberay_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERAY_CHECKOUT", raising=False)
    assert checkout.checkout_root() == ROOT
    monkeypatch.setenv("KUBERAY_CHECKOUT", str(tmp_path))
    with pytest.raises(CheckoutNotFound, match=r"no hack/__init__\.py"):
        checkout.checkout_root()
    (tmp_path / "hack").mkdir()
    (tmp_path / "hack" / "__init__.py").write_text("")
    assert checkout.checkout_root() == tmp_path


def test_hack_modules_import_by_name_from_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERAY_CHECKOUT", raising=False)
    realnode = checkout.import_hack("hack.cluster.realnode", "real_nodes=1")
    assert Path(realnode.__file__ or "").is_relative_to(ROOT / "hack")
    from hack.cluster import realnode as same  # the one module object, whoever imports it

    assert same is realnode


def test_checkout_modes_fail_up_front_without_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkout, "checkout_root", lambda: None)
    cp = ControlPlane(tmp_path / "cp", full=True, history_server=True)
    with pytest.raises(CheckoutNotFound) as err:
        cp.start()
    message = str(err.value)
    assert "full=True" in message and "history_server=True" in message
    assert "KUBERAY_CHECKOUT" in message and "KUBEBUILDER_ASSETS" in message
    assert not cp.running and not (tmp_path / "cp").exists()
