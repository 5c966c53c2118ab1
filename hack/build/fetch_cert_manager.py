#!/usr/bin/env python3
"""Fetch cert-manager's CRDs (kept for callers of the old name; see ``hack/build/fetch_crds.py``).

python hack/build/fetch_cert_manager.py            # prints the directory holding the CRD YAMLs
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.fetch_crds import SOURCES, crd_dir
from hack.build.fetch_crds import fetch as _fetch

VERSION = SOURCES["cert-manager"].version
CRD_FILES = SOURCES["cert-manager"].files


def fetch() -> Path:
    """Make sure cert-manager's CRDs are in the cache; their directory."""
    return _fetch("cert-manager")


__all__ = ["CRD_FILES", "VERSION", "crd_dir", "fetch"]

if __name__ == "__main__":
    print(fetch())
    sys.exit(0)
