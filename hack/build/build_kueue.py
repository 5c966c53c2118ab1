#!/usr/bin/env python3
"""Build Kueue's controller manager from the Go module proxy, once, into a cache.

    python hack/build/build_kueue.py                # build if missing; print the binary's path
    python hack/build/build_kueue.py --print-path   # where it goes, without building

The binary is ``go install sigs.k8s.io/kueue/cmd/kueue@<version>`` (Kueue's own go.mod and
go.sum pin the dependency graph; no replace directives, so no module of ours is needed),
statically linked (``CGO_ENABLED=0``) with Kueue's version stamped the way its Makefile
does. It lands in ``$KUBERAY_CACHE`` (default ``~/.cache/kuberay``) as
``kueue-<version>/kueue`` next to the CRDs ``hack/build/fetch_crds.py kueue`` copies from the same
module (``kueue-<version>/crds``), and is rebuilt only when missing. The wall time of the
build that produced it is kept in ``kueue-<version>/build-seconds``. Only the Kueue
integration tests (``tests/integration/kueue``) run it.

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

KUEUE_MODULE = "sigs.k8s.io/kueue"
KUEUE_VERSION = "v0.17.0"
KUEUE_PACKAGE = f"{KUEUE_MODULE}/cmd/kueue"


class BuildError(Exception):
    """The build failed; the message is one line for the user."""


def cache_dir() -> Path:
    """``$KUBERAY_CACHE/kueue-<version>`` (default ``~/.cache/kuberay/kueue-<version>``)."""
    return cache_root() / f"kueue-{KUEUE_VERSION}"


def binary_path() -> Path:
    """Where the pinned Kueue manager binary is (may not exist yet)."""
    return cache_dir() / "kueue"


def build_seconds() -> float | None:
    """Wall time of the build that produced the cached binary (None if unknown)."""
    return recorded_build_seconds(cache_dir())


def _ldflags() -> str:
    pkg = f"{KUEUE_MODULE}/pkg/version"
    return f"-s -w -X {pkg}.GitVersion={KUEUE_VERSION}"


def build() -> Path:
    """Return the cached Kueue binary, building it first if missing (waits for a build
    another process has under way)."""
    out = binary_path()
    build_once(out.exists, cache_dir(), lambda: _build(out))
    return out


def _build(out: Path) -> None:
    target = f"{KUEUE_PACKAGE}@{KUEUE_VERSION}"
    elapsed = go_install([target], {"kueue": out}, BuildError, ldflags=_ldflags())
    print(f"built kueue {KUEUE_VERSION} in {elapsed:.0f}s -> {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    return build_cli("build_kueue.py", __doc__, lambda: [build()], binary_path, BuildError, argv)


if __name__ == "__main__":
    sys.exit(main())
