"""No chart, manifest or install doc names an image in a registry namespace this project
does not own: a default install would pull someone else's image (with the operator's
cluster-wide rights) or fail to pull. This project's images carry the local names
``make images`` tags (``localhost/kuberay-python/...``); KubeRay's collector names stay only
as aliases in the real node's image store (hack/release/images.py) and in KubeRay's samples."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
#: registry namespaces that are not this project's
FOREIGN = re.compile(r"docker\.io/kuberay-python|quay\.io/kuberay/|(?<![\w./-])kuberay-python/")
#: where KubeRay's names may appear: the node's alias tags and the docs describing them
ALLOWED = {
    "docs/history-server.md",
    "docs/real-node.md",
    "docs/development.md",
    "docs/install.md",
}
SCANNED = (
    "manifests",
    "docs",
    "README.md",
    "hack/release/plugin_dist.py",
)


def _files() -> list[Path]:
    found: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            found.append(path)
        else:
            found += [
                p
                for p in path.rglob("*")
                if p.suffix in (".yaml", ".yml", ".json", ".md", ".tpl", ".txt")
            ]
    return found


def test_no_foreign_image_names_in_charts_manifests_or_docs() -> None:
    offending = []
    for path in _files():
        rel = str(path.relative_to(ROOT))
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if FOREIGN.search(line) and not (rel in ALLOWED and "collector" in line):
                offending.append(f"{rel}:{n}: {line.strip()}")
    assert offending == []


def test_chart_defaults_are_local_names() -> None:
    values = (ROOT / "manifests/helm/kuberay-operator/values.yaml").read_text()
    assert "repository: localhost/kuberay-python/operator" in values
    assert "repository: localhost/kuberay-python/history-server" in values
    apiserver = (ROOT / "manifests/helm/kuberay-apiserver/values.yaml").read_text()
    assert "repository: localhost/kuberay-python/apiserver" in apiserver
    ray = (ROOT / "manifests/helm/ray-cluster/values.yaml").read_text()
    assert "repository: rayproject/ray" in ray  # KubeRay's Ray default stays
