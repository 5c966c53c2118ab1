"""Shared pieces of the Go builds in hack/: finding the Go toolchain and one build at a time.

* :func:`go_binary`: ``$GO``, ``go`` on PATH, or ``/usr/local/go/bin/go``; raises ``error``
  (one line for the user) when none exists.
* :func:`exclusive_lock`: hold an flock on a file for the duration of a build, so a second
  caller (another test session, ``hack/build_in_background.py``) waits for the first build
  instead of racing it.
* :func:`cache_root`, :func:`recorded_build_seconds`: where builds are cached and how long
  the cached one took.
* :func:`build_cli`: the command line every ``hack/build_*.py`` shares.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

__all__ = ["build_cli", "cache_root", "exclusive_lock", "go_binary", "recorded_build_seconds"]


def cache_root() -> Path:
    """``$KUBERAY_CACHE``, default ``~/.cache/kuberay``: where every build is cached."""
    return Path(os.environ.get("KUBERAY_CACHE") or Path.home() / ".cache" / "kuberay")


def recorded_build_seconds(directory: Path) -> float | None:
    """Wall time of the build that filled ``directory`` (its ``build-seconds`` file), or
    None when unknown."""
    try:
        return float((directory / "build-seconds").read_text())
    except (OSError, ValueError):
        return None


def build_cli(
    script: str,
    doc: str | None,
    build: Callable[[], Iterable[Path]],
    where: Callable[[], Path],
    error: type[Exception],
    argv: list[str] | None = None,
) -> int:
    """``hack/<script> [--print-path]``: print ``where()`` and exit, or run ``build()`` and
    print the paths it returns; ``error`` becomes one line on stderr and exit code 1."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument(
        "--print-path", action="store_true", help="print where the build goes and exit"
    )
    args = parser.parse_args(argv)
    if args.print_path:
        print(where())
        return 0
    try:
        for path in build():
            print(path)
    except error as exc:
        print(f"hack/{script}: {exc}", file=sys.stderr)
        return 1
    return 0


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
