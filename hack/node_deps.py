#!/usr/bin/env python3
"""Install the Debian packages the real node needs (idempotent; root only).

containerd + runc (CRI runtime), the CNI plugins (bridge, host-local, loopback),
iptables + conntrack (kube-proxy), debootstrap (the Ray image's root filesystem).
With ``--browser``: Debian's ``chromium`` instead, for the tests that load Ray's dashboard
UI in a headless browser (``tests/chromium.py``).
Nothing is done when every package is already installed. Exit 1 with a reason
when something is missing and cannot be installed (not root, no apt-get).

Usage: python hack/node_deps.py [--browser] [--check]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

PACKAGES = (
    "containerd",
    "runc",
    "containernetworking-plugins",
    "iptables",
    "conntrack",
    "debootstrap",
    "iproute2",
)
BROWSER_PACKAGES = ("chromium",)
CNI_BIN_DIRS = ("/usr/lib/cni", "/opt/cni/bin")


def missing(packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """Packages of ``packages`` not installed (per dpkg)."""
    out = []
    for pkg in packages:
        proc = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True
        )
        if proc.returncode != 0 or "install ok installed" not in proc.stdout:
            out.append(pkg)
    return out


def cni_bin_dir() -> str:
    for d in CNI_BIN_DIRS:
        if os.path.exists(os.path.join(d, "bridge")):
            return d
    raise FileNotFoundError("no CNI bridge plugin in " + " or ".join(CNI_BIN_DIRS))


def ensure(packages: tuple[str, ...] = PACKAGES) -> None:
    """Install whatever of ``packages`` is missing (``apt-get update`` only when a first
    install fails); ``RuntimeError`` when that cannot be done."""
    if shutil.which("dpkg-query") is None:
        raise RuntimeError("not a Debian system (no dpkg-query): install " + " ".join(packages))
    todo = missing(packages)
    if not todo:
        return
    if os.geteuid() != 0:
        raise RuntimeError("need root to install " + " ".join(todo))
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *todo]
    if subprocess.run(cmd, env=env).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, check=False)
        subprocess.run(cmd, env=env, check=True)


def main(argv: list[str]) -> int:
    packages = BROWSER_PACKAGES if "--browser" in argv else PACKAGES
    if "--check" in argv:
        todo = missing(packages)
        print("missing: " + " ".join(todo) if todo else "all installed")
        return 1 if todo else 0
    try:
        ensure(packages)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"hack/node_deps.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
