#!/usr/bin/env python3
"""Entry at the old path of ``hack/build/build_helm.py`` (see ``hack/_entry.py``)."""

import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import _entry

_entry.forward(globals(), "build/build_helm.py")
