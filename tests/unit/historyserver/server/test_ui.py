"""Serving Ray's dashboard UI: finding builds by version, ``/``, assets, the picker page."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from kuberay.historyserver.server import ui_builds
from kuberay.historyserver.server.app import make_app
from kuberay.historyserver.server.routes_ui import ray_version
from kuberay.historyserver.server.ui_builds import UiBuild, UiBuilds, major_minor
from kuberay.historyserver.server.ui_pages import SELECT_CLUSTER_PAGE, no_ui_page
from tests.unit.historyserver.server.stores import SESSION, collector_store

Client = TestClient[Any, Any]


def fake_build(root: Path, tag: str, extra: str = "") -> Path:
    """A UI build like the wheel's: index.html referring to ./static/js/main.js."""
    (root / "static" / "js").mkdir(parents=True)
    (root / "index.html").write_text(
        f'<!doctype html><html><head><script defer src="./static/js/main.js"></script>'
        f"</head><body>{tag}</body></html>"
    )
    (root / "static" / "js" / "main.js").write_text(f"console.log('{tag}')")
    (root / "favicon.ico").write_bytes(b"ico")
    if extra:
        (root / "static" / "js" / extra).write_text(extra)
    return root


@pytest.fixture
def ui_dir(tmp_path: Path) -> Path:
    d = tmp_path / "ui"
    fake_build(d / "2.60", "ui-2.60")
    fake_build(d / "2.56.1" / "client" / "build", "ui-2.56", extra="only56.js")
    fake_build(d / "2.52" / "ray" / "dashboard" / "client" / "build", "ui-2.52")
    (d / "notes").mkdir()
    (d / "2.99").mkdir()  # no build inside: ignored
    (tmp_path / "secret.txt").write_text("TOP-SECRET-CONTENT")
    return d


def _pick(builds: UiBuilds, version: str | None) -> UiBuild:
    found = builds.pick(version)
    assert found is not None
    return found


def test_major_minor() -> None:
    assert major_minor("2.60.0") == (2, 60) and major_minor("v2.56") == (2, 56)
    assert major_minor("2.61.0rc1") == (2, 61) and major_minor("nightly") is None
    assert major_minor(None) is None


def test_discover_versions_and_pick(ui_dir: Path) -> None:
    builds = UiBuilds.discover(str(ui_dir), use_installed_ray=False)
    assert [b.label for b in builds.builds] == ["2.52", "2.56", "2.60"]
    assert _pick(builds, "2.56.0").root == ui_dir / "2.56.1" / "client" / "build"
    assert _pick(builds, "2.60.0").label == "2.60"
    assert _pick(builds, "2.40.0").label == "2.60"  # no match: the newest
    assert _pick(builds, None).label == "2.60"
    assert not UiBuilds.discover(str(ui_dir / "missing"), use_installed_ray=False)


def test_single_build_dir_is_preferred_when_no_version_matches(tmp_path: Path) -> None:
    single = fake_build(tmp_path / "build", "single")
    ray = UiBuild(fake_build(tmp_path / "ray", "ray"), (2, 60), "ray-package")
    builds = UiBuilds((UiBuild(single, None, "dir"), ray))
    assert builds.pick("2.60.0") is ray
    assert _pick(builds, "2.56.0").root == single
    assert UiBuilds.discover(str(single), use_installed_ray=False).builds[0].version is None


def test_build_file_stays_inside(ui_dir: Path, tmp_path: Path) -> None:
    build = UiBuild(ui_dir / "2.60", (2, 60), "dir")
    assert build.file("static/js/main.js") == (ui_dir / "2.60/static/js/main.js").resolve()
    for bad in ("../../secret.txt", "static/../../..", "/etc/passwd", "", "static", "a\\b"):
        assert build.file(bad) is None, bad
    (ui_dir / "2.60" / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert build.file("link.txt") is None  # a symlink out of the build


def test_installed_ray_found_without_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "site" / "ray"
    fake_build(pkg / "dashboard" / "client" / "build", "wheel")
    (pkg / "__init__.py").write_text("raise RuntimeError('ray must not be imported')\n")
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *a: Any) -> Any:
        if name == "ray":
            return SimpleNamespace(submodule_search_locations=[str(pkg)])
        return real_find_spec(name, *a)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "2.60.0")
    found = ui_builds.installed_ray_build()
    assert found is not None and found.label == "2.60" and found.source == "ray-package"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert ui_builds.installed_ray_build() is None


def test_ray_version_from_metadata() -> None:
    assert ray_version({"result": True, "data": {"rayVersion": "2.60.0"}}) == "2.60.0"
    assert ray_version({"rayVersion": "2.56.0"}) == "2.56.0"
    assert ray_version(None) is None and ray_version({"data": []}) is None


