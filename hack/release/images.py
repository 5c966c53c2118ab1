#!/usr/bin/env python3
"""Build the real node's container images here (no registry, no Docker) as docker archives.

* ``pause``: a static Go ``/pause`` (hack/images/pause/pause.go), the pod sandbox image
  containerd is configured with (``PAUSE_IMAGE``).
* ``ray``: Debian bookworm minbase (debootstrap, from the apt mirror) + python3 + a venv at
  ``/home/ray/anaconda3`` (the path upstream images use) with ``ray[default,serve]==RAY_VERSION``,
  bash, wget, user ``ray`` (uid 1000), HOME /home/ray. Tagged as every tag in ``RAY_TAGS``:
  the one Ray version stands in for all of them.
* ``operator``: Debian bookworm minbase (no Ray) + a venv ``/opt/kuberay`` holding this
  package (the files :func:`image_context.context_files` lists: never .venv, .git or .run)
  and exactly the dependencies ``requirements/runtime.lock`` pins (hack/release/lock.py: all
  but kubernetes-asyncio, which only tests use), slimmed (no
  docs, locales, perl, apt, pip), user 1000; tagged as the Helm chart's default image
  (``localhost/kuberay-python/operator:<version>``) and ``:latest``.
* ``apiserver``: the operator image's layer, byte for byte (a registry stores it once for
  both), with entrypoint ``kuberay-apiserver``; tagged as the kuberay-apiserver chart's
  default (``localhost/kuberay-python/apiserver:<version>``) and ``:latest``.
* ``collector``: the history server's collector sidecar: Debian bookworm minbase (no Ray) + a
  venv ``/opt/kuberay`` holding this package with its ``history`` extra (every storage client;
  the packages it shares with the operator at the lock's versions: ``pip install -c``),
  user 1000, entrypoint ``kuberay-history-collector``; tagged as every tag in
  ``COLLECTOR_TAGS``: ``localhost/kuberay-python/collector:<version>`` (the charts' default)
  and, as aliases, what KubeRay's samples name (``quay.io/kuberay/collector:nightly``).
* ``server``: the history server, the collector image's recipe (same base, same venv with the
  ``history`` extra, user 1000) with entrypoint ``kuberay-history-server``; tagged as every tag
  in ``SERVER_TAGS`` (``localhost/kuberay-python/history-server:<version>`` and ``:latest``).

Archives are cached under ``$KUBERAY_IMAGE_CACHE`` (default ``~/.cache/kuberay/images``) and
rebuilt only when missing (the operator and apiserver images when this package's sources
changed, the collector and server images when the sources they install changed:
``collector_files()``). Beside the operator archive, ``operator-<digest>.dpkg-status`` keeps
its rootfs's dpkg status (the SBOM's Debian packages: :func:`operator_dpkg_status`).
Root only (debootstrap, chroot).

* ``ray-new``: the same with ``ray[default,serve]==RAY_NEW_VERSION``, tagged only as that version
  (for what 2.52.0's autoscaler lacks, e.g. worker-group priority in autoscaler v2).

Usage: python hack/release/images.py [pause] [ray] [ray-new] [operator] [apiserver] [collector]
[server] (default: all)
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.release import ray_ui
from hack.release.image_context import OPERATOR_CONTEXT, context_files
from hack.release.lock import LOCK_PATH

# re-exported: hack/cluster/realnode.py reads it here
from hack.release.oci import archive_tags as archive_tags
from hack.release.oci import derive_archive, sha256_file, write_docker_archive
from hack.release.operator_image import (
    OPERATOR_HOME,
    OPERATOR_RECIPE_VERSION,
    OPERATOR_USER,
    OPERATOR_VENV,
    _slim,
    apiserver_config,
    apiserver_tags,
    operator_config,
    operator_tags,
    package_version,
)
from hack.release.rootfs import (
    PATH_ENV,
    RAY_HOME,
    _add_user,
    _build_dir,
    _chroot,
    _copy_base,
    _log,
    _rmtree,
    _run,
    _scrub,
    _tar_dir,
    cache_dir,
)

HACK = Path(__file__).resolve().parents[1]
REPO = HACK.parent
RAY_VERSION = "2.52.0"  # the version KubeRay's samples (ray-cluster.autoscaler*.yaml) name
# a second, newer Ray ("ray-new"): its autoscaler v2 honours worker-group `priority`
# (2.52.0's ignores the field); tagged only as itself
RAY_NEW_VERSION = "2.60.0"
# every rayproject/ray tag our tests and the samples they use name: all are this one image
RAY_TAGS = tuple(
    f"docker.io/rayproject/ray:{t}"
    for t in (RAY_VERSION, f"{RAY_VERSION}-py311", "2.46.0", "2.53.0", "2.55.0", "2.56.0", "latest")
)
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
COREDNS_IMAGE = "docker.io/kuberay-local/coredns:v1.14.7"

# this project's own images carry a clearly local name (``localhost/``: no registry namespace
# anyone else owns); the charts and manifests default to it
COLLECTOR_REPOSITORY = "localhost/kuberay-python/collector"
SERVER_REPOSITORY = "localhost/kuberay-python/history-server"
# the collector also stands in for KubeRay's release and nightly images (KubeRay's samples
# name :nightly): aliases in the node's image store only, never a chart or manifest default
COLLECTOR_ALIASES = ("quay.io/kuberay/collector:v1.7.0", "quay.io/kuberay/collector:nightly")
COLLECTOR_TAGS = (f"{COLLECTOR_REPOSITORY}:{package_version()}", *COLLECTOR_ALIASES)
COLLECTOR_VENV = "/opt/kuberay"
COLLECTOR_USER = "kuberay"  # uid/gid 1000, like the ray user: both write the shared /tmp/ray
COLLECTOR_HOME = "/home/kuberay"
COLLECTOR_EXTRA = "history"
COLLECTOR_ENTRYPOINT = "kuberay-history-collector"
# the history server: the collector's recipe, its own entrypoint and KubeRay's image names
SERVER_TAGS = (f"{SERVER_REPOSITORY}:{package_version()}", f"{SERVER_REPOSITORY}:latest")
SERVER_ENTRYPOINT = "kuberay-history-server"
RAY_VENV = f"{RAY_HOME}/anaconda3"
RECIPE_VERSION = "1"  # bump when the image contents change
# the Ray images' own recipe (3: ray[default,serve], so RayService samples run Serve, and
# protobuf<7: protobuf 7 dropped FieldDescriptor.label, which Serve's config decoding reads)
RAY_RECIPE_VERSION = "3"
RAY_PINS = ("protobuf<7",)
RAY_EXTRAS = "default,serve"
# bump when the collector image's recipe changes (2: requirements/runtime.lock as constraints)
COLLECTOR_RECIPE_VERSION = "2"


def archive_path(name: str) -> Path:
    if name == "pause":
        return cache_dir() / f"pause-{RECIPE_VERSION}.tar"
    if name == "ray":
        return cache_dir() / f"ray-{RAY_VERSION}-{RAY_RECIPE_VERSION}.tar"
    if name == "ray-new":
        return cache_dir() / f"ray-{RAY_NEW_VERSION}-{RAY_RECIPE_VERSION}.tar"
    if name == "operator":
        return cache_dir() / f"operator-{_package_digest()[:12]}.tar"
    if name == "apiserver":
        return cache_dir() / f"apiserver-{apiserver_digest()[:12]}.tar"
    if name == "collector":
        return cache_dir() / f"collector-{collector_digest()[:12]}.tar"
    if name == "server":
        return cache_dir() / f"server-{server_digest()[:12]}.tar"
    raise ValueError(name)


def ray_archive_path(version: str) -> Path:
    """The archive of the Ray image built here for ``version`` (:data:`RAY_VERSION` or
    :data:`RAY_NEW_VERSION`; may not exist yet)."""
    return archive_path("ray" if version == RAY_VERSION else "ray-new")


# ----------------------------------------------------------------------------- pause


def build_pause() -> Path:
    out = archive_path("pause")
    if out.exists():
        return out
    go = shutil.which("go") or "/usr/local/go/bin/go"
    with tempfile.TemporaryDirectory(prefix="kuberay-pause-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "", "GO111MODULE": "off"}
        _run(
            go,
            "build",
            "-trimpath",
            "-ldflags",
            "-s -w",
            "-o",
            str(root / "pause"),
            str(HACK / "images" / "pause" / "pause.go"),
            env=env,
        )
        layer = Path(tmp) / "layer.tar"
        _tar_dir(root, layer)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_docker_archive(
            out, [layer], {"Entrypoint": ["/pause"], "Env": [f"PATH={PATH_ENV}"]}, (PAUSE_IMAGE,)
        )
    _log(f"built {out}")
    return out


def build_coredns(binary: Path) -> Path:
    """CoreDNS (hack/coredns, built by hack/build/build.py) as ``/coredns`` in a one-layer image."""
    out = cache_dir() / f"coredns-{sha256_file(binary)[:12]}.tar"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory(prefix="kuberay-coredns-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        shutil.copy2(binary, root / "coredns")
        layer = Path(tmp) / "layer.tar"
        _tar_dir(root, layer)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_docker_archive(out, [layer], {"Entrypoint": ["/coredns"]}, (COREDNS_IMAGE,))
    return out


# ----------------------------------------------------------------------------- ray


def _ray_rootfs(work: Path, version: str) -> Path:
    rootfs = work / "rootfs"
    _copy_base(rootfs)
    t0 = time.monotonic()
    _chroot(rootfs, "python3", "-m", "venv", RAY_VENV)
    _chroot(
        rootfs,
        f"{RAY_VENV}/bin/pip",
        "install",
        "-q",
        "--no-cache-dir",
        f"ray[{RAY_EXTRAS}]=={version}",
        *RAY_PINS,
    )
    _log(f"pip install ray[{RAY_EXTRAS}]=={version} {time.monotonic() - t0:.0f}s")
    _add_user(rootfs)
    _run("chown", "-R", "1000:1000", str(rootfs / RAY_HOME.lstrip("/")))
    _scrub(rootfs)
    return rootfs


RAY_CONFIG: dict[str, object] = {
    "Env": [f"PATH={RAY_VENV}/bin:{PATH_ENV}", f"HOME={RAY_HOME}", "LANG=C.UTF-8"],
    "Cmd": ["bash"],
    "User": "1000",
    "WorkingDir": RAY_HOME,
}


def build_ray(version: str = RAY_VERSION) -> Path:
    out = ray_archive_path(version)
    if out.exists():
        return out
    t0 = time.monotonic()
    work = _build_dir() / f"ray-{version}"
    _rmtree(work)
    work.mkdir(parents=True)
    rootfs = _ray_rootfs(work, version)
    layer = work / "layer.tar"
    _tar_dir(rootfs, layer)
    out.parent.mkdir(parents=True, exist_ok=True)
    tags = RAY_TAGS if version == RAY_VERSION else (f"docker.io/rayproject/ray:{version}",)
    write_docker_archive(out, [layer], RAY_CONFIG, tags)
    layer.unlink()
    _rmtree(work)
    _log(f"built {out} ({out.stat().st_size >> 20} MiB) in {time.monotonic() - t0:.0f}s")
    return out


# ----------------------------------------------------------------------------- operator


def _package_files() -> list[Path]:
    return context_files(REPO, OPERATOR_CONTEXT)


def _package_digest() -> str:
    h = hashlib.sha256(f"{RECIPE_VERSION}/{OPERATOR_RECIPE_VERSION}".encode())
    h.update("\n".join(operator_tags()).encode())
    for p in _package_files():
        h.update(str(p.relative_to(REPO)).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def operator_dpkg_status() -> Path:
    """The dpkg status file of the current operator image's rootfs (written with its archive;
    may not exist yet): what hack/release/sbom.py lists as its Debian packages."""
    return archive_path("operator").with_suffix(".dpkg-status")


def build_operator() -> Path:
    """The operator image (no Ray): Debian minbase + python3 + a venv ``/opt/kuberay`` with
    exactly the lock's dependencies and this package (:func:`hack.image_context.context_files`),
    slimmed, user 1000."""
    out = archive_path("operator")
    if out.exists():
        return out
    t0 = time.monotonic()
    work = _build_dir() / "operator"
    _rmtree(work)
    work.mkdir(parents=True)
    rootfs = work / "rootfs"
    _copy_base(rootfs)
    src = rootfs / "tmp/kuberay-src"
    for path in _package_files():
        dest = src / path.relative_to(REPO)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    _chroot(rootfs, "python3", "-m", "venv", OPERATOR_VENV)
    pip = (f"{OPERATOR_VENV}/bin/pip", "install", "-q", "--no-cache-dir")
    # exactly the lock (no resolver: nothing else comes in), checked complete by pip check
    _chroot(rootfs, *pip, "--no-deps", "-r", f"/tmp/kuberay-src/{LOCK_PATH}")
    _chroot(rootfs, f"{OPERATOR_VENV}/bin/pip", "check")
    _chroot(rootfs, *pip, "--no-deps", "/tmp/kuberay-src")
    _chroot(rootfs, f"{OPERATOR_VENV}/bin/python", "-m", "compileall", "-q", OPERATOR_VENV)
    shutil.rmtree(src)
    _log(f"pip install kuberay {time.monotonic() - t0:.0f}s")
    _add_user(rootfs, OPERATOR_USER, OPERATOR_HOME)
    (rootfs / OPERATOR_HOME.lstrip("/")).mkdir(parents=True, exist_ok=True)
    _run("chown", "-R", "1000:1000", str(rootfs / OPERATOR_HOME.lstrip("/")))
    _scrub(rootfs)
    _slim(rootfs)
    layer = work / "layer.tar"
    _tar_dir(rootfs, layer)
    out.parent.mkdir(parents=True, exist_ok=True)
    # earlier builds of this recipe beside the new one: keep the two newest (other worktrees
    # of the same machine may still use them)
    older = sorted(cache_dir().glob("operator-*.tar"), key=lambda p: p.stat().st_mtime)
    for old in older[:-2]:
        old.unlink(missing_ok=True)
        old.with_suffix(".dpkg-status").unlink(missing_ok=True)
    shutil.copy2(rootfs / "var/lib/dpkg/status", operator_dpkg_status())
    write_docker_archive(out, [layer], operator_config(), operator_tags())
    _rmtree(work)
    _log(f"built {out} ({out.stat().st_size >> 20} MiB) in {time.monotonic() - t0:.0f}s")
    return out


# ----------------------------------------------------------------------------- apiserver


def apiserver_digest() -> str:
    """sha256 over the operator image's digest (its layer is the apiserver image's), the
    apiserver image's tags and its config."""
    h = hashlib.sha256(f"apiserver/{_package_digest()}".encode())
    h.update("\n".join(apiserver_tags()).encode())
    h.update(json.dumps(apiserver_config(), sort_keys=True).encode())
    return h.hexdigest()


