"""Log lines as a log pipeline written for KubeRay reads them: controller-runtime/zap's keys
(``level``, ``ts``, ``logger``, ``msg``; a reconcile's ``"RayCluster": {"name", "namespace"}``
and ``reconcileID``), the standard library's records (aiohttp, asyncio, kubernetes-asyncio)
in the same JSON, ``--log-keys=structlog`` keeping the earlier keys, and the log file rotated
by size with a kept count (lumberjack's backup names)."""

from __future__ import annotations

import io
import json
import logging
import re
import uuid
from pathlib import Path
from typing import Any

import structlog

from kuberay.logging import configure_logging
from kuberay.logrotate import RotatingFile
from kuberay.reconcile import Controller, Request, Result
from kuberay.workqueue import ItemExponentialFailureRateLimiter

ZAP_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class Failing:
    """A reconciler that logs twice (once about another object), then fails."""

    async def reconcile(self, request: Request) -> Result:
        log = structlog.get_logger("kuberay.raycluster")
        log.info("Reconciling Ingress")
        log.info("dialling the dashboard", name="other-head-svc", namespace=request.namespace)
        raise RuntimeError("boom")


def _lines(buf: io.StringIO) -> list[dict[str, Any]]:
    """Every line parsed as JSON (a line that is not JSON fails the test)."""
    return [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]


async def _reconcile_once(name: str = "raycluster-kuberay") -> None:
    ctrl = Controller(
        "raycluster", Failing(), rate_limiter=ItemExponentialFailureRateLimiter(1, 100)
    )
    ctrl.queue = ctrl._make_queue()
    await ctrl.process(Request("team-a", name))
    ctrl.queue.shutdown()


async def test_reconcile_lines_have_controller_runtimes_keys() -> None:
    buf = io.StringIO()
    configure_logging("json", stream=buf)
    try:
        await _reconcile_once()
        await _reconcile_once("other")
    finally:
        configure_logging("console")
    lines = _lines(buf)
    # a pipeline's query: this object's reconcile lines, by its keys
    mine = [
        line
        for line in lines
        if line.get("RayCluster") == {"name": "raycluster-kuberay", "namespace": "team-a"}
    ]
    assert mine[0]["msg"] == "Reconciling Ingress"
    assert any(line["level"] == "error" and "boom" in line["error"] for line in mine)
    assert len({line["reconcileID"] for line in mine}) == 1
    for line in mine:
        assert list(line)[:4] == ["level", "ts", "logger", "msg"]  # zap's order
        assert ZAP_TS.match(line["ts"]), line["ts"]
        assert line["logger"] == "controllers.RayCluster"
        assert line["controller"] == "raycluster"
        assert uuid.UUID(line["reconcileID"])
        assert not {"event", "timestamp", "reconcile_id", "_request"} & set(line)
    # a line naming another object keeps that name as a field, beside the reconciled object
    dialling = next(line for line in mine if line["msg"] == "dialling the dashboard")
    assert dialling["name"] == "other-head-svc" and "namespace" not in dialling
    others = [line for line in lines if line.get("RayCluster", {}).get("name") == "other"]
    assert others and others[0]["reconcileID"] != mine[0]["reconcileID"]


async def test_structlog_keys_are_kept_on_request() -> None:
    buf = io.StringIO()
    configure_logging("json", stream=buf, keys="structlog")
    try:
        await _reconcile_once()
    finally:
        configure_logging("console")
    line = _lines(buf)[0]
    assert line["event"] == "Reconciling Ingress"
    assert (line["namespace"], line["name"]) == ("team-a", "raycluster-kuberay")
    assert "reconcile_id" in line and "timestamp" in line and "RayCluster" not in line
    assert "_request" not in line


def test_library_records_go_through_the_same_formatter() -> None:
    buf = io.StringIO()
    configure_logging("json", stream=buf)
    try:
        logging.getLogger("aiohttp.access").info("GET /metrics 200")
        logging.getLogger("asyncio").error("Task exception was never retrieved")
        logging.getLogger("kubernetes_asyncio.client.rest").warning("retrying %s", "GET")
        logging.getLogger("aiohttp.access").debug("below the level: dropped")
    finally:
        configure_logging("console")
    lines = _lines(buf)
    by_logger = {line["logger"]: line for line in lines}
    assert by_logger["aiohttp.access"]["msg"] == "GET /metrics 200"
    assert by_logger["asyncio"]["level"] == "error"
    assert by_logger["kubernetes_asyncio.client.rest"] == {
        "level": "warn",
        "ts": by_logger["kubernetes_asyncio.client.rest"]["ts"],
        "logger": "kubernetes_asyncio.client.rest",
        "msg": "retrying GET",
    }
    assert not any("below the level" in line["msg"] for line in lines)


def test_console_encoder_is_zaps() -> None:
    buf = io.StringIO()
    configure_logging("console", stream=buf)
    try:
        structlog.get_logger("setup").info("starting manager", namespaces=["a"])
    finally:
        configure_logging("console")
    ts, level, logger, msg, fields = buf.getvalue().rstrip("\n").split("\t")
    assert ZAP_TS.match(ts)
    assert (level, logger, msg) == ("info", "setup", "starting manager")
    assert json.loads(fields) == {"namespaces": ["a"]}


def test_log_file_rotates_by_size_keeping_a_count(tmp_path: Path) -> None:
    path = tmp_path / "operator.log"
    configure_logging(
        "json",
        stream=io.StringIO(),
        file_path=str(path),
        file_max_size_mb=2000 / (1024 * 1024),  # ~2000 bytes
        file_max_backups=3,
    )
    try:
        log = structlog.get_logger("kuberay.test")
        for i in range(200):
            log.info("line", i=i, pad="x" * 40)
    finally:
        configure_logging("console")
    backups = sorted(tmp_path.glob("operator-*.log"))
    assert len(backups) == 3  # older ones deleted
    for backup in backups:
        assert re.fullmatch(r"operator-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log", backup.name)
    files = [*backups, path]
    assert all(f.stat().st_size <= 2000 for f in files)
    kept = [json.loads(x)["i"] for f in files for x in f.read_text().splitlines()]
    assert kept == sorted(kept) and kept[-1] == 199  # newest lines kept, in order


def test_rotating_file_appends_to_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "op.log"
    path.write_text("x" * 90)
    file = RotatingFile(path, max_bytes=100, max_backups=0)
    file.write("y" * 20)  # would pass 100 bytes: the old content becomes a backup
    file.close()
    assert path.read_text() == "y" * 20
    [backup] = file.backups()
    assert backup.read_text() == "x" * 90