def test_pages_are_self_contained() -> None:
    for page in (SELECT_CLUSTER_PAGE, no_ui_page("2.60.0")):
        assert "http://" not in page and "https://" not in page
        assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)
    assert "/clusters" in SELECT_CLUSTER_PAGE and "/enter_cluster/" in SELECT_CLUSTER_PAGE
    assert "innerHTML" not in SELECT_CLUSTER_PAGE
    assert "ray==2.60.0" in no_ui_page("2.60.0") and "<b>" not in no_ui_page("<b>")


async def _client(tmp_path: Path, builds: UiBuilds) -> Client:
    store = await collector_store(tmp_path)
    c: Client = TestClient(TestServer(make_app(store, ui=builds), host="127.0.0.1"))
    await c.start_server()
    return c


@pytest.fixture
async def client(tmp_path: Path, ui_dir: Path) -> AsyncIterator[Client]:
    c = await _client(tmp_path, UiBuilds.discover(str(ui_dir), use_installed_ray=False))
    yield c
    await c.close()


async def enter(c: Client) -> None:
    r = await c.get(f"/enter_cluster/default/raycluster/raycluster-hs/{SESSION}")
    assert r.status == 200


async def test_root_without_session_is_the_picker(client: Client) -> None:
    for path in ("/", "/select_cluster"):
        r = await client.get(path)
        assert r.status == 200 and r.content_type == "text/html"
        assert "Ray history server" in await r.text()
        assert r.headers["Cache-Control"] == "no-cache"


async def test_root_serves_the_sessions_version(client: Client) -> None:
    await enter(client)
    r = await client.get("/")
    assert r.status == 200 and "ui-2.60" in await r.text()
    assert r.headers["Cache-Control"] == "no-cache" and r.content_type == "text/html"
    r = await client.get("/static/js/main.js")
    assert await r.text() == "console.log('ui-2.60')"
    assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    r = await client.get("/static/js/only56.js")  # another build's hashed asset
    assert r.status == 200 and await r.text() == "only56.js"
    r = await client.get("/favicon.ico")
    assert r.headers["Cache-Control"] == "public, max-age=3600"
    r = await client.get("/index.html")
    assert "ui-2.60" in await r.text()
    # Still the API underneath.
    assert (await client.get("/api/jobs/")).status == 200
    assert (await client.get("/api/nothing")).status == 404


async def test_client_routes_and_missing_files(client: Client) -> None:
    await enter(client)
    r = await client.get("/overview/jobs", headers={"Accept": "text/html,*/*"})
    assert r.status == 200 and "ui-2.60" in await r.text()
    assert (
        await client.get("/overview/jobs", headers={"Accept": "application/json"})
    ).status == 404
    assert (await client.get("/static/js/missing.js")).status == 404
    for path in ("/static/../../secret.txt", "/%2e%2e/secret.txt", "/static/%2e%2e/%2e%2e/x"):
        r = await client.get(path)
        assert r.status == 404, path
        assert "TOP-SECRET" not in await r.text()


async def test_ranged_and_conditional_asset_requests(client: Client) -> None:
    r = await client.get("/static/js/main.js", headers={"Range": "bytes=0-6"})
    assert r.status == 206 and await r.text() == "console"
    etag = (await client.get("/static/js/main.js")).headers["ETag"]
    r = await client.get("/static/js/main.js", headers={"If-None-Match": etag})
    assert r.status == 304


async def test_no_build_explains_how_to_add_one(tmp_path: Path) -> None:
    c = await _client(tmp_path, UiBuilds())
    try:
        await enter(c)
        r = await c.get("/")
        text = await r.text()
        assert r.status == 200 and "--dashboard-ui-dir" in text and "ray==2.60.0" in text
        assert (await c.get("/static/js/main.js")).status == 404
    finally:
        await c.close()


async def test_expired_or_bad_cookie_shows_the_picker(client: Client) -> None:
    client.session.cookie_jar.update_cookies(
        {"cluster_name": "x", "cluster_namespace": "default", "session_name": "session_nope"}
    )
    r = await client.get("/")
    assert "Ray history server" in await r.text()


def test_ui_flags() -> None:
    from kuberay.historyserver.server.config import parse_options

    opts = parse_options(["--storage-backend", "local"], {})
    assert opts.dashboard_ui_dir == "" and opts.dashboard_ui_from_ray is True
    opts = parse_options(
        ["--storage-backend", "local", "--dashboard-ui-from-ray=false"], {"DASHBOARD_UI_DIR": "/u"}
    )
    assert opts.dashboard_ui_dir == "/u" and opts.dashboard_ui_from_ray is False
    opts = parse_options(["--storage-backend", "local", "--dashboard-ui-dir", "/x"], {})
    assert opts.dashboard_ui_dir == "/x"
