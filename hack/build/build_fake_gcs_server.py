#!/usr/bin/env python3
"""Build fake-gcs-server (a Google Cloud Storage emulator) from the Go module proxy, once.

    python hack/build/build_fake_gcs_server.py                # build if missing; print the path
    python hack/build/build_fake_gcs_server.py --print-path   # where it goes, without building

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

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.gobuild import (
    build_cli,
    build_once,
    cache_root,
    go_install,
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
    build_once(out.exists, cache_dir(), lambda: _build(out))
    return out


def _build(out: Path) -> None:
    target = f"{FAKE_GCS_MODULE}@{FAKE_GCS_VERSION}"
    elapsed = go_install([target], {"fake-gcs-server": out}, BuildError)
    print(f"built fake-gcs-server {FAKE_GCS_VERSION} in {elapsed:.0f}s -> {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    return build_cli(
        "build_fake_gcs_server.py", __doc__, lambda: [build()], binary_path, BuildError, argv
    )


if __name__ == "__main__":
    sys.exit(main())
