#!/usr/bin/env python3
"""Build Prometheus and promtool from the Go module proxy, once, into a cache.

    python hack/build/build_prometheus.py                # build if missing; print both paths
    python hack/build/build_prometheus.py --print-path   # where they go, without building

The monitoring tests run them: ``promtool check rules`` / ``promtool test rules`` over
``manifests/monitoring`` (tests/unit/monitoring) and a real Prometheus on 127.0.0.1 that
scrapes the operator and real Ray pods (tests/e2e/test_monitoring_real.py). Both come
from ``go install github.com/prometheus/prometheus/cmd/{prometheus,promtool}@<version>``
(the module's go.mod has no replace directives, so its go.sum pins the graph), statically
linked (``CGO_ENABLED=0``), stripped (``-s -w``), with the build tag ``remove_all_sd``:
every service-discovery plugin but ``file`` and ``http`` is left out of ``prometheus``
(the tests configure static targets only), which takes the cloud SDKs and most of
client-go out of its build (promtool imports the Kubernetes SD package itself, so it
still compiles client-go). There is no ``builtinassets`` tag: the web UI is not embedded
(the HTTP API, which the tests use, is all there).

They land in ``$KUBERAY_CACHE`` (default ``~/.cache/kuberay``) ``/prometheus-<version>/``
with the build's wall time in ``build-seconds``; an existing build is reused and
concurrent callers wait for one build. Exit 1 with a one-line reason on failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.gobuild import (
    build_cli,
    build_once,
    cache_root,
    go_install,
    recorded_build_seconds,
)

PROMETHEUS_MODULE = "github.com/prometheus/prometheus"
#: Prometheus 3.x publishes its Go module as v0.3XX.Y (3.16.0 here).
PROMETHEUS_VERSION = "v0.316.0"
COMMANDS = ("prometheus", "promtool")
BUILD_TAGS = "remove_all_sd"
#: The release that module version is, as ``prometheus --version`` reports it.
PROMETHEUS_RELEASE = "3.16.0"
VERSION_FLAG = f"-X github.com/prometheus/common/version.Version={PROMETHEUS_RELEASE}"


class BuildError(Exception):
    """The build failed; the message is one line for the user."""


def cache_dir() -> Path:
    """``$KUBERAY_CACHE/prometheus-<version>``."""
    return cache_root() / f"prometheus-{PROMETHEUS_VERSION}"


def prometheus_path() -> Path:
    """Where the cached ``prometheus`` binary is (may not exist yet)."""
    return cache_dir() / "prometheus"


def promtool_path() -> Path:
    """Where the cached ``promtool`` binary is (may not exist yet)."""
    return cache_dir() / "promtool"


def build_seconds() -> float | None:
    """Wall time of the build that produced the cached binaries (None if unknown)."""
    return recorded_build_seconds(cache_dir())


def built() -> bool:
    """Whether both binaries are in the cache."""
    return prometheus_path().is_file() and promtool_path().is_file()


def build() -> tuple[Path, Path]:
    """The cached ``(prometheus, promtool)``, built first if missing (waits for a build
    another process has under way)."""
    build_once(built, cache_dir(), _build)
    return prometheus_path(), promtool_path()


def _build() -> None:
    targets = [f"{PROMETHEUS_MODULE}/cmd/{cmd}@{PROMETHEUS_VERSION}" for cmd in COMMANDS]
    elapsed = go_install(
        targets,
        {cmd: cache_dir() / cmd for cmd in COMMANDS},
        BuildError,
        ldflags=f"-s -w {VERSION_FLAG}",
        tags=BUILD_TAGS,
        env={"GOWORK": "off"},  # `go install pkg@version` ignores go.work anyway
    )
    print(
        f"built prometheus {PROMETHEUS_VERSION} in {elapsed:.0f}s -> {cache_dir()}", file=sys.stderr
    )


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    return build_cli("build_prometheus.py", __doc__, build, cache_dir, BuildError, argv)


if __name__ == "__main__":
    sys.exit(main())
