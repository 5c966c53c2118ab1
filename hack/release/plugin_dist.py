"""Release artifacts of the ``kubectl ray`` plugin, built offline from this tree and the
packages installed in the running virtualenv.

``python hack/release/plugin_dist.py [--out dist]`` writes

* ``dist/kuberay-<v>-py3-none-any.whl``: the project's wheel (``pip wheel`` of the tree);
* ``dist/kubectl-ray.pyz``: a single-file zipapp. It carries the ``kuberay`` package and
  the third-party packages ``requirements/runtime.lock`` pins (what the operator image
  holds: kuberay's requirements minus ``kubernetes-asyncio``, which only tests use), as
  installed here (the build stops when an installed version is not the lock's); on first
  run it unpacks them into ``~/.cache/kubectl-ray/<hash>`` (the compiled ones cannot be
  imported from a zip) and runs the plugin. It runs on the
  Python version and platform it was built on (named in its ``--version`` banner and the
  krew manifest);
* ``dist/kubectl-ray-<os>-<arch>.tar.gz``: the zipapp as ``kubectl-ray`` plus
  ``kubectl_complete-ray`` and LICENSE, what krew installs;
* ``dist/krew/ray.yaml``: a krew plugin manifest for that archive (sha256 filled in;
  the download URL from ``--url-base``).

``wheelhouse(dir)`` repacks installed distributions as wheels (for installing the
project's wheel into a fresh virtualenv without the network, as the integration test does).
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement

if __package__ in (None, ""):  # run as a file: import hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.release.lock import LOCK, read_lock

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "kuberay"
#: Where the release archives are published: a placeholder a release overrides (--url-base).
DEFAULT_URL_BASE = "https://releases.invalid/kubectl-ray/v{version}"

BOOTSTRAP = '''"""kubectl-ray zipapp: unpack the bundled packages once, then run the plugin."""
import os, sys, zipfile
from pathlib import Path

BUILD = {build!r}
def _home():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kubectl-ray" / BUILD

def main():
    if sys.version_info[:2] != {pyver!r}:
        sys.stderr.write("kubectl-ray.pyz was built for Python %d.%d; run it with that "
                         "python, or pip install the kuberay wheel\\n" % {pyver!r})
        return 1
    site = _home() / "site"
    if not (site / ".complete").exists():
        tmp = site.with_name("site.%d" % os.getpid())
        with zipfile.ZipFile(os.path.dirname(os.path.abspath(__file__))) as zf:
            for name in zf.namelist():
                if name.startswith("site/"):
                    zf.extract(name, tmp)
        (tmp / "site" / ".complete").write_text(BUILD)
        try:
            os.replace(tmp / "site", site)
        except OSError:
            pass  # another run unpacked it first
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    sys.path.insert(0, str(site))
    if os.path.basename(sys.argv[0]).startswith("kubectl_complete-ray"):
        from kuberay.kubectl_ray.completion import complete_main
        return complete_main()
    from kuberay.kubectl_ray.main import main as run
    return run()

if __name__ == "__main__":
    sys.exit(main())
'''


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(name: str, exclude: set[str] | None = None) -> dict[str, metadata.Distribution]:
    """``name`` and every distribution it requires (no extras), as installed here."""
    found: dict[str, metadata.Distribution] = {}
    todo = [name]
    skip = {_key(e) for e in exclude or set()}
    while todo:
        current = todo.pop()
        if _key(current) in found or _key(current) in skip:
            continue
        dist = metadata.distribution(current)
        found[_key(current)] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is not None and not Marker(str(req.marker)).evaluate({"extra": ""}):
                continue
            todo.append(req.name)
    return found


def dist_files(dist: metadata.Distribution) -> list[tuple[str, Path]]:
    """(path inside site-packages, file on disk) of every installed file of ``dist``."""
    out: list[tuple[str, Path]] = []
    for f in dist.files or []:
        rel = str(f)
        if rel.startswith("..") or "__pycache__" in rel or rel.endswith(".pyc"):
            continue
        path = Path(str(dist.locate_file(f)))
        if path.is_file():
            out.append((rel, path))
    return out


def _wheel_tag(dist: metadata.Distribution) -> str:
    """The compressed tag set of the wheel ``dist`` was installed from (``py2.py3-none-any``)."""
    text = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]
    if not tags:
        return "py3-none-any"
    parts: list[list[str]] = [[], [], []]
    for tag in tags:
        for i, part in enumerate(tag.split("-", 2)):
            if part not in parts[i]:
                parts[i].append(part)
    return "-".join(".".join(p) for p in parts)


def repack(dist: metadata.Distribution, out: Path) -> Path:
    """``dist`` as installed, zipped back into a wheel in ``out``."""
    name = re.sub(r"[-.]+", "_", dist.metadata["Name"])
    wheel = out / f"{name}-{dist.version}-{_wheel_tag(dist)}.whl"
    records: list[list[str]] = []
    record_name = ""
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, path in dist_files(dist):
            if rel.endswith(".dist-info/RECORD"):
                record_name = rel
                continue
            if rel.endswith((".dist-info/INSTALLER", ".dist-info/REQUESTED", "direct_url.json")):
                continue
            data = path.read_bytes()
            zf.writestr(rel, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append([rel, f"sha256={digest.decode()}", str(len(data))])
        buf = io.StringIO()
        csv.writer(buf).writerows([*records, [record_name, "", ""]])
        zf.writestr(record_name, buf.getvalue())
    return wheel


def wheelhouse(out: Path, exclude_project: bool = True) -> list[Path]:
    """Every dependency of the project (not the project itself) repacked into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    return [
        repack(d, out)
        for k, d in closure(PROJECT).items()
        if not (exclude_project and k == PROJECT)
    ]


