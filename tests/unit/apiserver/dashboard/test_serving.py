"""The dashboard's files as the API server serves them: ``/dashboard/`` without a token
(even in caller mode), its Content Security Policy, ``config.json`` per auth mode, and
hostile paths (``..``, ``%2e%2e``, encoded slashes, symlinks) that reach no file."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web

from kuberay.apiserver.app import make_app
from kuberay.apiserver.dashboard.assets import STATIC_DIR, load_assets
from kuberay.apiserver.dashboard.routes import add_dashboard_routes
from kuberay.apiserver.options import CALLER, SERVICE_ACCOUNT, ApiServerOptions
from kuberay.apiserver.upstream import Upstream
from kuberay.kube.restconfig import RestConfig

ROOT = Path(__file__).resolve().parents[4]


async def _serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


@pytest.fixture
async def server(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    fields: dict[str, Any] = {"auth_mode": CALLER, **getattr(request, "param", {})}
    upstream = Upstream(RestConfig("http://127.0.0.1:9"))  # nothing behind it
    runner, url = await _serve(make_app(ApiServerOptions(**fields), upstream))
    try:
        yield url
    finally:
        await runner.cleanup()
        await upstream.close()


def _installed_columns(plural: str) -> list[dict[str, Any]]:
    """The v1 printer columns of the CRD as installed (manifests/crds/): its head only, up to
    the first schema (the file is 9,000 lines; v1 is the first version)."""
    text = (ROOT / f"manifests/crds/ray.io_{plural}.yaml").read_text()
    crd = yaml.safe_load(text.split("\n    schema:\n", 1)[0])
    v1 = crd["spec"]["versions"][0]
    assert v1["name"] == "v1"
    return list(v1["additionalPrinterColumns"])


async def _raw_get(url: str, target: str) -> tuple[int, bytes]:
    """GET ``target`` byte for byte as written (no client normalises it); status and body."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


async def test_the_page_opens_without_a_token_in_caller_mode_with_a_strict_policy(
    server: str,
) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{server}/dashboard/") as resp:
            assert resp.status == 200
            assert resp.content_type == "text/html"
            page = await resp.text()
            csp = resp.headers["Content-Security-Policy"]
            assert resp.headers["X-Content-Type-Options"] == "nosniff"
            assert resp.headers["X-Frame-Options"] == "DENY"
        directives = dict(d.strip().partition(" ")[::2] for d in csp.split(";"))
        assert directives["default-src"] == "'self'"
        assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
        assert "script-src" not in directives  # scripts: this origin only (default-src)
        assert directives["frame-ancestors"] == "'none'"
        assert directives["object-src"] == "'none'"
        assert directives["require-trusted-types-for"] == "'script'"
        # the page holds no inline script or style the policy would block
        assert '<script type="module" src="main.js"></script>' in page
        assert page.count("<script") == 1 and "<style" not in page and " style=" not in page
        assert not re.search(r"\son[a-z]+\s*=", page)  # no inline event handler
        async with http.get(f"{server}/dashboard/main.js") as resp:
            assert resp.status == 200
            assert resp.content_type == "text/javascript"  # what a module script needs
            assert resp.headers["Content-Security-Policy"] == csp
        # the API itself still wants a token
        async with http.get(f"{server}/apis/ray.io/v1/rayclusters") as resp:
            assert resp.status == 401


