"""``kuberay.testing.envtest`` from an installed wheel, as another project's tests use it.

The wheel is built offline from a copy of the package's sources (never the checkout itself,
so nothing of ``hack/`` can leak in), installed with ``pip install --no-deps --target`` into a
temporary site directory, and run by this venv's interpreter (which provides the dependencies)
with ``-P`` and a working directory outside the checkout, so only the wheel's ``kuberay`` is
importable. With ``$KUBEBUILDER_ASSETS`` naming the cached etcd and kube-apiserver, the default
control plane starts, and a ConfigMap written through ``await cp.client()`` reads back; the
modes that need the source checkout (``full=True``) fail up front with
``CheckoutNotFound`` naming what is missing and how to get it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kuberay.testing.binaries import cache_dir

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "kuberay")

SCRIPT = """
import asyncio, sys
import kuberay
from kuberay.testing.checkout import checkout_root
from kuberay.testing.envtest import CheckoutNotFound, ControlPlane

print("kuberay:", kuberay.__file__)
print("checkout:", checkout_root())
try:
    ControlPlane(full=True).start()
except CheckoutNotFound as exc:
    print("full:", exc)
else:
    sys.exit("full=True started without a checkout")


async def roundtrip(cp):
    client = await cp.client()
    try:
        await client.create({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "from-wheel", "namespace": "default"},
            "data": {"answer": "42-from-the-wheel"},
        })
        got = await client.get("v1", "ConfigMap", "from-wheel", "default")
        print("value:", got["data"]["answer"])
    finally:
        await client.close()


with ControlPlane(build=False) as cp:
    asyncio.run(roundtrip(cp))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built offline (no build isolation) from a copy of its sources."""
    src = tmp_path_factory.mktemp("wheel-src")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(out), str(src)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return next(out.glob("kuberay-*.whl"))


def test_control_plane_from_an_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    for name in ("etcd", "kube-apiserver"):
        if not (cache_dir() / name).is_file():
            pytest.skip(f"no {name} in {cache_dir()}: make binaries")
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--target", str(site), str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    assert not (site / "hack").exists()
    work = tmp_path / "project"
    work.mkdir()
    env = {
        k: v for k, v in os.environ.items() if k not in ("KUBERAY_CHECKOUT", "KUBERAY_BIN_CACHE")
    }
    env.update(
        PYTHONPATH=str(site),
        KUBEBUILDER_ASSETS=str(cache_dir()),
        # the project's cache must not be what finds the binaries: only $KUBEBUILDER_ASSETS
        KUBERAY_BIN_CACHE=str(tmp_path / "empty-cache"),
        HOME=str(tmp_path / "home"),
    )
    proc = subprocess.run(
        [sys.executable, "-P", "-c", SCRIPT],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    assert Path(lines["kuberay"]).is_relative_to(site), proc.stdout
    assert lines["checkout"] == "None"
    assert "full=True" in lines["full"] and "KUBERAY_CHECKOUT" in lines["full"], lines["full"]
    assert lines["value"] == "42-from-the-wheel"
