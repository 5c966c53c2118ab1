#!/usr/bin/env python3
"""Build fake-gcs-server (a Google Cloud Storage emulator) from the Go module proxy, once.

    python hack/build_fake_gcs_server.py                # build if missing; print the path
    python hack/build_fake_gcs_server.py --print-path   # where it goes, without building

The history server's storage contract suite (tests/integration/historyserver/storage) runs
its GCS backend against this emulator on 127.0.0.1; it is the program form of the
``fakestorage`` library KubeRay's own GCS tests use. The binary is
``go install github.com/fsouza/fake-gcs-server@<version>`` (its go.mod has no replace
directives, so its own go.sum pins the graph), statically linked (``CGO_ENABLED=0``). It
lands in ``$KUBERAY_CACHE`` (default ``~/.cache/kuberay``)
``/fake-gcs-server-<version>/fake-gcs-server`` with the build's wall time in
``build-seconds``, and is rebuilt only when missing; concurrent callers wait for one build.
Exit 1 with a one-line reason on failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gobuild import (  # hack/
    build_cli,
    cache_root,
    exclusive_lock,
    go_binary,
    recorded_build_seconds,
)

FAKE_GCS_MODULE = "github.com/fsouza/fake-gcs-server"
FAKE_GCS_VERSION = "v1.56.1"


class BuildError(Exception):
    """The build failed; the message is one line for the user."""


def cache_dir() -> Path:
    """``$KUBERAY_CACHE/fake-gcs-server-<version>``."""
    return cache_root() / f"fake-gcs-server-{FAKE_GCS_VERSION}"


def binary_path() -> Path:
    """Where the pinned fake-gcs-server binary is (may not exist yet)."""
    return cache_dir() / "fake-gcs-server"


def build_seconds() -> float | None:
    """Wall time of the build that produced the cached binary (None if unknown)."""
    return recorded_build_seconds(cache_dir())


def build() -> Path:
    """Return the cached binary, building it first if missing (waits for a build another
    process has under way)."""
    out = binary_path()
    if out.exists():
        return out
    with exclusive_lock(cache_dir() / ".build.lock"):
        if out.exists():  # built by the process that held the lock
            return out
        return _build(out)


def _build(out: Path) -> Path:
    go = go_binary(BuildError)
    gobin = out.parent / ".gobin.tmp"
    shutil.rmtree(gobin, ignore_errors=True)
    env = dict(os.environ)
    # `go install pkg@version` refuses -mod flags; keep any other GOFLAGS the user set
    env["GOFLAGS"] = " ".join(f for f in env.get("GOFLAGS", "").split() if not f.startswith("-mod"))
    env["GOBIN"] = str(gobin)
    env["CGO_ENABLED"] = "0"
    start = time.monotonic()
    target = f"{FAKE_GCS_MODULE}@{FAKE_GCS_VERSION}"
    proc = subprocess.run(
        [go, "install", "-trimpath", "-ldflags", "-s -w", target],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        sys.stderr.write(proc.stderr[-4000:])
        shutil.rmtree(gobin, ignore_errors=True)
        raise BuildError(f"go install {target} failed: " + (lines or ["?"])[-1])
    elapsed = time.monotonic() - start
    (gobin / "fake-gcs-server").rename(out)
    shutil.rmtree(gobin, ignore_errors=True)
    (out.parent / "build-seconds").write_text(f"{elapsed:.0f}\n")
    print(f"built fake-gcs-server {FAKE_GCS_VERSION} in {elapsed:.0f}s -> {out}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    return build_cli(
        "build_fake_gcs_server.py", __doc__, lambda: [build()], binary_path, BuildError, argv
    )


if __name__ == "__main__":
    sys.exit(main())
