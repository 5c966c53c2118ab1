"""The release tooling: one version from one place, OCI archives whose blobs match their
digests, a CycloneDX SBOM of the runtime closure, checksums ``sha256sum -c`` accepts, and
``make dist`` wired to the plugin target when there is one."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tarfile
import tomllib
from pathlib import Path

import yaml

import kuberay
from hack.release import dist, images, lock, oci, operator_image, sbom

ROOT = Path(__file__).resolve().parents[3]


def test_one_version_from_one_place() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "kuberay.__version__"}
    assert operator_image.package_version() == kuberay.__version__
    chart = yaml.safe_load((ROOT / "manifests/helm/kuberay-operator/Chart.yaml").read_text())
    assert chart["appVersion"] == kuberay.__version__
    dist.check_versions(kuberay.__version__)


def _docker_archive(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/hello").write_text("hi\n")
    layer = tmp_path / "layer.tar"
    with tarfile.open(layer, "w") as tar:
        tar.add(root / "etc/hello", arcname="etc/hello")
    out = tmp_path / "image.tar"
    images.write_docker_archive(out, [layer], {"Entrypoint": ["/x"]}, ("example.com/a:1", "a:2"))
    return out


def test_oci_archive_blobs_match_their_digests(tmp_path: Path) -> None:
    out = tmp_path / "image.oci.tar"
    index = oci.docker_to_oci(_docker_archive(tmp_path), out)
    with tarfile.open(out) as tar:
        names = set(tar.getnames())
        assert json.load(tar.extractfile("oci-layout")) == {"imageLayoutVersion": "1.0.0"}  # type: ignore[arg-type]
        assert json.load(tar.extractfile("index.json")) == index  # type: ignore[arg-type]

        def blob(digest: str) -> bytes:
            data = tar.extractfile(f"blobs/sha256/{digest.removeprefix('sha256:')}").read()  # type: ignore[union-attr]
            assert f"sha256:{hashlib.sha256(data).hexdigest()}" == digest
            return data

        refs = [m["annotations"]["org.opencontainers.image.ref.name"] for m in index["manifests"]]
        assert refs == ["example.com/a:1", "a:2"]
        manifest = json.loads(blob(index["manifests"][0]["digest"]))
        assert manifest["mediaType"] == oci.MANIFEST_TYPE
        config = json.loads(blob(manifest["config"]["digest"]))
        assert config["config"] == {"Entrypoint": ["/x"]}
        [layer] = manifest["layers"]
        assert layer["size"] == len(blob(layer["digest"]))
        assert len(names) == 2 + 3  # layout, index, manifest, config, one layer


def test_sbom_lists_the_lock_and_the_image_debian_packages(tmp_path: Path) -> None:
    status = tmp_path / "status"
    status.write_text(
        "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\n"
        "Version: 2.36-9+deb12u10\nDepends: libgcc-s1\n\n"
        "Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\n"
        "Version: 1.0\n\n"
        "Package: python3\nStatus: install ok installed\nArchitecture: amd64\n"
        "Version: 3.11.2-1+b1\nDescription: interactive\n high-level language\n"
    )
    doc = sbom.sbom(dpkg_status=status)
    assert (doc["bomFormat"], doc["specVersion"]) == ("CycloneDX", "1.5")
    top = doc["metadata"]["component"]
    assert top["purl"] == f"pkg:pypi/kuberay@{kuberay.__version__}"
    pypi = {c["purl"].removeprefix("pkg:pypi/") for c in doc["components"] if "pypi" in c["purl"]}
    assert pypi == {f"{name}@{version}" for name, version in lock.read_lock().items()}
    debs = [c["purl"] for c in doc["components"] if c["purl"].startswith("pkg:deb/")]
    assert debs == [
        "pkg:deb/debian/libc6@2.36-9+deb12u10?arch=amd64&distro=bookworm",
        "pkg:deb/debian/python3@3.11.2-1+b1?arch=amd64&distro=bookworm",
    ]
    refs = {c["bom-ref"] for c in doc["components"]} | {top["bom-ref"]}
    for dep in doc["dependencies"]:
        assert dep["ref"] in refs and set(dep["dependsOn"]) <= refs
    by_ref = {d["ref"]: d for d in doc["dependencies"]}
    assert any("aiohttp" in r for r in by_ref[top["bom-ref"]]["dependsOn"])
    assert any(
        "yarl" in r for r in by_ref[f"pkg:pypi/aiohttp@{lock.read_lock()['aiohttp']}"]["dependsOn"]
    )
    assert "kubernetes-asyncio" not in json.dumps(doc)  # not in the image, not in its SBOM


def test_sums_are_what_sha256sum_checks(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "krew").mkdir()
    (tmp_path / "krew/b.yaml").write_bytes(b"\0\1")
    dist.write_sums(tmp_path)
    sha256sum = shutil.which("sha256sum")
    assert sha256sum
    proc = subprocess.run(
        [sha256sum, "-c", "SHA256SUMS"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.count(": OK") == 2, proc.stdout
    (tmp_path / "a.txt").write_text("changed\n")
    assert subprocess.run([sha256sum, "-c", "--quiet", "SHA256SUMS"], cwd=tmp_path).returncode


def test_crd_bundle_has_every_crd(tmp_path: Path) -> None:
    dist.write_crd_bundle(tmp_path, "9.9.9")
    text = (tmp_path / "kuberay-crds-9.9.9.yaml").read_text()
    docs = text.split("\n---\n")  # (parsing 4 MB of YAML in pure Python takes a minute)
    assert all(d.startswith("apiVersion: apiextensions.k8s.io/v1\n") for d in docs)
    names = [re.search(r"^metadata:\n(?:  .*\n)*?  name: (\S+)$", d, re.M) for d in docs]
    assert sorted(m.group(1) for m in names if m) == [
        "rayclusters.ray.io",
        "raycronjobs.ray.io",
        "rayjobs.ray.io",
        "rayservices.ray.io",
    ]


def test_make_dist_runs_the_plugin_target_when_there_is_one() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ndist:", 1)[1].split("\n\n", 1)[0]
    assert "grep -q '^plugin:' Makefile" in recipe and "$(MAKE) plugin" in recipe
    # dist/ is emptied before the plugin writes into it, not after
    assert recipe.index("rm -rf dist") < recipe.index("$(MAKE) plugin")
    assert recipe.index("$(MAKE) plugin") < recipe.index("hack/release/dist.py")
