"""Flags with KubeRay's defaults, and the entry point serving a local store with no
Kubernetes at all."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from kuberay.historyserver.layout import ClusterRef, Layout
from kuberay.historyserver.server import main as main_mod
from kuberay.historyserver.server.config import (
    ConfigError,
    parse_listen,
    parse_options,
    parse_quantity,
)


def test_defaults_are_kuberays() -> None:
    o = parse_options([], {"STORAGE_BACKEND": "S3"})
    assert o.storage_backend == "s3"
    assert o.session_cache_size == 100
    assert o.session_cache_max_memory == 2 * 2**30
    assert o.session_cache_ttl == 0
    assert o.session_process_timeout == 120
    assert o.kube_api_qps == 100 and o.kube_api_burst == 200
    assert o.dashboard_dir == "/dashboard"
    assert (o.listen_host, o.listen_port) == ("0.0.0.0", 8080)
    assert o.enable_live_clusters is False


def test_flags_override_env() -> None:
    o = parse_options(
        [
            "--storage-backend=local",
            "--storage-root-dir=/a/b/",
            "--session-cache-size=3",
            "--session-cache-max-memory=512Mi",
            "--session-cache-ttl=1h",
            "--session-process-timeout=30s",
            "--listen=127.0.0.1:0",
        ],
        {"STORAGE_BACKEND": "s3", "STORAGE_ROOT_DIR": "x"},
    )
    assert (o.storage_backend, o.storage_root_dir) == ("local", "a/b")
    assert o.session_cache_size == 3 and o.session_cache_max_memory == 512 * 2**20
    assert o.session_cache_ttl == 3600 and o.session_process_timeout == 30
    assert (o.listen_host, o.listen_port) == ("127.0.0.1", 0)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--storage-backend=s3", "--session-cache-max-memory=lots"],
        ["--storage-backend=s3", "--listen=8080"],
        ["--storage-backend=s3", "--session-cache-size=0"],
        ["--storage-backend=s3", "--enable-live-clusters"],
        ["--storage-backend=s3", "--storage-root-dir=a/../b"],
    ],
)
def test_bad_settings(argv: list[str]) -> None:
    with pytest.raises(ConfigError):
        parse_options(argv, {})


def test_quantities_and_listen() -> None:
    assert parse_quantity("0") == 0
    assert parse_quantity("1G") == 10**9
    assert parse_quantity("8Gi") == 8 * 2**30
    assert parse_listen("[::1]:80") == ("::1", 80)
    assert main_mod.main(["--storage-backend=nope"]) == 1


async def test_run_serves_a_local_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_STORAGE_DIR", str(tmp_path))
    layout = Layout(ClusterRef("default", "c1"), root="r")
    marker = tmp_path / layout.session_marker_key("session_2026-01-01_00-00-00_000000_1")
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    options = parse_options(
        ["--storage-backend=local", "--storage-root-dir=r", "--listen=127.0.0.1:0"], {}
    )
    stop = asyncio.Event()
    ports: list[int] = []
    real_site = main_mod.web.TCPSite

    class Site(real_site):  # type: ignore[misc,valid-type]
        async def start(self) -> None:
            await super().start()
            server = self._server
            assert server is not None
            ports.append(server.sockets[0].getsockname()[1])

    monkeypatch.setattr(main_mod.web, "TCPSite", Site)
    task = asyncio.create_task(main_mod.run(options, stop))
    for _ in range(1500):  # up to 30 s: a loaded machine starts the server slowly
        if ports or task.done():
            break
        await asyncio.sleep(0.02)
    assert ports, task.exception() if task.done() else "the server did not listen within 30 s"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{ports[0]}/clusters") as r:
            (entry,) = await r.json()
            assert entry["name"] == "c1"
        async with http.get(f"http://127.0.0.1:{ports[0]}/readz") as r:
            assert await r.text() == "ok"
    stop.set()
    await asyncio.wait_for(task, 10)


def test_ui_builds_come_from_the_ui_dir_else_kuberays_dashboard_dir(tmp_path: Path) -> None:
    """The server image keeps its UI builds in /dashboard (KubeRay's --dashboard-dir default):
    with no --dashboard-ui-dir they are found there; an explicit --dashboard-ui-dir wins; a
    missing --dashboard-dir means no directory at all."""
    env = {"STORAGE_BACKEND": "local"}
    explicit = tmp_path / "ui"
    kuberay_dir = tmp_path / "dashboard"
    kuberay_dir.mkdir()
    both = [f"--dashboard-dir={kuberay_dir}", f"--dashboard-ui-dir={explicit}"]
    assert main_mod.ui_directory(parse_options(both, env)) == str(explicit)
    only = [f"--dashboard-dir={kuberay_dir}"]
    assert main_mod.ui_directory(parse_options(only, env)) == str(kuberay_dir)
    missing = [f"--dashboard-dir={tmp_path / 'absent'}"]
    assert main_mod.ui_directory(parse_options(missing, env)) == ""
