"""``hack/release/ray_ui.py``: Ray's dashboard build taken out of a Ray image archive (the layout
``hack/release/images.py`` writes: ``docker save`` format, one layer tar per entry)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from hack.release import ray_ui

SITE = "./home/ray/anaconda3/lib/python3.11/site-packages/ray/dashboard/client/build/"


def _tar(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _archive(path: Path, *layers: dict[str, bytes]) -> Path:
    names = [f"l{i}/layer.tar" for i in range(len(layers))]
    manifest = json.dumps([{"Config": "c.json", "RepoTags": ["x:y"], "Layers": names}])
    outer = {"manifest.json": manifest.encode(), "c.json": b"{}"}
    outer.update({n: _tar(layer) for n, layer in zip(names, layers, strict=True)})
    path.write_bytes(_tar(outer))
    return path


def test_takes_the_build_and_nothing_else(tmp_path: Path) -> None:
    archive = _archive(
        tmp_path / "ray.tar",
        {
            SITE + "index.html": b"<html>",
            SITE + "static/js/main.1.js": b"js",
            "./home/ray/anaconda3/lib/python3.11/site-packages/ray/__init__.py": b"",
            "./etc/passwd": b"root",
        },
        {SITE + "static/js/../../../../escape": b"no", SITE + "favicon.ico": b"ico"},
    )
    dest = tmp_path / "ui" / "2.60"
    assert ray_ui.extract_dashboard_ui(archive, dest) == 3
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == ["favicon.ico", "index.html", "static/js/main.1.js"]
    assert not (tmp_path / "escape").exists() and not (tmp_path / "ui" / "escape").exists()


def test_an_image_without_a_build_is_an_error(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "pause.tar", {"./pause": b"\x7fELF"})
    with pytest.raises(ray_ui.RayUiError, match=r"no ray/dashboard/client/build/index\.html"):
        ray_ui.extract_dashboard_ui(archive, tmp_path / "out")


def test_major_minor() -> None:
    assert ray_ui.major_minor("2.60.0") == "2.60"
    with pytest.raises(ValueError):
        ray_ui.major_minor("nightly")


def test_cached_builds_are_extracted_once_per_version(tmp_path: Path) -> None:
    new = _archive(tmp_path / "ray-new.tar", {SITE + "index.html": b"<html>2.60"})
    missing = tmp_path / "ray.tar"  # not built
    cache = tmp_path / "cache"
    archives = {"2.60.0": new, "2.52.0": missing}
    assert ray_ui.cached_builds(archives, cache) == cache
    assert (cache / "2.60" / "index.html").read_bytes() == b"<html>2.60"
    assert sorted(p.name for p in cache.iterdir()) == ["2.60"]  # no temporary left over
    new.unlink()  # the second time the cache serves, the archive is not read
    assert ray_ui.cached_builds(archives, cache) == cache
    assert ray_ui.cached_builds({"2.52.0": missing}, tmp_path / "none") is None


def test_a_failed_extraction_leaves_no_build(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "pause.tar", {"./pause": b"\x7fELF"})
    cache = tmp_path / "cache"
    with pytest.raises(ray_ui.RayUiError):
        ray_ui.cached_builds({"2.60.0": archive}, cache)
    assert list(cache.iterdir()) == []
