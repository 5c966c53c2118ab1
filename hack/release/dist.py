"""``make dist``: every release artifact, flat in ``dist/``, all of one version
(``kuberay/__init__.py``'s ``__version__``; the operator chart's appVersion must equal it).

* ``kuberay-<v>-py3-none-any.whl``, ``kuberay-<v>.tar.gz``: the wheel and the sdist (PEP 517,
  ``python -m build``, from the files hack/release/image_context.py lists, so never
  .venv/.git/.run);
* ``kuberay-operator-<chart version>.tgz``, ``ray-cluster-<chart version>.tgz``,
  ``kuberay-apiserver-<chart version>.tgz`` and ``index.yaml``: the charts (``helm package``)
  and a Helm repository index over them;
* ``kuberay-operator-image-<v>.oci.tar``, ``kuberay-apiserver-image-<v>.oci.tar``,
  ``kuberay-history-collector-image-<v>.oci.tar``,
  ``kuberay-history-server-image-<v>.oci.tar``: the images hack/release/images.py builds, as OCI
  image layout archives (``--no-images`` leaves them out: building needs root);
* ``kuberay-crds-<v>.yaml``: the ray.io CRDs in one file (``kubectl apply --server-side -f``);
* ``kuberay-manifests-<v>.tar.gz``: manifests/ (the kustomize trees: crds, operator, default,
  overlays/webhook, rbac, historyserver, apiserver);
* ``kuberay-<v>.cdx.json``: a CycloneDX SBOM of the operator image (hack/release/sbom.py): the
  package, the Python packages of ``requirements/runtime.lock`` and the Debian packages of
  the image's rootfs (when the operator image was built: not with ``--no-images`` and no
  image built before);
* ``SHA256SUMS``: ``sha256sum -c`` format, over every other file (the ``kubectl ray``
  plugin's artifacts too: ``make dist`` runs ``make plugin`` into the same directory first).

Usage: python hack/release/dist.py [--out dist] [--no-images] [--clean]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.build_helm import binary_path as helm_path
from hack.release.image_context import context_files
from hack.release.images import ensure, operator_dpkg_status
from hack.release.oci import docker_to_oci
from hack.release.operator_image import package_version
from hack.release.sbom import sbom_text

REPO = Path(__file__).resolve().parents[2]
CHARTS = REPO / "manifests" / "helm"
#: the charts ``helm package`` archives; those carrying this project's images (``appVersion``
#: is their default tag) must name the package version
CHART_NAMES = ("kuberay-operator", "ray-cluster", "kuberay-apiserver")
VERSIONED_CHARTS = ("kuberay-operator", "kuberay-apiserver")
#: the sdist's and wheel's sources
SOURCE_FILES = ("pyproject.toml", "README.md", "LICENSE", "kuberay")
#: images.py name -> artifact name (without version)
IMAGES = {
    "operator": "kuberay-operator-image",
    "apiserver": "kuberay-apiserver-image",
    "collector": "kuberay-history-collector-image",
    "server": "kuberay-history-server-image",
}


def _log(msg: str) -> None:
    print(f"dist: {msg}", file=sys.stderr, flush=True)


def check_versions(version: str) -> None:
    """The appVersion of each chart in VERSIONED_CHARTS is the package version."""
    for name in VERSIONED_CHARTS:
        chart = yaml.safe_load((CHARTS / name / "Chart.yaml").read_text())
        if str(chart.get("appVersion")) != version:
            raise SystemExit(
                f"manifests/helm/{name}/Chart.yaml appVersion {chart.get('appVersion')!r}"
                f" is not the package version {version!r} (kuberay/__init__.py)"
            )


def build_python(out: Path) -> None:
    """Wheel and sdist from a copy of the sources (no build state left in the checkout)."""
    with tempfile.TemporaryDirectory(prefix="kuberay-dist-") as tmp:
        src = Path(tmp) / "src"
        for path in context_files(REPO, SOURCE_FILES):
            dest = src / path.relative_to(REPO)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
        subprocess.run(
            [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(src)],
            check=True,
            stdout=subprocess.DEVNULL,
        )


def package_charts(out: Path) -> None:
    """``helm package`` every chart in CHART_NAMES into ``out`` and index them."""
    helm = str(helm_path())
    for chart in CHART_NAMES:
        subprocess.run(
            [helm, "package", str(CHARTS / chart), "--destination", str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    subprocess.run([helm, "repo", "index", str(out)], check=True)


def export_images(out: Path, version: str) -> None:
    """The images as OCI archives (built when missing)."""
    built = ensure(list(IMAGES))
    for name, artifact in IMAGES.items():
        docker_to_oci(built[name], out / f"{artifact}-{version}.oci.tar")


def write_crd_bundle(out: Path, version: str) -> None:
    """Every ray.io CRD in one YAML stream."""
    docs = []
    for path in sorted((REPO / "manifests/crds").glob("*.yaml")):
        text = path.read_text().strip()
        if "kind: CustomResourceDefinition" in text:
            docs.append(text.removeprefix("---").lstrip("\n") + "\n")
    (out / f"kuberay-crds-{version}.yaml").write_text("---\n".join(docs))


def write_manifests(out: Path, version: str) -> None:
    """manifests/ (every kustomize tree) as a tarball, rooted at ``kuberay-manifests-<v>/``."""
    target = out / f"kuberay-manifests-{version}.tar.gz"
    with tarfile.open(target, "w:gz") as tar:
        for path in sorted((REPO / "manifests").rglob("*")):
            if path.is_file() and "helm" not in path.relative_to(REPO / "manifests").parts:
                tar.add(
                    path,
                    arcname=f"kuberay-manifests-{version}/{path.relative_to(REPO / 'manifests')}",
                )


def write_sums(out: Path) -> None:
    """SHA256SUMS over every other file under ``out`` (e.g. the plugin's krew/ray.yaml too)."""
    lines = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        name = path.relative_to(out).as_posix()
        if name != "SHA256SUMS":
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            lines.append(f"{digest}  {name}\n")
    (out / "SHA256SUMS").write_text("".join(lines))


def main(argv: list[str] | None = None) -> int:
    """Write every artifact into --out (emptied first)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO / "dist")
    parser.add_argument("--no-images", action="store_true", help="leave the images out")
    parser.add_argument(
        "--clean", action="store_true", help="empty --out first (make dist empties it itself)"
    )
    args = parser.parse_args(argv)
    version = package_version()
    check_versions(version)
    out: Path = args.out
    if args.clean:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    _log(f"version {version} into {out}")
    build_python(out)
    package_charts(out)
    write_crd_bundle(out, version)
    write_manifests(out, version)
    if not args.no_images:
        export_images(out, version)
    status = operator_dpkg_status()
    sbom = sbom_text(dpkg_status=status if status.exists() else None)
    (out / f"kuberay-{version}.cdx.json").write_text(sbom)
    write_sums(out)
    for path in sorted(out.iterdir()):
        _log(f"{path.name} ({path.stat().st_size / (1 << 20):.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
