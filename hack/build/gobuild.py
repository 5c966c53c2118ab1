"""Shared pieces of the Go builds in hack/: finding the Go toolchain and one build at a time.

* :func:`go_binary`: ``$GO``, ``go`` on PATH, or ``/usr/local/go/bin/go``; raises ``error``
  (one line for the user) when none exists.
* :func:`exclusive_lock`: hold an flock on a file for the duration of a build, so a second
  caller (another test session, ``hack/build/build_in_background.py``) waits for the first build
  instead of racing it.
* :func:`cache_root`, :func:`recorded_build_seconds`: where builds are cached and how long
  the cached one took.
* :func:`build_cli`: the command line every ``hack/build_*.py`` shares.
* :func:`build_once`: the cache check, the lock, and the check again under it.
* :func:`go_install`: the skeleton of a ``go install module/cmd@version`` build: a scratch
  ``GOBIN``, static linking, the binaries moved into the cache, the wall time recorded.
* :func:`record_build_seconds`: keep a build's wall time beside what it built.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

__all__ = [
    "build_cli",
    "build_once",
    "cache_root",
    "exclusive_lock",
    "go_binary",
    "go_install",
    "record_build_seconds",
    "recorded_build_seconds",
]


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
    """``hack/build/<script> [--print-path]``: print ``where()`` and exit, or run ``build()`` and
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
        print(f"hack/build/{script}: {exc}", file=sys.stderr)
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


def record_build_seconds(directory: Path, seconds: float) -> None:
    """Keep ``seconds`` as the wall time of the build that filled ``directory``."""
    (directory / "build-seconds").write_text(f"{seconds:.0f}\n")


def build_once(built: Callable[[], bool], lock_dir: Path, build: Callable[[], object]) -> None:
    """Run ``build()`` unless ``built()``; one build at a time per ``lock_dir`` (a second
    caller waits for the first, then finds its result)."""
    if built():
        return
    with exclusive_lock(lock_dir / ".build.lock"):
        if not built():  # or built by the process that held the lock
            build()


def go_install(
    targets: Sequence[str],
    outputs: Mapping[str, Path],
    error: type[Exception],
    *,
    ldflags: str = "-s -w",
    tags: str = "",
    env: Mapping[str, str] | None = None,
    go: str | None = None,
) -> float:
    """``go install -trimpath`` the ``pkg@version`` ``targets`` (``CGO_ENABLED=0``, any ``-mod``
    GOFLAGS dropped: ``go install pkg@version`` refuses them) into a scratch ``GOBIN``, move
    each binary ``name`` to ``outputs[name]``, record the wall time beside the first output and
    return it. A failure raises ``error`` with go's last line (its stderr tail on stderr)."""
    go = go or go_binary(error)
    dest = next(iter(outputs.values())).parent
    dest.mkdir(parents=True, exist_ok=True)
    gobin = dest / ".gobin.tmp"
    shutil.rmtree(gobin, ignore_errors=True)
    full_env = dict(os.environ)
    full_env["GOFLAGS"] = " ".join(
        f for f in full_env.get("GOFLAGS", "").split() if not f.startswith("-mod")
    )
    full_env.update(GOBIN=str(gobin), CGO_ENABLED="0", **(env or {}))
    tag_args = ["-tags", tags] if tags else []
    start = time.monotonic()
    proc = subprocess.run(
        [go, "install", "-trimpath", *tag_args, "-ldflags", ldflags, *targets],
        env=full_env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        sys.stderr.write(proc.stderr[-4000:])
        shutil.rmtree(gobin, ignore_errors=True)
        raise error(f"go install {targets[0]} failed: " + (lines or ["?"])[-1])
    elapsed = time.monotonic() - start
    for name, out in outputs.items():
        (gobin / name).rename(out)
    shutil.rmtree(gobin, ignore_errors=True)
    record_build_seconds(dest, elapsed)
    return elapsed
