"""Ray's own dashboard UI, served by ``kuberay-history-server`` for a stored session, in a real
browser (headless Chromium, Debian's package).

The store is the recorded Ray 2.60 session (``tests/unit/historyserver/data``) as our collector
files it, written to a ``local`` store directory; the UI build is the one inside the Ray 2.60
image built here (``hack/release/ray_ui.py``), given to the server as ``--dashboard-dir`` with one
directory per ``major.minor``, exactly as the server image lays it out. After
``/enter_cluster`` (which sets the session cookies) the browser opens the UI's pages and a
person would see: the job list with each job's status, the job's task table with the task
names and states, the driver's log, and the actors. A screenshot of each page is kept
(``tests/chromium.artifacts_dir()``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kuberay.historyserver.layout import Layout
from tests.chromium import Browser, artifacts_dir, require_chromium
from tests.unit.historyserver.server.stores import CLUSTER, NODE, SESSION, collector_store

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def ui_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``/dashboard`` as the server image has it: the Ray 2.60 image's build under ``2.60``."""
    from hack.release import images, ray_ui

    archive = images.archive_path("ray-new")
    if not archive.exists():
        pytest.skip(f"{archive} not built (make images)")
    root = tmp_path_factory.mktemp("dashboard")
    ray_ui.extract_dashboard_ui(archive, root / ray_ui.major_minor(images.RAY_NEW_VERSION))
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def server(tmp_path: Path, ui_dir: Path) -> Iterator[str]:
    store = await collector_store(tmp_path)
    driver_log = Layout(CLUSTER).log_key(SESSION, NODE, "job-driver-capture-job-3.log")
    await store.put(driver_log, b"capture-job-3 driver says hello\n")
    root = tmp_path / "store"
    for key, body in store.objects.items():
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    port = _free_port()
    env = {**os.environ, "STORAGE_BACKEND": "local", "LOCAL_STORAGE_DIR": str(root)}
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [
            str(Path(os.sys.executable).with_name("kuberay-history-server")),
            f"--listen=127.0.0.1:{port}",
            f"--dashboard-dir={ui_dir}",
            "--dashboard-ui-from-ray=false",
            "--log-format=console",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with OPENER.open(f"{url}/readz", timeout=2) as resp:
                    if resp.read() == b"ok":
                        break
            except OSError:
                pass
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


async def test_rays_dashboard_shows_a_stored_sessions_jobs_tasks_and_actors(
    server: str, tmp_path: Path
) -> None:
    require_chromium()
    shots = artifacts_dir()
    async with Browser.start(tmp_path) as browser:
        await browser.goto(
            f"{server}/enter_cluster/{CLUSTER.namespace}/raycluster/{CLUSTER.name}/{SESSION}"
        )
        await browser.wait_for_text(['"result": "success"'], timeout=20)

        await browser.goto(f"{server}/#/jobs")
        text = await browser.wait_for_text(
            ["capture-job-3", "capture-job-2", "SUCCEEDED", "FAILED"], timeout=60
        )
        assert "Job finished successfully." in text
        (shots / "history-ui-jobs.png").write_bytes(await browser.screenshot())

        await browser.goto(f"{server}/#/jobs/capture-job-3")
        await browser.wait_for_text(
            ["Task Table", "Finished: 13", "Failed: 1", "capture-job-3 driver says hello"],
            timeout=60,
        )
        assert await browser.click_text("Task Table") >= 1
        text = await browser.wait_for_text(["square", "Counter.incr", "FINISHED"], timeout=30)
        assert "NORMAL_TASK" in text and "ACTOR_TASK" in text
        (shots / "history-ui-job-tasks.png").write_bytes(await browser.screenshot())

        await browser.goto(f"{server}/#/actors")
        text = await browser.wait_for_text(["Counter"], timeout=60)
        assert "DEAD" in text  # the recorded actor was killed
        (shots / "history-ui-actors.png").write_bytes(await browser.screenshot())
    assert not [c for c in browser.console if c.startswith("exception")], browser.console
