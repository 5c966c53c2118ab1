#!/usr/bin/env python3
"""Install Azurite (the Azure Storage emulator) from npm, once, into a cache.

    python hack/build/install_azurite.py                # install if missing; print azurite-blob's path
    python hack/build/install_azurite.py --print-path   # where it goes, without installing

The history server's storage contract suite (tests/integration/historyserver/storage) runs
its Azure Blob backend against ``azurite-blob`` on 127.0.0.1. Version
:data:`AZURITE_VERSION` is the newest whose package declares ``node >= 10`` (3.37 needs
node 22; this machine's node is 20); KubeRay's manifests pin 3.33.0. It is
``npm install --prefix $KUBERAY_CACHE/azurite-<version> azurite@<version>`` (default cache
``~/.cache/kuberay``), with the wall time in ``install-seconds``, done only when missing;
concurrent callers wait for one install. Exit 1 with a one-line reason on failure.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.gobuild import build_cli, cache_root, exclusive_lock

AZURITE_VERSION = "3.35.0"


class BuildError(Exception):
    """The install failed; the message is one line for the user."""


def cache_dir() -> Path:
    """``$KUBERAY_CACHE/azurite-<version>``."""
    return cache_root() / f"azurite-{AZURITE_VERSION}"


def binary_path() -> Path:
    """Where the ``azurite-blob`` launcher is once installed (may not exist yet)."""
    return cache_dir() / "node_modules" / ".bin" / "azurite-blob"


def install_seconds() -> float | None:
    """Wall time of the install that filled the cache (None if unknown)."""
    try:
        return float((cache_dir() / "install-seconds").read_text())
    except (OSError, ValueError):
        return None


def build() -> Path:
    """Return ``azurite-blob``, installing Azurite first if missing (waits for an install
    another process has under way)."""
    out = binary_path()
    done = cache_dir() / ".installed"
    if done.exists() and out.exists():
        return out
    with exclusive_lock(cache_dir() / ".install.lock"):
        if done.exists() and out.exists():
            return out
        return _install(out, done)


def _install(out: Path, done: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("npm not found (need Node.js and npm on PATH to install Azurite)")
    start = time.monotonic()
    proc = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(cache_dir()),
            "--no-audit",
            "--no-fund",
            "--no-save",
            f"azurite@{AZURITE_VERSION}",
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or not out.exists():
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        sys.stderr.write(proc.stderr[-4000:])
        raise BuildError(
            f"npm install azurite@{AZURITE_VERSION} failed: " + (lines or ["no azurite-blob"])[-1]
        )
    elapsed = time.monotonic() - start
    (cache_dir() / "install-seconds").write_text(f"{elapsed:.0f}\n")
    done.touch()
    print(f"installed azurite {AZURITE_VERSION} in {elapsed:.0f}s -> {out}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    return build_cli(
        "install_azurite.py", __doc__, lambda: [build()], binary_path, BuildError, argv
    )


if __name__ == "__main__":
    sys.exit(main())