def build_wheel(out: Path) -> Path:
    """The project's wheel, built from the tree (no network: no build isolation)."""
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.glob("kuberay-*.whl"))
    for old in before:
        old.unlink()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(ROOT)],
        check=True,
    )  # fmt: skip
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    return next(out.glob("kuberay-*.whl"))


def locked_distributions(lock: Path = LOCK) -> list[metadata.Distribution]:
    """The installed distributions of the lock's packages; raises when one is missing or at
    another version than the lock pins."""
    found: list[metadata.Distribution] = []
    for name, version in sorted(read_lock(lock).items()):
        dist = metadata.distribution(name)
        if dist.version != version:
            raise SystemExit(
                f"plugin: {name} {dist.version} is installed, the lock pins {version} "
                "(make deps installs the lock's versions)"
            )
        found.append(dist)
    return found


def build_zipapp(target: Path) -> str:
    """Write the zipapp; its build id."""
    files: list[tuple[str, Path]] = []
    for dist in locked_distributions():
        files += [(rel, p) for rel, p in dist_files(dist) if ".dist-info/" not in rel]
    package = ROOT / PROJECT
    files += [
        (str(p.relative_to(ROOT)), p)
        for p in sorted(package.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]
    digest = hashlib.sha256()
    for rel, path in sorted(files):
        digest.update(rel.encode() + b"\0" + path.read_bytes())
    pyver = sys.version_info[:2]
    build = f"{metadata.version(PROJECT)}-py{pyver[0]}{pyver[1]}-{digest.hexdigest()[:12]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("__main__.py", BOOTSTRAP.format(build=build, pyver=pyver))
        for rel, path in files:
            zf.writestr(f"site/{rel}", path.read_bytes())
    body = target.read_bytes()
    target.write_bytes(f"#!/usr/bin/env python{pyver[0]}.{pyver[1]}\n".encode() + body)
    target.chmod(0o755)
    return build


def _platform() -> tuple[str, str]:
    arch = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine(), platform.machine()
    )
    return sys.platform, arch


def build_archive(pyz: Path, out: Path) -> Path:
    """The krew archive: ``kubectl-ray`` (the zipapp), ``kubectl_complete-ray`` (a shell
    script running ``kubectl-ray __complete``) and LICENSE."""
    os_name, arch = _platform()
    archive = out / f"kubectl-ray-{os_name}-{arch}.tar.gz"
    complete = b'#!/bin/sh\nexec kubectl-ray __complete "$@"\n'
    with tarfile.open(archive, "w:gz") as tf:
        for name, data in (("kubectl-ray", pyz.read_bytes()), ("kubectl_complete-ray", complete)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            tf.addfile(info, io.BytesIO(data))
        tf.add(ROOT / "LICENSE", arcname="LICENSE")
    return archive


def krew_manifest(archive: Path, url_base: str, version: str) -> str:
    """A krew ``Plugin`` manifest for ``archive``."""
    os_name, arch = _platform()
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return f"""apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: ray
spec:
  version: v{version}
  homepage: https://kuberay-python.invalid
  shortDescription: Manage Ray clusters, jobs and services (Python port, plus why/render)
  description: |
    kubectl ray: KubeRay's kubectl plugin re-implemented in Python, with
    `why` (why a Ray resource is not ready), `render` (what the operator would
    create), get job/service/cronjob listings and shell completion.
    Needs python{py} on PATH.
  caveats: |
    This plugin is named "ray" like KubeRay's Go plugin; only one of the two can
    be installed with krew at a time (see docs/kubectl-ray.md).
  platforms:
  - selector:
      matchLabels:
        os: {os_name}
        arch: {arch}
    uri: {url_base.format(version=version)}/{archive.name}
    sha256: {sha}
    bin: kubectl-ray
"""


def main() -> int:
    """Build every artifact into ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "dist"), help="output directory")
    parser.add_argument("--url-base", default=DEFAULT_URL_BASE, help="release download URL")
    args = parser.parse_args()
    out = Path(args.out)
    version = metadata.version(PROJECT)
    wheel = build_wheel(out)
    pyz = out / "kubectl-ray.pyz"
    build = build_zipapp(pyz)
    archive = build_archive(pyz, out)
    (out / "krew").mkdir(parents=True, exist_ok=True)
    manifest = out / "krew" / "ray.yaml"
    manifest.write_text(krew_manifest(archive, args.url_base, version))
    for path in (wheel, pyz, archive, manifest):
        print(f"{path} ({path.stat().st_size // 1024} KiB)")
    print(f"zipapp build {build}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
