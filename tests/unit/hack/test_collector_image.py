"""The history server's collector image (``hack/release/images.py collector``): its tags, user and
entrypoint, what its digest covers, and, when ``make images`` has built it for the current
sources, the archive itself (no Ray in its venv)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import kuberay
from hack.release import images

ROOT = Path(__file__).resolve().parents[3]
SITE = re.compile(r"^\./opt/kuberay/lib/python3\.\d+/site-packages/")


def test_tags_stand_in_for_kuberay_s_collector_images() -> None:
    tags = images.COLLECTOR_TAGS
    assert tags == (
        f"localhost/kuberay-python/collector:{kuberay.__version__}",
        "quay.io/kuberay/collector:v1.7.0",
        "quay.io/kuberay/collector:nightly",  # what KubeRay's ray-cluster.historyserver.yaml names
    )


def test_config_is_non_root_with_the_collector_as_entrypoint() -> None:
    config = images.collector_config()
    assert config["User"] == "1000:1000"
    assert config["Entrypoint"] == ["kuberay-history-collector"]
    assert "Cmd" not in config  # the operator sets no command on the sidecar
    env = config["Env"]
    assert isinstance(env, list)
    assert f"PATH={images.COLLECTOR_VENV}/bin:{images.PATH_ENV}" in env


def test_make_images_and_the_real_node_include_it() -> None:
    assert images.BUILDERS["collector"] is images.build_collector
    assert "collector" in images.NODE_IMAGES
    images_target = (ROOT / "Makefile").read_text().split("\nimages:", 1)[1].split("\n\n", 1)[0]
    assert "collector" in images_target.split()


def test_the_digest_covers_every_module_the_collector_imports() -> None:
    # import every historyserver module in a fresh interpreter; every kuberay module that
    # pulls in must be a file the image installs (and so one the digest covers)
    code = (
        "import importlib, pkgutil, sys, kuberay.historyserver as h\n"
        "for m in pkgutil.walk_packages(h.__path__, h.__name__ + '.'):\n"
        "    importlib.import_module(m.name)\n"
        "print('\\n'.join(sorted(m.__file__ for n, m in sys.modules.items()\n"
        "    if n == 'kuberay' or n.startswith('kuberay.'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    imported = {Path(line).resolve() for line in out.split()}
    covered = {p.resolve() for p in images.collector_files(ROOT)}
    assert imported, out
    assert imported <= covered, sorted(imported - covered)
    assert ROOT / "pyproject.toml" in covered


def test_the_digest_changes_with_the_collector_s_sources_only(tmp_path: Path) -> None:
    for path in images.collector_files(ROOT):
        dest = tmp_path / path.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    (tmp_path / "kuberay/controllers").mkdir()
    operator_file = tmp_path / "kuberay/controllers/x.py"
    operator_file.write_text("X = 1\n")
    before = images.collector_digest(tmp_path)
    operator_file.write_text("X = 2\n")
    assert images.collector_digest(tmp_path) == before
    collector_file = tmp_path / "kuberay/historyserver/layout.py"
    collector_file.write_text(collector_file.read_text() + "\n# changed\n")
    assert images.collector_digest(tmp_path) != before


def test_built_archive() -> None:
    archive = images.archive_path("collector")
    if not archive.exists():
        pytest.skip(f"{archive.name} not built for these sources (make images builds it)")
    with tarfile.open(archive) as outer:
        manifest = json.load(outer.extractfile("manifest.json"))  # type: ignore[arg-type]
        assert len(manifest) == 1
        assert manifest[0]["RepoTags"] == list(images.COLLECTOR_TAGS)
        config = json.load(outer.extractfile(manifest[0]["Config"]))  # type: ignore[arg-type]
        assert config["config"] == images.collector_config()
        names: set[str] = set()
        passwd = b""
        for layer_name in manifest[0]["Layers"]:
            layer_file = outer.extractfile(layer_name)
            assert layer_file is not None
            with tarfile.open(fileobj=layer_file, mode="r|") as layer:
                for member in layer:
                    names.add(member.name)
                    if member.name == "./etc/passwd":
                        f = layer.extractfile(member)
                        assert f is not None
                        passwd = f.read()
    site = {SITE.sub("", n) for n in names if SITE.match(n)}
    assert "kuberay/historyserver/collector/main.py" in site
    assert "aiobotocore/__init__.py" in site  # the history extra's storage clients
    assert not any(n == "ray" or n.startswith("ray/") for n in site), "Ray in the collector"
    assert not any(n.startswith("kuberay/controllers") for n in site)
    assert "./opt/kuberay/bin/kuberay-history-collector" in names
    assert "./home/ray/anaconda3" not in names
    assert re.search(rb"^kuberay:x:1000:1000:", passwd, re.M), passwd
