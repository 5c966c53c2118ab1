#!/usr/bin/env python3
"""Fetch third-party CRDs from their Go modules into ``~/.cache/kuberay/`` (pinned versions).

    python hack/fetch_third_party_crds.py                 # every source; prints one dir a line
    python hack/fetch_third_party_crds.py gateway-api     # one source; prints its directory

Each :class:`Source` names a Go module at a pinned version and the CRD YAMLs it ships;
``go mod download`` brings the module through the Go module proxy (or the local module cache)
and the chosen files are copied to ``~/.cache/kuberay/<name>-<version>/crds``. Idempotent: an
existing complete copy is reused. ``KUBERAY_CACHE`` overrides the cache root, ``GO`` the go
binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Source:
    """One Go module's CRDs: the files under ``subdir`` of ``module@version`` to copy."""

    name: str
    module: str
    version: str
    subdir: str
    files: tuple[str, ...]


#: cert-manager at the version KubeRay's go.mod requires (the mTLS controller's CRDs, no ACME);
#: the Gateway API standard channel (Gateway, HTTPRoute and what they reference) for the
#: RayService incremental upgrade.
SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            "cert-manager",
            "github.com/cert-manager/cert-manager",
            "v1.19.4",
            "deploy/crds",
            (
                "cert-manager.io_certificaterequests.yaml",
                "cert-manager.io_certificates.yaml",
                "cert-manager.io_clusterissuers.yaml",
                "cert-manager.io_issuers.yaml",
            ),
        ),
        Source(
            "gateway-api",
            "sigs.k8s.io/gateway-api",
            "v1.4.1",
            "config/crd/standard",
            (
                "gateway.networking.k8s.io_gatewayclasses.yaml",
                "gateway.networking.k8s.io_gateways.yaml",
                "gateway.networking.k8s.io_httproutes.yaml",
                "gateway.networking.k8s.io_grpcroutes.yaml",
                "gateway.networking.k8s.io_referencegrants.yaml",
            ),
        ),
    )
}


def cache_root() -> Path:
    """``$KUBERAY_CACHE`` or ``~/.cache/kuberay``."""
    return Path(os.environ.get("KUBERAY_CACHE") or Path.home() / ".cache" / "kuberay")


def crd_dir(name: str) -> Path:
    """Where the CRDs of source ``name`` live once fetched."""
    source = SOURCES[name]
    return cache_root() / f"{source.name}-{source.version}" / "crds"


def _go() -> str:
    for candidate in (os.environ.get("GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("go not found (set GO=/path/to/go)")


def fetch(name: str) -> Path:
    """Make sure source ``name``'s CRDs are in the cache; their directory."""
    source = SOURCES[name]
    target = crd_dir(name)
    if all((target / f).is_file() for f in source.files):
        return target
    out = subprocess.run(
        [_go(), "mod", "download", "-json", f"{source.module}@{source.version}"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "GOFLAGS": "-mod=mod", "GO111MODULE": "on"},
    )
    origin = Path(json.loads(out.stdout)["Dir"]) / source.subdir
    staging = target.with_name(target.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for f in source.files:
        shutil.copyfile(origin / f, staging / f)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


if __name__ == "__main__":
    for wanted in sys.argv[1:] or list(SOURCES):
        print(fetch(wanted))
    sys.exit(0)
