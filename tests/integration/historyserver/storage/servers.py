"""The real storage servers the contract suite runs against, each on 127.0.0.1 only:

* moto's S3 server (``moto_server``, from PyPI's moto with flask and flask-cors), a subprocess;
* fake-gcs-server (``hack/build/build_fake_gcs_server.py``), a subprocess with the memory backend;
* Azurite's blob service (``hack/build/install_azurite.py``), a subprocess with a temp location
  and telemetry off.

Each ``start_*`` returns once the server accepts connections, and raises ``ServerError``
with the server's log tail when it does not within a bounded wait.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

#: Azurite's well-known development account (public, in Azurite's documentation)
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
#: bounded wait for a server to listen
START_SECONDS = 60.0


class ServerError(Exception):
    """A server did not start; the message carries its log tail."""


def hack_module(name: str) -> Any:
    """Import ``hack.<name>`` (e.g. ``build.install_azurite``, ``cluster.object_store``)."""
    return importlib.import_module(f"hack.{name}")


def _listening_port(pid: int) -> int | None:
    """The TCP port process ``pid`` listens on: ``hack/cluster/object_store.py``'s reading of
    /proc."""
    port: int | None = hack_module("cluster.object_store").listening_port(pid)
    return port


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-2000:]
    except OSError:
        return ""


class Subprocess:
    """A server subprocess with its log file; :meth:`stop` terminates it (by its pid)."""

    def __init__(self, args: list[str], log: Path, cwd: Path) -> None:
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd
            )

    def wait_port(self) -> int:
        """Poll (bounded) until the process listens; its port."""
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"exited with {self.process.returncode}: {_tail(self.log)}")
            port = _listening_port(self.process.pid)
            if port is not None:
                return port
            time.sleep(0.05)
        self.stop()
        raise ServerError(f"not listening after {START_SECONDS:.0f}s: {_tail(self.log)}")

    def stop(self) -> None:
        """Terminate the process and reap it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_moto(workdir: Path) -> tuple[Subprocess, str]:
    """moto's S3 server (``moto_server``, beside this interpreter) on 127.0.0.1, an
    ephemeral port; (process, endpoint). A process of its own, not moto's in-process
    thread, so it does not share the tests' interpreter lock."""
    binary = Path(sys.executable).with_name("moto_server")
    if not binary.exists():
        raise ServerError(f"no {binary}: install the dev extra (moto, flask, flask-cors)")
    process = Subprocess([str(binary), "-H", "127.0.0.1", "-p", "0"], workdir / "moto.log", workdir)
    port = process.wait_port()
    return process, f"http://127.0.0.1:{port}"


def start_fake_gcs(binary: Path, workdir: Path) -> tuple[Subprocess, str]:
    """fake-gcs-server over HTTP on 127.0.0.1 (memory backend); (process, endpoint)."""
    process = Subprocess(
        [
            str(binary),
            "-scheme",
            "http",
            "-host",
            "127.0.0.1",
            "-port",
            "0",
            "-backend",
            "memory",
            "-log-level",
            "warn",
        ],
        workdir / "fake-gcs-server.log",
        workdir,
    )
    port = process.wait_port()
    return process, f"http://127.0.0.1:{port}"


def create_gcs_bucket(endpoint: str, bucket: str) -> None:
    """Create ``bucket`` on the emulator (buckets.insert)."""
    request = urllib.request.Request(
        f"{endpoint}/storage/v1/b?project=test",
        data=f'{{"name": "{bucket}"}}'.encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        answer.read()


def start_azurite(binary: Path, workdir: Path) -> tuple[Subprocess, str]:
    """azurite-blob on 127.0.0.1 (an ephemeral port, data in ``workdir``, no telemetry);
    (process, connection string)."""
    location = workdir / "azurite-data"
    location.mkdir()
    process = Subprocess(
        [
            str(binary),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            "0",
            "--location",
            str(location),
            "--disableTelemetry",
            "--skipApiVersionCheck",
            "--loose",
        ],
        workdir / "azurite.log",
        workdir,
    )
    port = process.wait_port()
    return process, (
        "DefaultEndpointsProtocol=http;"
        f"AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"BlobEndpoint=http://127.0.0.1:{port}/{AZURITE_ACCOUNT};"
    )
