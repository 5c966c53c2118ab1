"""``hack/controlplane.py up --history-server``: the local S3 store the collector writes to,
and the history server over it (URL in ``DIR/history-server.url``).

The CLI is started as `make run` would start it (no real node: the store binds 127.0.0.1);
the test then talks to the store only through what ``DIR/object-store.env`` says, with the
history server's own storage layer, as a collector given those env vars would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from hack.cluster import history_server, object_store
from kuberay.historyserver.storage.config import open_store, storage_settings
from tests.listening import listening_sockets, wildcard

ROOT = Path(__file__).resolve().parents[3]

START_SECONDS = 180.0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class _Up:
    """A running ``controlplane.py up --history-server`` and its output file."""

    def __init__(self, workdir: Path, out: Path) -> None:
        self.workdir = workdir
        self.out_path = out
        self._out = out.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "hack" / "controlplane.py"),
                "up",
                "--dir",
                str(workdir),
                "--history-server",
            ],
            stdout=self._out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )

    def output(self) -> str:
        return self.out_path.read_text(errors="replace")

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while f"export KUBECONFIG={self.workdir / 'kubeconfig'}" not in self.output():
            assert self.proc.poll() is None, self.output()
            assert time.monotonic() < deadline, f"not ready:\n{self.output()}"
            time.sleep(0.2)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._out.close()


@pytest.fixture
def up(tmp_path: Path) -> Iterator[_Up]:
    running = _Up(tmp_path / "cp", tmp_path / "up.out")
    try:
        running.wait_ready()
        yield running
    finally:
        running.close()


async def test_up_history_server_serves_the_env_file_s_store(up: _Up) -> None:
    env_file = up.workdir / object_store.ENV_FILE
    assert f"collector env in {env_file}" in up.output()
    env = object_store.read_env_file(env_file)
    assert list(env) == list(object_store.ENV_KEYS)
    assert env["STORAGE_BACKEND"] == "s3" and env["S3_BUCKET"] == "ray-historyserver"
    assert env["S3_ENDPOINT"].startswith("http://127.0.0.1:")

    # moto listens on loopback only, on the port the env file names
    pid = int((up.workdir / object_store.PID_FILE).read_text())
    listeners = listening_sockets([pid])
    assert listeners, f"moto_server[{pid}] listens on nothing"
    assert not [x for x in listeners if wildcard(x.address)], listeners
    port = int(env["S3_ENDPOINT"].rsplit(":", 1)[1])
    assert {(x.address, x.port) for x in listeners if x.proto.startswith("tcp")} == {
        ("127.0.0.1", port)
    }

    # the env file's values, unchanged, open the store through the history server's own layer
    store = await open_store(storage_settings(env=env))
    try:
        key = "cluster-metadata/raycluster/default_raycluster-hs/session_2026-01-01_00-00-00_000001"
        await store.put(key, b"")
        await store.put("cluster-history/raycluster/default/raycluster-hs/x/logs/a.log", b"hello")
        listed = await store.list("cluster-metadata/raycluster/default_raycluster-hs/")
        assert [o.key for o in listed.objects] == [key]
        got = await store.get("cluster-history/raycluster/default/raycluster-hs/x/logs/a.log")
        assert got == b"hello"
    finally:
        await store.close()

    # the history server runs over that store, on loopback, and its URL is written down
    url = history_server.read_url(up.workdir)
    assert url is not None and url.startswith("http://127.0.0.1:"), up.output()
    assert f"history server at {url}" in up.output()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{url}/readz", timeout=10) as resp:
        assert resp.read() == b"ok"
    with opener.open(f"{url}/clusters", timeout=10) as resp:
        names = {(e["namespace"], e["name"]) for e in json.loads(resp.read())}
    assert ("default", "raycluster-hs") in names
    server_pid = int((up.workdir / history_server.PID_FILE).read_text())
    server_listeners = listening_sockets([server_pid])
    assert server_listeners and not [x for x in server_listeners if wildcard(x.address)]

    up.proc.send_signal(signal.SIGTERM)
    assert up.proc.wait(timeout=30) == 0, up.output()
    assert not _pid_alive(pid), "moto_server outlived the control plane"
    assert not _pid_alive(server_pid), "the history server outlived the control plane"
    assert not env_file.exists()
    assert history_server.read_url(up.workdir) is None
