"""The real scheduler-plugins components next to the full local cluster.

:class:`SchedulerPlugins` runs the scheduler built by ``hack/build/build_scheduler_plugins.py``
(kube-scheduler v1.33 libraries with scheduler-plugins v0.33.5 compiled in) as a second
scheduler named ``scheduler-plugins-scheduler`` (the name KubeRay's scheduler-plugins
integration puts in ``spec.schedulerName``) with only the Coscheduling plugin, the way the
project's ``manifests/coscheduling`` configures it, and the project's PodGroup controller
(``PodGroup.status``). Both use the cluster's admin kubeconfig, listen on loopback only,
and log to ``<workdir>/scheduler-plugins-*.log``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

import yaml

from tests.e2e.harness import free_port, tail

SCHEDULER_NAME = "scheduler-plugins-scheduler"
#: Coscheduling's Permit wait for the rest of a gang (the project's sample uses 10 s).
PERMIT_WAITING_SECONDS = 10


def build() -> dict[str, Path]:
    """The cached binaries (built on first use); raises the build's ``BuildError``."""
    from hack.build import build_scheduler_plugins

    return build_scheduler_plugins.build()


def crd_dir() -> Path:
    """scheduler-plugins' CRDs (PodGroup, ElasticQuota) from its Go module."""
    from hack.build import fetch_crds

    return Path(fetch_crds.fetch("scheduler-plugins"))


def scheduler_config(kubeconfig: Path) -> dict[str, Any]:
    """KubeSchedulerConfiguration: one profile, Coscheduling sorting the queue and
    enabled at every extension point it implements (PreFilter, PostFilter, Permit,
    Reserve, PostBind)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 200, "burst": 400},
        "profiles": [
            {
                "schedulerName": SCHEDULER_NAME,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {
                        "enabled": [{"name": "Coscheduling"}],
                        "disabled": [{"name": "*"}],
                    },
                },
                "pluginConfig": [
                    {
                        "name": "Coscheduling",
                        "args": {"permitWaitingTimeSeconds": PERMIT_WAITING_SECONDS},
                    }
                ],
            }
        ],
    }


class SchedulerPlugins:
    """The scheduler-plugins scheduler and PodGroup controller as child processes."""

    def __init__(self, binaries: dict[str, Path], kubeconfig: Path, workdir: Path) -> None:
        self.binaries = binaries
        self.kubeconfig = kubeconfig
        self.workdir = workdir
        self.port = 0
        self._procs: dict[str, tuple[subprocess.Popen[bytes], IO[bytes], Path]] = {}

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        log_path = self.workdir / f"scheduler-plugins-{name}.log"
        log_file = log_path.open("ab")
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        self._procs[name] = (popen, log_file, log_path)

    def start(self, timeout: float = 120.0) -> None:
        """Start both; return once the scheduler answers ``/healthz``."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "scheduler-plugins-config.yaml"
        config.write_text(yaml.safe_dump(scheduler_config(self.kubeconfig)))
        self.port = free_port()
        self._spawn(
            "scheduler",
            [
                str(self.binaries["kube-scheduler"]),
                f"--config={config}",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--cert-dir={self.workdir / 'scheduler-plugins-certs'}",
                "--profiling=false",
            ],
        )
        # controller-runtime reads KUBECONFIG; "0" turns its metrics and probe servers off
        self._spawn(
            "controller",
            [str(self.binaries["controller"]), "--metricsAddr=0", "--probeAddr=0"],
            env={"KUBECONFIG": str(self.kubeconfig)},
        )
        self._wait_healthy(time.monotonic() + timeout)

    def _wait_healthy(self, deadline: float) -> None:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # its self-signed serving cert, on loopback
        url = f"https://127.0.0.1:{self.port}/healthz"
        while True:
            for name, (popen, _, log_path) in self._procs.items():
                if popen.poll() is not None:
                    raise RuntimeError(
                        f"scheduler-plugins {name} exited with {popen.returncode}:\n"
                        f"{tail(log_path)}"
                    )
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(url, context=ctx, timeout=2) as resp,
            ):
                if resp.status == 200:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"scheduler-plugins scheduler not healthy at {url}")
            time.sleep(0.2)

    def log_tails(self) -> str:
        """The last lines of both logs (for a failure message)."""
        return "\n".join(f"== {n}\n{tail(p)}" for n, (_, _, p) in self._procs.items())

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s; idempotent."""
        for popen, _, _ in self._procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGTERM)
        for popen, log_file, _ in self._procs.values():
            try:
                popen.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(popen.pid, signal.SIGKILL)
                popen.wait()
            log_file.close()
        self._procs.clear()
