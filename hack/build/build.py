#!/usr/bin/env python3
"""Build the local control plane's binaries from Go modules, once, into a cache.

Binaries land in ``$KUBERAY_BIN_CACHE`` (default ``~/.cache/kuberay/bin``)
under ``<kubernetes version>/`` (:func:`kuberay.testing.binaries.cache_dir`, where
``kuberay.testing.envtest`` looks after ``$KUBEBUILDER_ASSETS``). A binary is rebuilt only when it is missing.
The throwaway Go module lives in ``hack/gomod`` (go.mod/go.sum committed so a
fresh machine resolves exactly the same graph).

Usage: python hack/build/build.py [--all] [NAME ...]
  NAME is one of: etcd kube-apiserver kube-controller-manager kube-scheduler kwok
  kubelet kube-proxy coredns
  default: etcd kube-apiserver; --all: every binary (the real node's included).
Exit 1 with a one-line reason on failure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

# the version, the cache and the error are kuberay.testing's (envtest looks there)
from kuberay.testing.binaries import KUBERNETES_VERSION as KUBERNETES_VERSION
from kuberay.testing.binaries import BuildError as BuildError
from kuberay.testing.binaries import binary_path as binary_path
from kuberay.testing.binaries import cache_dir as cache_dir

STAGING_VERSION = "v0.36.3"
ETCD_VERSION = "v3.6.16"
KWOK_VERSION = "v0.8.0"
COREDNS_VERSION = "v1.14.7"  # pinned in hack/coredns/go.mod

HACK = Path(__file__).resolve().parents[1]
GOMOD_DIR = HACK / "gomod"
COREDNS_DIR = HACK / "coredns"  # its own module: CoreDNS pins other k8s.io versions

# binary name -> Go package path built from inside hack/gomod
PACKAGES: dict[str, str] = {
    "etcd": "go.etcd.io/etcd/server/v3",
    "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
    "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
    "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
    "kwok": "sigs.k8s.io/kwok/cmd/kwok",
    "kubelet": "k8s.io/kubernetes/cmd/kubelet",
    "kube-proxy": "k8s.io/kubernetes/cmd/kube-proxy",
    "coredns": ".",  # hack/coredns: CoreDNS with only the plugins the cluster DNS needs
}
# binaries built from another module directory than hack/gomod
MODULE_DIRS: dict[str, Path] = {"coredns": COREDNS_DIR}
# the real node's binaries (hack/cluster/realnode.py); not part of the control plane's --all default
NODE_BINARIES = ("kubelet", "kube-proxy", "coredns")
DEFAULT = ("etcd", "kube-apiserver")


def _go(*args: str, cwd: Path = GOMOD_DIR, env: dict[str, str] | None = None) -> str:
    full_env = dict(os.environ)
    full_env.setdefault("GOFLAGS", "-mod=mod")
    full_env["CGO_ENABLED"] = "0"
    if env:
        full_env.update(env)
    proc = subprocess.run(["go", *args], cwd=cwd, env=full_env, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr or proc.stdout).strip().splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit code {proc.returncode}"
        sys.stderr.write(proc.stderr[-4000:])
        raise BuildError(f"go {' '.join(args[:3])} failed: {reason}")
    return proc.stdout


def ensure_module() -> None:
    """Create hack/gomod/go.mod pinning kubernetes, its staging modules, etcd and kwok."""
    if (GOMOD_DIR / "go.mod").exists() and (GOMOD_DIR / "go.sum").exists():
        return
    GOMOD_DIR.mkdir(parents=True, exist_ok=True)
    for f in ("go.mod", "go.sum"):
        (GOMOD_DIR / f).unlink(missing_ok=True)
    _go("mod", "init", "kuberay.local/hack/gomod")
    info = _go("mod", "download", "-json", f"k8s.io/kubernetes@{KUBERNETES_VERSION}")
    gomod_path = next(
        line.split('"')[3] for line in info.splitlines() if line.strip().startswith('"GoMod"')
    )
    staging = [
        line.split()[0]
        for line in Path(gomod_path).read_text().splitlines()
        if "=> ./staging/" in line
    ]
    for mod in staging:
        _go("mod", "edit", f"-replace={mod}={mod}@{STAGING_VERSION}")
    _go("mod", "edit", "-godebug=default=go1.26")
    (GOMOD_DIR / "tools.go").write_text(
        "//go:build tools\n\npackage tools\n\nimport (\n"
        + "".join(f'\t_ "{pkg}"\n' for n, pkg in PACKAGES.items() if n not in MODULE_DIRS)
        + ")\n"
    )
    _go(
        "get",
        f"k8s.io/kubernetes@{KUBERNETES_VERSION}",
        f"go.etcd.io/etcd/server/v3@{ETCD_VERSION}",
        f"sigs.k8s.io/kwok@{KWOK_VERSION}",
    )
    _go("mod", "tidy")


def _ldflags(name: str) -> str:
    if name in ("etcd", "kwok", "coredns"):
        return "-s -w"
    major, minor = KUBERNETES_VERSION.lstrip("v").split(".")[:2]
    flags = ["-s", "-w"]
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X {pkg}.gitVersion={KUBERNETES_VERSION}",
            f"-X {pkg}.gitMajor={major}",
            f"-X {pkg}.gitMinor={minor}",
            f"-X {pkg}.gitTreeState=clean",
        ]
    return " ".join(flags)


def build(name: str) -> Path:
    """Return the cached binary for ``name``, building it first if missing."""
    if name not in PACKAGES:
        raise BuildError(f"unknown binary {name!r}; choose from {', '.join(PACKAGES)}")
    out = binary_path(name)
    if out.exists():
        return out
    if shutil.which("go") is None:
        raise BuildError("Go is not installed (need go >= 1.26 on PATH to build " + name + ")")
    cwd = MODULE_DIRS.get(name, GOMOD_DIR)
    if cwd == GOMOD_DIR:
        ensure_module()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    start = time.monotonic()
    _go("build", "-trimpath", "-ldflags", _ldflags(name), "-o", str(tmp), PACKAGES[name], cwd=cwd)
    tmp.rename(out)
    print(f"built {name} in {time.monotonic() - start:.0f}s -> {out}", file=sys.stderr)
    return out


def ensure(names: tuple[str, ...] | list[str] = DEFAULT) -> dict[str, Path]:
    """Build every binary in ``names`` that is missing; return name -> path."""
    return {name: build(name) for name in names}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="binaries to build")
    parser.add_argument("--all", action="store_true", help="build every binary")
    parser.add_argument("--print-dir", action="store_true", help="print the cache dir and exit")
    args = parser.parse_args(argv)
    if args.print_dir:
        print(cache_dir())
        return 0
    names = list(PACKAGES) if args.all else (args.names or list(DEFAULT))
    try:
        for name, path in ensure(names).items():
            print(f"{name}: {path}")
    except BuildError as exc:
        print(f"hack/build/build.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
