#!/usr/bin/env python3
"""Build a ``helm`` binary from the Go module proxy, once, into a cache.

The binary lands in ``$KUBERAY_BIN_CACHE`` (default ``~/.cache/kuberay/bin``) under
``helm-<version>/helm`` and is rebuilt only when missing. It is compiled with
``go install helm.sh/helm/v4/cmd/helm@<version>``, which resolves helm's own go.mod/go.sum
(so the dependency graph is exactly the one the helm release pinned) and needs no module
of ours. Only the chart tests (``tests/integration/test_manifests.py``) use it.

Usage: python hack/build/build_helm.py [--print-path]
Exit 1 with a one-line reason on failure.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.gobuild import build_cli, go_install

HELM_MODULE = "helm.sh/helm/v4"
HELM_VERSION = "v4.3.2"
HELM_PACKAGE = f"{HELM_MODULE}/cmd/helm"


class BuildError(Exception):
    """The build failed; the message is one line for the user."""


def cache_root() -> Path:
    """``$KUBERAY_BIN_CACHE`` or ``~/.cache/kuberay/bin``."""
    base = os.environ.get("KUBERAY_BIN_CACHE") or str(Path.home() / ".cache" / "kuberay" / "bin")
    return Path(base)


def binary_path() -> Path:
    """Where the pinned helm binary is (may not exist yet)."""
    return cache_root() / f"helm-{HELM_VERSION}" / "helm"


def _ldflags() -> str:
    # what helm's Makefile stamps, so `helm version` (and .Capabilities.HelmVersion) is right
    pkg = f"{HELM_MODULE}/internal/version"
    return f"-s -w -X {pkg}.version={HELM_VERSION} -X {pkg}.gitTreeState=clean"


def build() -> Path:
    """Return the cached helm binary, building it first if missing."""
    out = binary_path()
    if out.exists():
        return out
    if shutil.which("go") is None:
        raise BuildError("Go is not installed (need go on PATH to build helm)")
    target = f"{HELM_PACKAGE}@{HELM_VERSION}"
    elapsed = go_install([target], {"helm": out}, BuildError, ldflags=_ldflags(), go="go")
    print(f"built helm {HELM_VERSION} in {elapsed:.0f}s -> {out}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    return build_cli("build_helm.py", __doc__, lambda: [build()], binary_path, BuildError, argv)


if __name__ == "__main__":
    sys.exit(main())
