#!/usr/bin/env python3
"""Build cert-manager's controller (self-signed + CA subset) from the Go module proxy, once.

    python hack/build/build_cert_manager.py                # build if missing; print the binary's path
    python hack/build/build_cert_manager.py --print-path   # where it goes, without building

cert-manager's own controller binary lives in separate Go modules
(``github.com/cert-manager/cert-manager/cmd/controller``, ``.../controller-binary``) that the
module proxy here does not serve; the main module ``github.com/cert-manager/cert-manager`` is
served, and its ``pkg/controller`` packages register every control loop. ``hack/cert-manager``
(main.go, go.mod, go.sum committed) is our own small ``main`` over those packages: it runs the
issuers/clusterissuers readiness loops, the certificates-* loops (trigger, key-manager,
request-manager, issuing, readiness, revision-manager), the built-in CertificateRequest
approver and the SelfSigned and CA CertificateRequest signers: what a self-signed + CA PKI
such as the RayCluster mTLS one needs. No ACME, Vault, Venafi, ingress/gateway shims,
metrics/healthz servers or leader election.

The binary is built with ``CGO_ENABLED=0``, ``-trimpath``, ``-p 1`` and at the lowest CPU
priority (``nice 19``) into ``$KUBERAY_CACHE/cert-manager-<version>/controller`` (default
``~/.cache/kuberay``), with the wall time of its build in ``build-seconds`` beside it, and is
rebuilt only when missing. Only ``tests/integration/mtls/test_mtls_real_cert_manager.py``
runs it.

Exit 1 with a one-line reason on failure.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.gobuild import (
    build_cli,
    cache_root,
    exclusive_lock,
    go_binary,
    record_build_seconds,
    recorded_build_seconds,
)

MODULE = "github.com/cert-manager/cert-manager"
VERSION = "v1.19.4"
MODULE_DIR = Path(__file__).resolve().parents[1] / "cert-manager"


class BuildError(Exception):
    """The build failed; the message is one line for the user."""


def cache_dir() -> Path:
    """``$KUBERAY_CACHE/cert-manager-<version>`` (default ``~/.cache/kuberay/...``)."""
    return cache_root() / f"cert-manager-{VERSION}"


def binary_path() -> Path:
    """Where the controller binary is (may not exist yet)."""
    return cache_dir() / "controller"


def build_seconds() -> float | None:
    """Wall time of the build that produced the cached binary (None if unknown)."""
    return recorded_build_seconds(cache_dir())


def build_in_progress() -> bool:
    """True while another process holds the build lock (a build is under way)."""
    lock = cache_dir() / ".build.lock"
    if not lock.exists():
        return False
    with open(lock) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def build() -> Path:
    """Return the cached controller binary, building it first if missing (waits for a build
    another process has under way)."""
    out = binary_path()
    if out.exists():
        return out
    with exclusive_lock(cache_dir() / ".build.lock"):
        if out.exists():  # built by the process that held the lock
            return out
        return _build(out)


def _build(out: Path) -> Path:
    go = go_binary(BuildError)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / ".controller.tmp"
    env = {
        **os.environ,
        "CGO_ENABLED": "0",
        "GOFLAGS": "-mod=mod -buildvcs=false",
        "GOTOOLCHAIN": "local",  # never fetch another toolchain
    }
    start = time.monotonic()
    # lowest CPU priority, one package at a time: the machine's cores are shared
    argv = ["nice", "-n", "19", go, "build", "-p", "1", "-trimpath", "-ldflags=-s -w"]
    proc = subprocess.run(
        [*argv, "-o", str(tmp), "."],
        cwd=MODULE_DIR,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        sys.stderr.write(proc.stderr[-4000:])
        tmp.unlink(missing_ok=True)
        raise BuildError(f"go build (cert-manager {VERSION}) failed: {(lines or ['?'])[-1]}")
    elapsed = time.monotonic() - start
    tmp.rename(out)
    record_build_seconds(out.parent, elapsed)
    print(f"built cert-manager controller {VERSION} in {elapsed:.0f}s -> {out}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    return build_cli(
        "build_cert_manager.py", __doc__, lambda: [build()], binary_path, BuildError, argv
    )


if __name__ == "__main__":
    sys.exit(main())
