"""Process plumbing shared by :mod:`kuberay.testing.envtest` and its full-mode components.

Free loopback ports, a child process that dies with the thread that started it, the spec of
one control-plane component, and finding or signalling processes by pid.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import os
import signal
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import yaml

from kuberay.testing.pki import Certs, write_private

CONTEXT_NAME = "kuberay-local"
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
LOG_TAIL_LINES = 20


class ControlPlaneError(RuntimeError):
    """A component failed to start or answer; the message includes its log tail."""


class Plane(Protocol):
    """What a component's callbacks read of :class:`kuberay.testing.envtest.ControlPlane`
    (which imports this module, so it is named here structurally)."""

    dir: Path
    full: bool
    real_nodes: int
    node_names: list[str]
    certs: Certs | None
    server: str
    etcd_url: str
    etcd_peer_port: int
    apiserver_port: int
    controller_manager_port: int
    scheduler_port: int
    kwok_port: int
    extra_apiserver_args: list[str]

    @property
    def etcd_data_dir(self) -> Path: ...

    @property
    def components_dir(self) -> Path: ...

    def component_kubeconfig(self, name: str) -> Path: ...

    def api(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any: ...

    def ssl_context(self) -> ssl.SSLContext: ...

    def unready_nodes(self) -> list[str]: ...

    def _check_alive(self, name: str) -> None: ...

    def _timeout(self, name: str, what: str) -> ControlPlaneError: ...

    def _serving_ca_context(self) -> ssl.SSLContext: ...

    def _wait_url(
        self, name: str, url: str, deadline: float, context: ssl.SSLContext | None = None
    ) -> None: ...

    def _write_kubeconfig(self, path: Path, cert: Path, key: Path) -> None: ...


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1 (racy by nature, like envtest's)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of the log at ``path`` (``(no log)`` when unreadable)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _load_prctl() -> Callable[..., int] | None:
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn: SIGKILL the child when the thread that started it dies (Linux only).

    Covers the cases atexit cannot (SIGKILL of pytest, an unhandled SIGTERM).
    """
    if PRCTL is not None:
        PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


@dataclass
class Proc:
    """One running component: its process, log and launch time."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]
    started: float


@dataclass(frozen=True)
class ComponentSpec:
    """One control-plane process: which binary, how to build its args, how to wait for it."""

    name: str
    binary: str
    args: Callable[[Plane], list[str]]
    wait_ready: Callable[[Plane, float], None]
    env: Callable[[Plane], Mapping[str, str]] | None = None
    """Environment overrides for the process (on top of ours)."""
    before_start: Callable[[Plane], None] | None = None
    """Runs just before each launch (after the components listed earlier are ready)."""


def post_json(url: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST ``body`` as JSON to a plain-HTTP ``url`` (etcd's gateway); the decoded answer.

    An error status raises :class:`ControlPlaneError` with the answer's body.
    """
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            result: dict[str, Any] = json.loads(r.read())
            return result
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")
        raise ControlPlaneError(f"POST {url}: {exc.code} {detail}") from None


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):  # a zombie counts as gone
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


def read_pid(pid_file: Path) -> int | None:
    """The pid written in ``pid_file``, or None when it is missing or unreadable."""
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def iter_component_pids(workdir: Path) -> Iterator[tuple[int, str]]:
    """(pid, cmdline) of live processes whose command line mentions ``workdir``."""
    needle = str(workdir.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmdline and pid_alive(int(entry.name)):
            yield int(entry.name), cmdline


def write_kubeconfig(path: Path, server: str, ca: Path, cert: Path, key: Path) -> None:
    """Write (atomically, mode 0600) a kubeconfig for ``server`` (trusting the PEM CA at
    ``ca``) that authenticates with the client certificate ``cert``/``key``."""

    def b64(p: Path) -> str:
        return base64.b64encode(p.read_bytes()).decode()

    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": CONTEXT_NAME,
                "cluster": {
                    "server": server,
                    "certificate-authority-data": b64(ca),
                },
            }
        ],
        "users": [
            {
                "name": CONTEXT_NAME,
                "user": {
                    "client-certificate-data": b64(cert),
                    "client-key-data": b64(key),
                },
            }
        ],
        "contexts": [
            {
                "name": CONTEXT_NAME,
                "context": {"cluster": CONTEXT_NAME, "user": CONTEXT_NAME},
            }
        ],
        "current-context": CONTEXT_NAME,
        "preferences": {},
    }
    tmp = path.with_name(f".{path.name}.tmp")
    write_private(tmp, yaml.safe_dump(doc, sort_keys=False).encode())
    os.replace(tmp, path)
