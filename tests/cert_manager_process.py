"""Run the real cert-manager controller (``hack/build/build_cert_manager.py``: cert-manager
v1.19.4's own control loops for SelfSigned and CA issuers) against the test apiserver.

The process gets its own copy of the session's kubeconfig in its work directory and watches
only one namespace (``--namespace``), so the fake-based mTLS tests sharing the apiserver, which
play cert-manager themselves, are never raced by it. It has no leader election, metrics or
health server (our ``main`` starts none); :meth:`CertManagerProcess.start` returns once the
log shows every control loop started, and its log stays in the work directory (pytest keeps
the temp dirs of the last runs) with its tail quoted in every failure raised here.

Shared by the integration tests (``tests/integration/mtls``) and the real-node e2e test
(``tests/e2e/test_mtls_real.py``), with :func:`crd_dir` (cert-manager's CRDs) and
:func:`binary_or_skip` (the controller binary, or the test skipped with the reason).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

__all__ = [
    "REQUIRE_ENV",
    "CertManagerError",
    "CertManagerProcess",
    "binary_or_skip",
    "crd_dir",
]

#: set: a missing controller binary is built, and a failed build fails the test
REQUIRE_ENV = "KUBERAY_REQUIRE_CERT_MANAGER"

#: what our main logs once per control loop it starts (see hack/cert-manager/main.go)
STARTED = "starting controller"


class CertManagerError(Exception):
    """cert-manager could not be started or died; the message carries its log's tail."""


class CertManagerProcess:
    """One cert-manager controller process scoped to ``namespace``."""

    def __init__(self, binary: Path, kubeconfig: Path, workdir: Path, namespace: str) -> None:
        self.binary = binary
        self.workdir = workdir
        self.namespace = namespace
        self.kubeconfig = workdir / "kubeconfig"
        shutil.copyfile(kubeconfig, self.kubeconfig)
        self.log_path = workdir / "cert-manager.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the controller's log (with the log's path)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            text = ""
        tail = "\n".join(text.splitlines()[-lines:])
        return f"--- {self.log_path} (last {lines} lines) ---\n{tail}"

    def check_alive(self) -> None:
        """Raise :class:`CertManagerError` if the process has exited."""
        code = None if self._proc is None else self._proc.poll()
        if self._proc is None or code is not None:
            raise CertManagerError(f"cert-manager exited with code {code}:\n{self.log_tail()}")

    def _loops_started(self, expected: int) -> bool:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return False
        return text.count(STARTED) >= expected

    def start(self, *, loops: int = 11, timeout: float = 120.0) -> None:
        """Start the controller; return once ``loops`` control loops logged their start."""
        with self.log_path.open("wb") as log:
            self._proc = subprocess.Popen(
                [
                    str(self.binary),
                    f"--kubeconfig={self.kubeconfig}",
                    f"--namespace={self.namespace}",
                    "--workers=2",
                    "-v=2",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
            )
        deadline = time.monotonic() + timeout
        while not self._loops_started(loops):
            self.check_alive()
            if time.monotonic() > deadline:
                self.stop()
                raise CertManagerError(
                    f"cert-manager did not start its loops within {timeout:.0f}s:\n"
                    + self.log_tail()
                )
            time.sleep(0.1)

    def stop(self) -> None:
        """Terminate the controller (SIGTERM, then SIGKILL after 15 s)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def crd_dir() -> Path:
    """The directory of cert-manager's CRD YAMLs (fetched into the cache when missing)."""
    from hack.build import fetch_cert_manager

    return Path(fetch_cert_manager.fetch())


def binary_or_skip() -> Path:
    """The cached cert-manager controller binary. Skips the calling test, with the reason,
    when it is not built (and no build is under way) and ``REQUIRE_ENV`` is unset; with it
    set, a missing binary is built and a failed build fails the test."""
    from hack.build import build_cert_manager as build

    required = bool(os.environ.get(REQUIRE_ENV))
    if not (required or build.binary_path().exists() or build.build_in_progress()):
        pytest.skip(
            f"cert-manager {build.VERSION} controller not built ({build.binary_path()}): "
            f"run `make cert-manager` (or set {REQUIRE_ENV}=1 to build it here)"
        )
    try:
        return Path(build.build())
    except build.BuildError as exc:
        if required:
            pytest.fail(f"{REQUIRE_ENV} is set: {exc}", pytrace=False)
        pytest.skip(f"cert-manager {build.VERSION} cannot be built here: {exc}")
