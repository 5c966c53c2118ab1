#!/usr/bin/env python3
"""Fetch cert-manager's CRDs from its Go module (kept for callers of the old name).

    python hack/fetch_cert_manager.py            # prints the directory holding the CRD YAMLs

See ``hack/fetch_third_party_crds.py``, which fetches every third-party CRD set.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fetch_third_party_crds

VERSION = fetch_third_party_crds.SOURCES["cert-manager"].version


def crd_dir() -> Path:
    """Where the CRDs of :data:`VERSION` live once fetched."""
    return fetch_third_party_crds.crd_dir("cert-manager")


def fetch() -> Path:
    """Make sure the CRDs are in the cache; their directory."""
    return fetch_third_party_crds.fetch("cert-manager")


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)
