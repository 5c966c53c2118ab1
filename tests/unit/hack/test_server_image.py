"""The history server's image (``hack/release/images.py server``): KubeRay's image names, the
collector's recipe with the server as entrypoint, its own digest over the same sources, and,
when ``make images`` has built it for the current sources, the archive itself."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

import kuberay
from hack.release import images, ray_ui

ROOT = Path(__file__).resolve().parents[3]
SITE = re.compile(r"^\./opt/kuberay/lib/python3\.\d+/site-packages/")


def test_tags_are_this_project_s_local_name() -> None:
    tags = images.SERVER_TAGS
    assert tags == (
        f"localhost/kuberay-python/history-server:{kuberay.__version__}",
        "localhost/kuberay-python/history-server:latest",
    )


def test_config_is_the_collector_s_with_the_server_as_entrypoint() -> None:
    config = images.server_config()
    assert config["User"] == "1000:1000"
    assert config["Entrypoint"] == ["kuberay-history-server"]
    assert "Cmd" not in config  # a Deployment's args are the server's flags
    collector = images.collector_config()
    assert {k: v for k, v in config.items() if k != "Entrypoint"} == {
        k: v for k, v in collector.items() if k != "Entrypoint"
    }
    env = config["Env"]
    assert isinstance(env, list)
    assert f"PATH={images.COLLECTOR_VENV}/bin:{images.PATH_ENV}" in env
    assert "PYTHONUNBUFFERED=1" in env


def test_the_console_script_exists() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'kuberay-history-server = "kuberay.historyserver.server.main:main"' in text


def test_make_images_builds_it() -> None:
    assert images.BUILDERS["server"] is images.build_server
    # built by make images, not imported by every real node: no e2e runs the server in a pod
    assert "server" not in images.NODE_IMAGES
    images_target = (ROOT / "Makefile").read_text().split("\nimages:", 1)[1].split("\n\n", 1)[0]
    assert "server" in images_target.split()


def test_digest_is_its_own_and_cached_by_it() -> None:
    assert images.server_digest() != images.collector_digest()
    assert images.archive_path("server").name == f"server-{images.server_digest()[:12]}.tar"
    # the collector's cache key did not move when the server image was added
    assert images.collector_digest() == images.collector_digest(images.REPO, "collector")


def test_the_digest_changes_with_the_history_server_s_sources_only(tmp_path: Path) -> None:
    for path in images.collector_files(ROOT):
        dest = tmp_path / path.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(path.read_bytes())
    (tmp_path / "kuberay/cmd").mkdir()
    other = tmp_path / "kuberay/cmd/x.py"
    other.write_text("X = 1\n")
    before = images.server_digest(tmp_path)
    other.write_text("X = 2\n")
    assert images.server_digest(tmp_path) == before
    server_file = tmp_path / "kuberay/historyserver/server/main.py"
    server_file.write_text(server_file.read_text() + "\n# changed\n")
    assert images.server_digest(tmp_path) != before


def test_built_archive() -> None:
    archive = images.archive_path("server")
    if not archive.exists():
        pytest.skip(f"{archive.name} not built for these sources (make images builds it)")
    with tarfile.open(archive) as outer:
        manifest = json.load(outer.extractfile("manifest.json"))  # type: ignore[arg-type]
        assert len(manifest) == 1
        assert manifest[0]["RepoTags"] == list(images.SERVER_TAGS)
        config = json.load(outer.extractfile(manifest[0]["Config"]))  # type: ignore[arg-type]
        assert config["config"] == images.server_config()
        names: set[str] = set()
        for layer_name in manifest[0]["Layers"]:
            layer_file = outer.extractfile(layer_name)
            assert layer_file is not None
            with tarfile.open(fileobj=layer_file, mode="r|") as layer:
                names.update(member.name for member in layer)
    site = {SITE.sub("", n) for n in names if SITE.match(n)}
    assert "kuberay/historyserver/server/main.py" in site
    assert "aiohttp/__init__.py" in site
    assert "aiobotocore/__init__.py" in site
    assert not any(n == "ray" or n.startswith("ray/") for n in site), "Ray in the server image"
    assert "./opt/kuberay/bin/kuberay-history-server" in names
    # Ray's dashboard UI of each Ray image built here, where --dashboard-dir looks (/dashboard)
    for version in images.SERVER_UI_VERSIONS:
        build = f".{images.SERVER_UI_DIR}/{ray_ui.major_minor(version)}"
        assert f"{build}/index.html" in names, f"no UI build of Ray {version}"
        assert any(n.startswith(f"{build}/static/js/main.") for n in names)


def test_the_digest_follows_the_ray_images_its_ui_builds_come_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = images.server_digest()
    monkeypatch.setattr(images, "SERVER_UI_VERSIONS", (images.RAY_VERSION, "2.61.0"))
    assert images.server_digest() != before
