"""The command line of the history server ``make run HISTORY_SERVER=1`` and ``controlplane.py up
--history-server`` start on the host (``hack/cluster/history_server.py``): it is given the
dashboard UI builds of the Ray images built here, as the in-cluster image has them, so an
entered session shows Ray's dashboard rather than the "no UI build" page."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from hack.cluster import history_server
from hack.release import images, ray_ui
from kuberay.testing.envtest import ControlPlane

SITE = "./home/ray/anaconda3/lib/python3.11/site-packages/ray/dashboard/client/build/"
STORE_ENV = {"STORAGE_BACKEND": "s3", "S3_BUCKET": "ray-historyserver"}


def _ray_image(path: Path, version: str) -> None:
    """A ``docker save`` archive whose one layer holds a dashboard build."""
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as tar:
        body = f"<html>ray {version}".encode()
        info = tarfile.TarInfo(SITE + "index.html")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    outer = {
        "manifest.json": json.dumps([{"Layers": ["l0/layer.tar"]}]).encode(),
        "l0/layer.tar": layer.getvalue(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, mode="w") as tar:
        for name, data in outer.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _flag(command: list[str]) -> str | None:
    if "--dashboard-ui-dir" not in command:
        return None
    return command[command.index("--dashboard-ui-dir") + 1]


def test_the_command_names_the_ui_builds(tmp_path: Path) -> None:
    ui = tmp_path / "dashboard"
    server = history_server.HistoryServer(tmp_path, STORE_ENV, dashboard_ui_dir=ui)
    assert _flag(server.command()) == str(ui)
    assert _flag(history_server.HistoryServer(tmp_path, STORE_ENV).command()) is None


def test_the_builds_come_from_the_ray_images_built_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERAY_IMAGE_CACHE", str(tmp_path / "images"))
    assert history_server.local_dashboard_ui_dir() is None  # no Ray image built yet
    for version in images.SERVER_UI_VERSIONS:
        _ray_image(images.ray_archive_path(version), version)
    ui = history_server.local_dashboard_ui_dir()
    assert ui is not None and ui.is_relative_to(tmp_path / "images")
    for version in images.SERVER_UI_VERSIONS:  # laid out as the server image's /dashboard
        index = ui / ray_ui.major_minor(version) / "index.html"
        assert index.read_text() == f"<html>ray {version}"


def test_the_control_plane_starts_it_with_the_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ControlPlane(history_server=True)``, which ``make run HISTORY_SERVER=1`` and
    ``controlplane.py up --history-server`` use, hands the builds to the server."""
    ui = tmp_path / "dashboard"
    started: list[list[str]] = []

    def start(self: history_server.HistoryServer) -> str:
        started.append(self.command())
        return "http://127.0.0.1:1"

    monkeypatch.setattr(history_server, "local_dashboard_ui_dir", lambda: ui)
    monkeypatch.setattr(history_server.HistoryServer, "start", start)
    cp = ControlPlane(tmp_path / "cp", history_server=True)
    cp.object_store = SimpleNamespace(info=SimpleNamespace(env=lambda: STORE_ENV))
    (tmp_path / "cp").mkdir()
    cp._start_history_server()
    assert [_flag(c) for c in started] == [str(ui)]
