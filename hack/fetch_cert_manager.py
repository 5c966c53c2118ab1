#!/usr/bin/env python3
"""Fetch cert-manager's CRDs from its Go module into ``~/.cache/kuberay/`` (pinned version).

    python hack/fetch_cert_manager.py            # prints the directory holding the CRD YAMLs

The module ``github.com/cert-manager/cert-manager`` at :data:`VERSION` (the version KubeRay's
``go.mod`` requires) ships its CRDs under ``deploy/crds``; ``go mod download`` brings the module
through the Go module proxy (or the local module cache), and the ``cert-manager.io`` CRDs are
copied to ``~/.cache/kuberay/cert-manager-<version>/crds``. Idempotent: an existing copy is
reused. ``KUBERAY_CACHE`` overrides the cache root, ``GO`` the go binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

MODULE = "github.com/cert-manager/cert-manager"
VERSION = "v1.19.4"
#: The CRDs the mTLS controller needs (ACME's are not used).
CRD_FILES = (
    "cert-manager.io_certificaterequests.yaml",
    "cert-manager.io_certificates.yaml",
    "cert-manager.io_clusterissuers.yaml",
    "cert-manager.io_issuers.yaml",
)


def cache_root() -> Path:
    """``$KUBERAY_CACHE`` or ``~/.cache/kuberay``."""
    return Path(os.environ.get("KUBERAY_CACHE") or Path.home() / ".cache" / "kuberay")


def crd_dir() -> Path:
    """Where the CRDs of :data:`VERSION` live once fetched."""
    return cache_root() / f"cert-manager-{VERSION}" / "crds"


def _go() -> str:
    for candidate in (os.environ.get("GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("go not found (set GO=/path/to/go)")


def fetch() -> Path:
    """Make sure the CRDs are in the cache; their directory."""
    target = crd_dir()
    if all((target / name).is_file() for name in CRD_FILES):
        return target
    out = subprocess.run(
        [_go(), "mod", "download", "-json", f"{MODULE}@{VERSION}"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "GOFLAGS": "-mod=mod", "GO111MODULE": "on"},
    )
    source = Path(json.loads(out.stdout)["Dir"]) / "deploy" / "crds"
    staging = target.with_name(target.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in CRD_FILES:
        shutil.copyfile(source / name, staging / name)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)
