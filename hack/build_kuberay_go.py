#!/usr/bin/env python3
"""Build KubeRay's Go operator (the behavioural reference) for side-by-side benches.

    python hack/build_kuberay_go.py   # -> ~/.cache/kuberay/kuberay-go-feeaf72/kuberay-operator
    python hack/bench.py --operator-cmd "$(python hack/build_kuberay_go.py --print-path)" ...

Exports ``ray-operator/`` of commit ``--commit`` from the local git mirror of
ray-project/kuberay (``git archive``, no network), then ``go build``s its ``main``
with the local Go toolchain. Modules come only from the Go module proxy (or the warm
module cache); ``go.sum`` pins every module, so no checksum database is asked.
Writes ``build-info.json`` (commit, go version, build seconds) next to the binary.
An existing binary is reused unless ``--force``. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_COMMIT = "feeaf72"
MIRRORS = (
    Path("/work/.mirror/ray-project+kuberay/repo"),
    Path("/work/.mirror/ray-project+kuberay"),
)
GO = Path("/usr/local/go/bin/go")


def cache_dir(commit: str) -> Path:
    """Where the build for ``commit`` lives: ``~/.cache/kuberay/kuberay-go-<commit>/``."""
    return Path.home() / ".cache" / "kuberay" / f"kuberay-go-{commit}"


def binary_path(commit: str = DEFAULT_COMMIT) -> Path:
    """The operator binary built for ``commit``."""
    return cache_dir(commit) / "kuberay-operator"


def find_mirror() -> Path:
    """The first mirror path that is a git directory."""
    for path in MIRRORS:
        if (path / "HEAD").exists() and (path / "objects").is_dir():
            return path
    raise SystemExit(f"no kuberay git mirror in {', '.join(map(str, MIRRORS))}")


def build(commit: str, *, force: bool = False) -> dict[str, object]:
    """Export and build; return the build info (also written as build-info.json)."""
    out = cache_dir(commit)
    binary = binary_path(commit)
    info_file = out / "build-info.json"
    if binary.exists() and info_file.exists() and not force:
        info: dict[str, object] = json.loads(info_file.read_text())
        return info
    mirror = find_mirror()
    src = out / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    archive = subprocess.Popen(
        ["git", "--git-dir", str(mirror), "archive", commit, "ray-operator"],
        stdout=subprocess.PIPE,
    )
    subprocess.run(["tar", "-x", "-C", str(src)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {commit} failed")
    full_commit = subprocess.run(
        ["git", "--git-dir", str(mirror), "rev-parse", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    env = dict(os.environ)
    env.update(
        GOTOOLCHAIN="local",
        GOPROXY="https://proxy.golang.org",
        GOSUMDB="off",  # go.sum pins every module
        CGO_ENABLED="0",
        GOFLAGS="-mod=readonly",
    )
    go_version = subprocess.run(
        [str(GO), "version"], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()
    began = time.monotonic()
    subprocess.run(
        [str(GO), "build", "-o", str(binary), "."],
        cwd=src / "ray-operator",
        env=env,
        check=True,
    )
    info = {
        "commit": full_commit,
        "go": go_version,
        "build_seconds": round(time.monotonic() - began, 1),
        "binary": str(binary),
        "binary_mib": round(binary.stat().st_size / 2**20, 1),
    }
    info_file.write_text(json.dumps(info, indent=2) + "\n")
    return info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default=DEFAULT_COMMIT)
    parser.add_argument("--force", action="store_true", help="rebuild even if built")
    parser.add_argument("--print-path", action="store_true", help="only print the binary path")
    args = parser.parse_args()
    if args.print_path:
        print(binary_path(args.commit))
        return 0
    print(json.dumps(build(args.commit, force=args.force), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
