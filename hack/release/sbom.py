"""A CycloneDX 1.5 SBOM (JSON) of the operator image: the ``kuberay`` package, the Python
packages of ``requirements/runtime.lock`` (what the image installs, exactly those versions:
hack/release/lock.py) and, when the image's dpkg status is given, the Debian packages of its
root filesystem. Licenses and the dependency graph of the Python packages come from their
metadata as installed here (the lock's versions: ``make deps`` installs with it as
constraints).

    python hack/release/sbom.py [--out dist/kuberay-<version>.cdx.json] [--dpkg-status FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: import hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.release.lock import LOCK, normalize, read_lock, requires, root_requirements
from hack.release.operator_image import package_version
from hack.release.rootfs import DEBIAN_SUITE

ROOT_DIST = "kuberay"


def _installed(name: str, version: str) -> metadata.Distribution | None:
    """The installed distribution ``name`` if it is at ``version``."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    return dist if dist.version == version else None


def _license(dist: metadata.Distribution | None) -> list[dict[str, Any]]:
    if dist is None:
        return []
    meta = dist.metadata
    expression = meta.get("License-Expression")
    if expression:
        return [{"expression": expression}]
    text = (meta.get("License") or "").strip()
    if text and "\n" not in text and len(text) < 100:
        return [{"license": {"name": text}}]
    classifiers = [
        c.split("::")[-1].strip()
        for c in meta.get_all("Classifier") or ()
        if c.startswith("License ::")
    ]
    return [{"license": {"name": c}} for c in classifiers]


def pypi_purl(name: str, version: str) -> str:
    """``pkg:pypi/<normalized name>@<version>``."""
    return f"pkg:pypi/{normalize(name)}@{version}"


def deb_purl(package: str, version: str, arch: str) -> str:
    """``pkg:deb/debian/<package>@<version>?arch=<arch>&distro=<suite>``."""
    return f"pkg:deb/debian/{package}@{version}?arch={arch}&distro={DEBIAN_SUITE}"


def dpkg_packages(status: Path) -> list[tuple[str, str, str]]:
    """(package, version, architecture) of every installed package in a dpkg status file."""
    found: list[tuple[str, str, str]] = []
    for paragraph in status.read_text(errors="replace").split("\n\n"):
        fields: dict[str, str] = {}
        for line in paragraph.splitlines():
            if line and not line[0].isspace() and ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields.get("Package") and fields.get("Status", "").endswith(" installed"):
            found.append((fields["Package"], fields["Version"], fields.get("Architecture", "")))
    return sorted(found)


def _python_components(pins: dict[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    components: list[dict[str, Any]] = []
    dependencies: list[dict[str, Any]] = []
    for name, version in sorted(pins.items()):
        dist = _installed(name, version)
        ref = pypi_purl(name, version)
        components.append(
            {
                "type": "library",
                "bom-ref": ref,
                "name": dist.metadata["Name"] if dist is not None else name,
                "version": version,
                "purl": ref,
                "licenses": _license(dist),
            }
        )
        needs = [r for r in requires(dist) if r in pins] if dist is not None else []
        dependencies.append(
            {"ref": ref, "dependsOn": sorted(pypi_purl(r, pins[r]) for r in set(needs))}
        )
    return components, dependencies


def sbom(lock: Path = LOCK, dpkg_status: Path | None = None) -> dict[str, Any]:
    """The CycloneDX document for the lock ``lock`` and, if given, the dpkg status file."""
    pins = read_lock(lock)
    version = package_version()
    top_ref = pypi_purl(ROOT_DIST, version)
    components, dependencies = _python_components(pins)
    roots = {normalize(r.name) for r in root_requirements()}
    dependencies.insert(
        0, {"ref": top_ref, "dependsOn": sorted(pypi_purl(n, pins[n]) for n in roots & set(pins))}
    )
    if dpkg_status is not None:
        for package, deb_version, arch in dpkg_packages(dpkg_status):
            ref = deb_purl(package, deb_version, arch)
            components.append(
                {
                    "type": "library",
                    "bom-ref": ref,
                    "name": package,
                    "version": deb_version,
                    "purl": ref,
                }
            )
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    body = {"components": components, "dependencies": dependencies}
    serial = uuid.uuid5(uuid.NAMESPACE_URL, json.dumps(body, sort_keys=True))
    return {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "serialNumber": f"urn:uuid:{serial}",
        "version": 1,
        "metadata": {
            "timestamp": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tools": {"components": [{"type": "application", "name": "hack/release/sbom.py"}]},
            "component": {
                "type": "application",
                "bom-ref": top_ref,
                "name": ROOT_DIST,
                "version": version,
                "purl": top_ref,
                "licenses": _license(_installed(ROOT_DIST, version)),
            },
        },
        **body,
    }


def sbom_text(lock: Path = LOCK, dpkg_status: Path | None = None) -> str:
    """The SBOM as indented JSON text."""
    return json.dumps(sbom(lock, dpkg_status), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the SBOM, or write it to --out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, help="file to write (default: stdout)")
    parser.add_argument("--dpkg-status", type=Path, help="the image rootfs's var/lib/dpkg/status")
    args = parser.parse_args(argv)
    text = sbom_text(dpkg_status=args.dpkg_status)
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
