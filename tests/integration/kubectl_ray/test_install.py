"""An install without a checkout: the project's wheel into a fresh virtualenv (deps from
wheels repacked from this environment, no network) puts ``kubectl-ray`` and
``kubectl_complete-ray`` on its PATH, and they work against the local apiserver; the
single-file zipapp of ``make plugin`` does too."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kuberay.kube import Client


def plugin_dist() -> ModuleType:
    from hack.release import plugin_dist

    return plugin_dist


def raycluster(name: str, ns: str) -> dict[str, Any]:
    container = {"name": "ray-head", "image": "rayproject/ray:2.52.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            }
        },
    }


def clean_env(tmp: Path, kubeconfig: Path, path: str) -> dict[str, str]:
    """An environment that cannot see the checkout or the dev virtualenv."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR", "USER")}
    return {**keep, "PATH": path, "KUBECONFIG": str(kubeconfig), "XDG_CACHE_HOME": str(tmp)}


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture
async def demo(kclient: Client, namespace: str, crds_installed: None) -> str:
    await kclient.create(raycluster("installed-demo", namespace))
    return namespace


async def test_wheel_installs_into_a_fresh_virtualenv(
    demo: str, kubeconfig_path: Path, tmp_path: Path
) -> None:
    dist = plugin_dist()
    wheel = await asyncio.to_thread(dist.build_wheel, tmp_path / "dist")
    house = tmp_path / "wheels"
    await asyncio.to_thread(dist.wheelhouse, house)
    venv = tmp_path / "venv"
    made = await asyncio.to_thread(
        run, [sys.executable, "-m", "venv", "--without-pip", str(venv)], dict(os.environ), tmp_path
    )
    assert made.returncode == 0, made.stderr
    started = time.monotonic()
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
           "-q", "--no-index", "--find-links", str(house), str(wheel)]  # fmt: skip
    installed = await asyncio.to_thread(run, pip, dict(os.environ), tmp_path)
    seconds = time.monotonic() - started
    assert installed.returncode == 0, installed.stderr
    print(f"wheel install into a fresh virtualenv: {seconds:.1f}s")  # reported, not asserted

    bin_dir = venv / "bin"
    assert (bin_dir / "kubectl-ray").is_file() and (bin_dir / "kubectl_complete-ray").is_file()
    env = clean_env(tmp_path, kubeconfig_path, f"{bin_dir}:/usr/bin:/bin")
    where = await asyncio.to_thread(
        run,
        [str(bin_dir / "python"), "-c", "import kuberay; print(kuberay.__file__)"],
        env,
        tmp_path,
    )
    assert where.stdout.strip().startswith(str(venv)), where.stdout
    got = await asyncio.to_thread(run, ["kubectl-ray", "get", "cluster", "-n", demo], env, tmp_path)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0].split()[:2] == ["NAME", "NAMESPACE"]
    assert lines[1].split()[:2] == ["installed-demo", demo]
    completed = await asyncio.to_thread(
        run, ["kubectl_complete-ray", "get", "cluster", "-n", demo, "inst"], env, tmp_path
    )
    assert completed.stdout.splitlines() == ["installed-demo", ":4"], completed.stderr


async def test_zipapp_runs_get_cluster(demo: str, kubeconfig_path: Path, tmp_path: Path) -> None:
    dist = plugin_dist()
    pyz = tmp_path / "kubectl-ray.pyz"
    await asyncio.to_thread(dist.build_zipapp, pyz)
    env = clean_env(tmp_path / "cache", kubeconfig_path, "/usr/bin:/bin")
    python = [sys.executable, "-I"]  # -I: no user site, no PYTHONPATH, no current directory
    got = await asyncio.to_thread(
        run, [*python, str(pyz), "get", "cluster", "-n", demo], env, tmp_path
    )
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines()[1].split()[:2] == ["installed-demo", demo]
    unpacked = list((tmp_path / "cache" / "kubectl-ray").glob("*/site/kuberay/__init__.py"))
    assert len(unpacked) == 1  # the bundled packages, unpacked once
    help_text = await asyncio.to_thread(run, [*python, str(pyz), "--help"], env, tmp_path)
    assert "kubectl ray" in help_text.stdout
