#!/usr/bin/env python3
"""Build the scheduler-plugins scheduler and controller from the Go module proxy, once.

``sigs.k8s.io/scheduler-plugins`` ships ``cmd/scheduler`` (kube-scheduler with its plugins,
Coscheduling among them, compiled in) and ``cmd/controller`` (the PodGroup controller
that keeps ``PodGroup.status`` current). Both are built from ``hack/scheduler-plugins``
(go.mod/go.sum committed: the module at :data:`VERSION` with the Kubernetes replaces its
own go.mod carries, so the graph is exactly the release's) into
``$KUBERAY_BIN_CACHE/scheduler-plugins-<version>/`` (default ``~/.cache/kuberay/bin``), with
the build's wall time in ``build-seconds`` beside them. Rebuilt only when missing.

Why :data:`VERSION`: it is the release KubeRay's go.mod requires, and the only one the Go
module proxy serves here. The release matching our v1.36 control plane does not exist
(the newest tag is v0.35.7, Kubernetes 1.35) and the proxy answers ``403 This module
version is not available`` for v0.35.7 and v0.35.0. Its kube-scheduler 1.33 libraries
talk to a 1.36 apiserver within the supported client skew.

Usage: python hack/build/build_scheduler_plugins.py [--print-path]
Exit 1 with a one-line reason on failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.gobuild import build_cli, exclusive_lock, go_binary, record_build_seconds

MODULE = "sigs.k8s.io/scheduler-plugins"
VERSION = "v0.33.5"
MODULE_DIR = Path(__file__).resolve().parents[1] / "scheduler-plugins"
#: binary name in the cache -> package built
BINARIES: dict[str, str] = {
    "kube-scheduler": f"{MODULE}/cmd/scheduler",
    "controller": f"{MODULE}/cmd/controller",
}


class BuildError(Exception):
    """The build failed; the message is one line for the user."""


def cache_dir() -> Path:
    """``$KUBERAY_BIN_CACHE/scheduler-plugins-<version>`` (default ``~/.cache/kuberay/bin``)."""
    base = os.environ.get("KUBERAY_BIN_CACHE") or str(Path.home() / ".cache" / "kuberay" / "bin")
    return Path(base) / f"scheduler-plugins-{VERSION}"


def binary_path(name: str) -> Path:
    """Where the cached binary ``name`` (a key of :data:`BINARIES`) is (may not exist yet)."""
    return cache_dir() / name


def build() -> dict[str, Path]:
    """Every binary of :data:`BINARIES`, building the missing ones first (waits for a
    build another process has under way)."""
    if any(not binary_path(name).exists() for name in BINARIES):
        with exclusive_lock(cache_dir() / ".build.lock"):
            _build_missing([name for name in BINARIES if not binary_path(name).exists()])
    return {name: binary_path(name) for name in BINARIES}


def _build_missing(missing: list[str]) -> None:
    if missing:
        out = cache_dir()
        out.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod"}
        start = time.monotonic()
        for name in missing:
            tmp = out / f".{name}.tmp"
            proc = subprocess.run(
                [
                    go_binary(BuildError),
                    "build",
                    "-trimpath",
                    "-ldflags=-s -w",
                    "-o",
                    str(tmp),
                    BINARIES[name],
                ],
                cwd=MODULE_DIR,
                env=env,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
                sys.stderr.write(proc.stderr[-4000:])
                tmp.unlink(missing_ok=True)
                raise BuildError(
                    f"go build {BINARIES[name]}@{VERSION} failed: {(lines or ['?'])[-1]}"
                )
            tmp.rename(binary_path(name))
        seconds = time.monotonic() - start
        record_build_seconds(out, seconds)
        print(f"built scheduler-plugins {VERSION} in {seconds:.0f}s -> {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    return build_cli(
        "build_scheduler_plugins.py", __doc__, lambda: build().values(), cache_dir, BuildError, argv
    )


if __name__ == "__main__":
    sys.exit(main())