async def test_dashboard_redirects_keeping_the_query_and_files_revalidate(server: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(
            f"{server}/dashboard?namespace=team-a&kind=rayjobs", allow_redirects=False
        ) as resp:
            assert resp.status == 301
            # relative: a path prefix in front of the server (kubectl proxy) is kept
            assert resp.headers["Location"] == "dashboard/?namespace=team-a&kind=rayjobs"
        async with http.get(f"{server}/dashboard/style.css") as resp:
            assert resp.status == 200 and resp.content_type == "text/css"
            etag = resp.headers["ETag"]
            assert resp.headers["Cache-Control"] == "no-cache"
        async with http.get(f"{server}/dashboard/style.css", headers={"If-None-Match": etag}) as r:
            assert r.status == 304
        async with http.head(f"{server}/dashboard/") as resp:
            assert resp.status == 200
        async with http.post(f"{server}/dashboard/", data=b"token=secret") as resp:
            assert resp.status == 405
        async with http.get(f"{server}/dashboard/no-such.js") as resp:
            assert resp.status == 404


@pytest.mark.parametrize(
    ("server", "mode"),
    [({"auth_mode": CALLER}, CALLER), ({"auth_mode": SERVICE_ACCOUNT}, SERVICE_ACCOUNT)],
    indirect=["server"],
)
async def test_config_tells_the_page_its_mode_and_the_crds_columns(server: str, mode: str) -> None:
    async with aiohttp.ClientSession() as http, http.get(f"{server}/dashboard/config.json") as r:
        assert r.status == 200
        assert r.headers["Cache-Control"] == "no-store"
        config = await r.json()
    assert config["authMode"] == mode
    assert config["apiVersion"] == "ray.io/v1"
    kinds = {k["plural"]: k for k in config["kinds"]}
    assert list(kinds) == ["rayclusters", "rayjobs", "rayservices", "raycronjobs"]
    for plural, kind in kinds.items():
        printed = _installed_columns(plural)
        # kubectl get's columns, in its order; age added where the CRD has none
        assert kind["columns"][: len(printed)] == printed, plural
        extra = kind["columns"][len(printed) :]
        has_age = any(c["name"] == "age" for c in printed)
        assert extra == (
            []
            if has_age
            else [{"name": "age", "jsonPath": ".metadata.creationTimestamp", "type": "date"}]
        )
    assert not any(c["name"] == "age" for c in kinds["rayservices"]["columns"][:-1])


@pytest.mark.parametrize("server", [{"enable_dashboard": False}], indirect=True)
async def test_without_the_dashboard_its_paths_are_api_paths(server: str) -> None:
    async with aiohttp.ClientSession() as http, http.get(f"{server}/dashboard/") as resp:
        assert resp.status == 401  # caller mode: no token, no answer


@pytest.mark.parametrize(
    "target",
    [
        "/dashboard/../apis/ray.io/v1/rayclusters",
        "/dashboard/%2e%2e/apis/ray.io/v1/rayclusters",
        "/dashboard/%2E%2E/%2E%2E/pyproject.toml",
        "/dashboard/..%2f..%2fassets.py",
        "/dashboard/%2e%2e%2froutes.py",
        "/dashboard/./index.html",
        "/dashboard/static/../routes.py",
        "/dashboard//etc/passwd",
        "/dashboard/%2fetc%2fpasswd",
        "/dashboard/routes.py",
        "/dashboard/__init__.py",
        "/dashboard/static/index.html",
        "/dashboard/index.html%00.js",
        "/dashboard/index.html/",
        "/dashboard/..",
        "/dashboard/.%2e",
    ],
)
async def test_hostile_paths_reach_no_file(server: str, target: str) -> None:
    status, body = await _raw_get(server, target)
    assert status in (400, 404), (target, status)
    assert b"import" not in body and b"root:" not in body and b"[project]" not in body


async def test_symlinks_and_other_entries_in_the_static_directory_are_not_served(
    tmp_path: Path,
) -> None:
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<!doctype html><title>ok</title>")
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's secret")
    (static / "leak.js").symlink_to(secret)  # outside the directory
    (static / "alias.html").symlink_to(static / "index.html")  # inside, still a symlink
    (static / "sub.js").mkdir()
    (static / ".hidden.js").write_text("x")
    (static / "notes.txt").write_text("no content type for this")
    assets = load_assets(static)
    assert sorted(assets) == ["index.html"]

    app = web.Application()
    add_dashboard_routes(app.router, CALLER, assets)
    runner, url = await _serve(app)
    try:
        for target in ("/dashboard/leak.js", "/dashboard/alias.html", "/dashboard/sub.js"):
            status, body = await _raw_get(url, target)
            assert status == 404 and b"secret" not in body, target
        status, body = await _raw_get(url, "/dashboard/")
        assert status == 200 and b"<title>ok</title>" in body
    finally:
        await runner.cleanup()


def test_the_files_are_package_data_of_the_wheel_and_the_image() -> None:
    import fnmatch
    import tomllib

    from hack.release.image_context import context_files

    served = load_assets()
    on_disk = sorted(p.name for p in STATIC_DIR.iterdir())
    assert sorted(served) == on_disk  # every file there is one the server serves
    assert {"index.html", "main.js", "style.css"} <= set(served)
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["kuberay"]
    image = {p.relative_to(ROOT) for p in context_files(ROOT)}
    for name in on_disk:
        relative = f"apiserver/dashboard/static/{name}"
        assert any(fnmatch.fnmatch(relative, g) for g in globs), relative
        assert Path("kuberay") / relative in image, relative
