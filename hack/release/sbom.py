"""A CycloneDX 1.5 SBOM (JSON) of the ``kuberay`` distribution and its runtime dependencies as
installed in this environment: the closure of its ``Requires-Dist`` (extras left out, markers
evaluated here), each with its version, PyPI purl and declared license, and the dependency
graph.

    python hack/release/sbom.py [--out dist/kuberay-<version>.cdx.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import uuid
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

ROOT_DIST = "kuberay"


def normalize(name: str) -> str:
    """PEP 503's normalized name (what purls use)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist: metadata.Distribution) -> list[str]:
    """Names of the runtime requirements of ``dist`` that apply here (no extras)."""
    names: list[str] = []
    for text in dist.requires or ():
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        names.append(normalize(req.name))
    return names


def _license(dist: metadata.Distribution) -> list[dict[str, Any]]:
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


def purl(dist: metadata.Distribution) -> str:
    """``pkg:pypi/<name>@<version>``."""
    return f"pkg:pypi/{normalize(dist.metadata['Name'])}@{dist.version}"


def closure(root: str = ROOT_DIST) -> dict[str, tuple[metadata.Distribution, list[str]]]:
    """Normalized name -> (distribution, the names it requires), from ``root`` down."""
    found: dict[str, tuple[metadata.Distribution, list[str]]] = {}
    todo = [normalize(root)]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        dist = metadata.distribution(name)
        requires = _requirements(dist)
        found[name] = (dist, requires)
        todo += [r for r in requires if r not in found]
    return found


def sbom(root: str = ROOT_DIST) -> dict[str, Any]:
    """The CycloneDX document."""
    dists = closure(root)
    top, _ = dists[normalize(root)]
    components = [
        {
            "type": "library",
            "bom-ref": purl(dist),
            "name": dist.metadata["Name"],
            "version": dist.version,
            "purl": purl(dist),
            "licenses": _license(dist),
        }
        for name, (dist, _) in sorted(dists.items())
        if name != normalize(root)
    ]
    dependencies = [
        {"ref": purl(dist), "dependsOn": sorted(purl(dists[r][0]) for r in requires)}
        for _, (dist, requires) in sorted(dists.items())
    ]
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
                "bom-ref": purl(top),
                "name": top.metadata["Name"],
                "version": top.version,
                "purl": purl(top),
                "licenses": _license(top),
            },
        },
        **body,
    }


def sbom_text(root: str = ROOT_DIST) -> str:
    """The SBOM as indented JSON text."""
    return json.dumps(sbom(root), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the SBOM, or write it to --out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, help="file to write (default: stdout)")
    args = parser.parse_args(argv)
    text = sbom_text()
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
