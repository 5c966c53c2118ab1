"""Shared pieces of the Go builds in hack/: finding the Go toolchain and one build at a time.

* :func:`go_binary`: ``$GO``, ``go`` on PATH, or ``/usr/local/go/bin/go``; raises ``error``
  (one line for the user) when none exists.
* :func:`exclusive_lock`: hold an flock on a file for the duration of a build, so a second
  caller (another test session, ``hack/build_in_background.py``) waits for the first build
  instead of racing it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = ["exclusive_lock", "go_binary"]


def go_binary(error: type[Exception] = SystemExit) -> str:
    """The Go toolchain to run; raises ``error`` with a one-line message when none exists."""
    for candidate in (os.environ.get("GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if candidate and Path(candidate).exists():
            return candidate
    raise error("go not found (need go on PATH, or GO=/path/to/go)")


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on ``path`` (created with its directory when missing) until
    the block ends; blocks while another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
