"""moto's S3 server as the control plane starts it (hack/cluster/object_store.py) sends no
reverse DNS query for the address it listens on: on this machine the resolver is off the
machine, and the real node's bridge address is in no ``/etc/hosts``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hack.cluster import object_store

# Every reverse lookup the server process makes is written to a file and refused.
TRAP = """
import os, socket
_log = os.environ["LOOKUP_TRAP_LOG"]
def gethostbyaddr(address):
    with open(_log, "a") as f:
        f.write(address + "\\n")
    raise socket.herror(1, "trapped: no reverse lookups here")
socket.gethostbyaddr = gethostbyaddr
"""
HOST = "127.0.0.87"  # a loopback address /etc/hosts does not name


@pytest.fixture
def trap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(TRAP)
    log = tmp_path / "lookups.log"
    log.touch()
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("LOOKUP_TRAP_LOG", str(log))
    return log


def test_the_object_store_starts_without_looking_its_address_up(tmp_path: Path, trap: Path) -> None:
    store = object_store.ObjectStoreServer(tmp_path / "store", HOST)
    (tmp_path / "store").mkdir()
    try:
        info = store.start()  # creates the bucket: the server answers
    finally:
        store.stop()
    assert info.endpoint.startswith(f"http://{HOST}:")
    assert trap.read_text() == ""


def test_plain_moto_server_would_have_looked_it_up(tmp_path: Path, trap: Path) -> None:
    """The trap sees the lookup moto's own entry makes (what the launcher avoids)."""
    binary = object_store.moto_server_binary()
    python = object_store.moto_python(binary)
    code = (
        "import sys\n"
        "from werkzeug.serving import make_server\n"
        "make_server(sys.argv[1], 0, lambda e, s: []).server_close()\n"
    )
    done = subprocess.run([str(python), "-c", code, HOST], timeout=60, check=False)
    assert done.returncode == 0
    assert trap.read_text().split() == [HOST]