def build_apiserver() -> Path:
    """The API server image: the operator image's layer (built first when missing) with
    :func:`apiserver_config` and :func:`apiserver_tags`; cached by :func:`apiserver_digest`."""
    out = archive_path("apiserver")
    if out.exists():
        return out
    operator = build_operator()
    for old in cache_dir().glob("apiserver-*.tar"):
        old.unlink(missing_ok=True)
    derive_archive(operator, out, apiserver_config(), apiserver_tags())
    _log(f"built {out} ({out.stat().st_size >> 20} MiB) over {operator.name}'s layer")
    return out


# ----------------------------------------------------------------------------- collector


#: The ``gocompat`` modules the history server imports (Go durations, ParseBool, RFC 3339).
GOCOMPAT_FOR_HISTORY = ("__init__.py", "go_text.py", "goutil.py", "gotime.py")


def collector_files(root: Path = REPO) -> list[Path]:
    """What the collector image installs from ``root``: the project metadata pip needs, the
    dependency lock (its versions constrain the image's: the operator's packages at the same
    versions) and
    the ``kuberay`` package's top level plus ``kuberay/historyserver``, the rules it shares
    with the operator, :mod:`kuberay.kube.paths` (a name as a URL path segment, with the errors
    module it raises from; ``kuberay.kube``'s exports are lazy, so nothing else of it loads),
    and Go's text formats it reads (``gocompat``'s durations, booleans and times), sorted.
    The image holds exactly these, so their digest (:func:`collector_digest`) decides when it
    is rebuilt: an operator-only change is not one."""
    files = [root / name for name in ("pyproject.toml", "README.md", "LICENSE", LOCK_PATH)]
    package = root / "kuberay"
    files += sorted(p for p in package.iterdir() if p.is_file())
    files += sorted(
        p
        for p in (package / "historyserver").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    files += [package / "kube" / name for name in ("__init__.py", "errors.py", "paths.py")]
    files += [package / "gocompat" / name for name in GOCOMPAT_FOR_HISTORY]
    return [p for p in files if p.exists()]


def collector_digest(root: Path = REPO, image: str = "collector") -> str:
    """sha256 over ``image``, the recipe versions and :func:`collector_files` (paths and
    bytes): the collector and server images install the same files, but differ in config."""
    h = hashlib.sha256(f"{image}/{RECIPE_VERSION}/{COLLECTOR_RECIPE_VERSION}".encode())
    h.update("\n".join(SERVER_TAGS if image.startswith("server") else COLLECTOR_TAGS).encode())
    for p in collector_files(root):
        h.update(str(p.relative_to(root)).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


#: the Ray versions whose dashboard UI builds the server image carries (``/dashboard/<x.y>``)
SERVER_UI_VERSIONS = (RAY_VERSION, RAY_NEW_VERSION)
#: KubeRay's ``--dashboard-dir`` default: where the server looks for UI builds
SERVER_UI_DIR = "/dashboard"


def server_digest(root: Path = REPO) -> str:
    """The server image's digest: :func:`collector_digest` of the same files, keyed ``server``
    plus the Ray image versions its UI builds come from."""
    ui = "/".join((RAY_RECIPE_VERSION, *SERVER_UI_VERSIONS))
    return collector_digest(root, f"server/{ui}")


def collector_config(entrypoint: str = COLLECTOR_ENTRYPOINT) -> dict[str, object]:
    """The collector image's config: non-root (1000:1000), ``kuberay-history-collector`` as
    its entrypoint (KubeRay's operator sets no command on the sidecar)."""
    return {
        "Env": [
            f"PATH={COLLECTOR_VENV}/bin:{PATH_ENV}",
            f"HOME={COLLECTOR_HOME}",
            "LANG=C.UTF-8",
            "PYTHONUNBUFFERED=1",
        ],
        "Entrypoint": [entrypoint],
        "User": "1000:1000",
        "WorkingDir": COLLECTOR_HOME,
    }


def server_config() -> dict[str, object]:
    """The server image's config: the collector's (non-root 1000:1000, the venv on PATH,
    unbuffered output) with ``kuberay-history-server`` as its entrypoint and no Cmd, so a
    Deployment's ``args`` are the server's flags."""
    return collector_config(SERVER_ENTRYPOINT)


def build_collector() -> Path:
    """The collector image (module docstring); cached by :func:`collector_digest`."""
    return _build_history_image("collector", collector_config(), COLLECTOR_TAGS)


def build_server() -> Path:
    """The history server image (module docstring); cached by :func:`server_digest`."""
    return _build_history_image("server", server_config(), SERVER_TAGS, SERVER_UI_VERSIONS)


def _build_history_image(
    name: str,
    config: dict[str, object],
    tags: tuple[str, ...],
    ui_versions: tuple[str, ...] = (),
) -> Path:
    """Debian minbase + a venv with this package's ``history`` extra + user 1000, as the
    archive ``archive_path(name)`` with ``config`` and ``tags`` (older ones are removed);
    with ``ui_versions``, the dashboard UI build of each of those Ray images (built first
    when missing) under ``/dashboard/<major.minor>``."""
    out = archive_path(name)
    if out.exists():
        return out
    ray_archives = [build_ray(v) for v in ui_versions]
    t0 = time.monotonic()
    work = _build_dir() / name
    _rmtree(work)
    work.mkdir(parents=True)
    rootfs = work / "rootfs"
    _copy_base(rootfs)
    src = rootfs / "tmp/kuberay-src"
    for path in collector_files():
        dest = src / path.relative_to(REPO)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    _chroot(rootfs, "python3", "-m", "venv", COLLECTOR_VENV)
    _chroot(
        rootfs,
        f"{COLLECTOR_VENV}/bin/pip",
        "install",
        "-q",
        "--no-cache-dir",
        "-c",
        f"/tmp/kuberay-src/{LOCK_PATH}",
        f"/tmp/kuberay-src[{COLLECTOR_EXTRA}]",
    )
    shutil.rmtree(src)
    _log(f"pip install kuberay[{COLLECTOR_EXTRA}] {time.monotonic() - t0:.0f}s")
    for version, ray_archive in zip(ui_versions, ray_archives, strict=True):
        files = ray_ui.extract_dashboard_ui(
            ray_archive, rootfs / SERVER_UI_DIR.lstrip("/") / ray_ui.major_minor(version)
        )
        _log(f"dashboard UI of Ray {version}: {files} files")
    _add_user(rootfs, COLLECTOR_USER, COLLECTOR_HOME)
    (rootfs / COLLECTOR_HOME.lstrip("/")).mkdir(parents=True, exist_ok=True)
    _run("chown", "-R", "1000:1000", str(rootfs / COLLECTOR_HOME.lstrip("/")))
    _scrub(rootfs)
    layer = work / "layer.tar"
    _tar_dir(rootfs, layer)
    out.parent.mkdir(parents=True, exist_ok=True)
    for old in cache_dir().glob(f"{name}-*.tar"):
        old.unlink()
    write_docker_archive(out, [layer], config, tags)
    _rmtree(work)
    _log(f"built {out} ({out.stat().st_size >> 20} MiB) in {time.monotonic() - t0:.0f}s")
    return out


def build_ray_new() -> Path:
    return build_ray(RAY_NEW_VERSION)


BUILDERS = {
    "pause": build_pause,
    "ray": build_ray,
    "ray-new": build_ray_new,
    "operator": build_operator,
    "apiserver": build_apiserver,
    "collector": build_collector,
    "server": build_server,
}
# what the real node imports at start (the collector: so a RayCluster's history-server
# sidecar, image quay.io/kuberay/collector:nightly, runs there without a pull; the server: so
# manifests/historyserver's Deployment does too)
NODE_IMAGES = ("pause", "ray", "ray-new", "collector")  # what the real node imports at start


def ensure(names: tuple[str, ...] | list[str] = NODE_IMAGES) -> dict[str, Path]:
    """Build what is missing (one builder per machine at a time: the cache dir's lock)."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with (cache_dir() / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return {name: BUILDERS[name]() for name in names}


def main(argv: list[str]) -> int:
    names = argv or list(BUILDERS)
    unknown = [n for n in names if n not in BUILDERS]
    if unknown:
        print(
            f"hack/release/images.py: unknown image {unknown[0]!r}; "
            f"choose from {', '.join(BUILDERS)}",
            file=sys.stderr,
        )
        return 2
    try:
        for name, path in ensure(names).items():
            print(f"{name}: {path}")
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"hack/release/images.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
