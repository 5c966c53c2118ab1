"""The Debian root filesystems the images of ``hack/release/images.py`` are built from
(debootstrap's bookworm minbase, kept in the build cache and copied per image), and the small
build steps they share: running commands (also in a chroot), users, scrubbing build-machine
state, tarring a layer. Root only (debootstrap, chroot)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
ROOTFS_PACKAGES = "python3,python3-venv,bash,wget,ca-certificates,procps,iproute2"
PATH_ENV = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: The Ray images' user home (the path upstream images use); the default of :func:`_add_user`.
RAY_HOME = "/home/ray"


def cache_dir() -> Path:
    base = os.environ.get("KUBERAY_IMAGE_CACHE") or str(
        Path.home() / ".cache" / "kuberay" / "images"
    )
    return Path(base)


def _build_dir() -> Path:
    """Where base root filesystems and image work trees are kept."""
    return cache_dir() / "build"


def _log(msg: str) -> None:
    print(f"images: {msg}", file=sys.stderr, flush=True)


def _run(*cmd: str, **kw: object) -> None:
    subprocess.run(cmd, check=True, **kw)  # type: ignore[call-overload]


def _tar_dir(src: Path, out: Path, members: list[str] | None = None) -> None:
    _run("tar", "--numeric-owner", "--xattrs", "-C", str(src), "-cf", str(out), *(members or ["."]))


def _chroot(rootfs: Path, *cmd: str, env: dict[str, str] | None = None) -> None:
    base = {"PATH": PATH_ENV, "HOME": "/root", "LANG": "C.UTF-8"}
    for key, value in os.environ.items():  # index/proxy settings of this machine's pip
        if key.startswith("PIP_") and key != "PIP_FIND_LINKS":
            base[key] = value
    _run("chroot", str(rootfs), *cmd, env={**base, **(env or {})})


def _add_user(rootfs: Path, name: str = "ray", home: str = RAY_HOME) -> None:
    """User and group ``name`` with uid/gid 1000 and home ``home`` in the rootfs's /etc."""
    etc = rootfs / "etc"
    with (etc / "passwd").open("a") as f:
        f.write(f"{name}:x:1000:1000::{home}:/bin/bash\n")
    with (etc / "group").open("a") as f:
        f.write(
            f"{name}:x:1000:\nusers:x:100:{name}\n"
            if "users:" not in (etc / "group").read_text()
            else f"{name}:x:1000:\n"
        )
    with (etc / "shadow").open("a") as f:
        f.write(f"{name}:*:19000:0:99999:7:::\n")


def _rmtree(path: Path) -> None:
    """rm -rf, after unmounting what a failed debootstrap/chroot left mounted inside."""
    prefix = str(path)
    try:
        mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    except OSError:
        mounts = []
    for m in sorted({m for m in mounts if m.startswith(prefix + "/")}, key=len, reverse=True):
        subprocess.run(["umount", "-l", m], check=False)
    shutil.rmtree(path, ignore_errors=True)


def _base_rootfs() -> Path:
    """debootstrap's Debian (kept in the build dir: every Ray image starts from a copy)."""
    base = _build_dir() / "bookworm-minbase"
    if (base / "etc/os-release").exists():
        return base
    _rmtree(base)
    tmp = base.with_name(base.name + ".partial")
    _rmtree(tmp)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    _run(
        "debootstrap",
        "--variant=minbase",
        f"--include={ROOTFS_PACKAGES}",
        DEBIAN_SUITE,
        str(tmp),
        DEBIAN_MIRROR,
        stdout=subprocess.DEVNULL,
    )
    tmp.rename(base)
    _log(f"debootstrap {time.monotonic() - t0:.0f}s")
    return base


def _copy_base(rootfs: Path) -> None:
    """A copy of the base rootfs at ``rootfs``, with this machine's CA bundle (an
    intercepting proxy may sign PyPI) and resolver, for pip."""
    _run("cp", "-a", str(_base_rootfs()), str(rootfs))
    shutil.copy2("/etc/ssl/certs/ca-certificates.crt", rootfs / "etc/ssl/certs/ca-certificates.crt")
    resolv = rootfs / "etc/resolv.conf"
    resolv.unlink(missing_ok=True)
    shutil.copy2("/etc/resolv.conf", resolv)


def _scrub(rootfs: Path) -> None:
    """Leave no build-machine state behind (resolver, apt and pip caches)."""
    (rootfs / "etc/resolv.conf").write_text("")
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "root/.cache"):
        shutil.rmtree(rootfs / junk, ignore_errors=True)
        (rootfs / junk).mkdir(parents=True, exist_ok=True)
