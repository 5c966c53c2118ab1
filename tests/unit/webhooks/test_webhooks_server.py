"""The webhook HTTPS server: TLS, routing, HTTP status codes, certificate reload, env switch."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from cryptography import x509

from kuberay.testing.pki import TinyCA
from kuberay.webhooks import (
    RAYCLUSTER_WEBHOOK,
    RAYJOB_WEBHOOK,
    WEBHOOKS,
    WebhookServer,
    maybe_start_webhook_server,
    start_webhook_server,
    webhooks_enabled,
)


def _write_pair(ca: TinyCA, directory: Path, cn: str = "webhook") -> tuple[Path, Path]:
    pair = ca.issue(cn, dns=["localhost"], ips=["127.0.0.1"], server=True)
    cert, key = directory / "tls.crt", directory / "tls.key"
    cert.write_bytes(pair.cert_pem)
    key.write_bytes(pair.key_pem)
    return cert, key


@pytest.fixture(scope="module")
def ca() -> TinyCA:
    return TinyCA("webhook-test-ca")


@pytest.fixture
async def server(ca: TinyCA, tmp_path: Path) -> AsyncIterator[WebhookServer]:
    cert, key = _write_pair(ca, tmp_path)
    srv = await start_webhook_server("127.0.0.1", 0, cert, key, None, reload_interval=None)
    try:
        yield srv
    finally:
        await srv.stop()


def _client_ssl(ca: TinyCA) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=ca.pair.cert_pem.decode())
    return ctx


async def _post(
    srv: WebhookServer, ca: TinyCA, path: str, data: bytes, content_type: str = "application/json"
) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            srv.url + path,
            data=data,
            headers={"Content-Type": content_type},
            ssl=_client_ssl(ca),
        ) as resp,
    ):
        text = await resp.text()
        return resp.status, (
            orjson.loads(text) if resp.content_type == "application/json" else text
        )


def _review(kind: str, name: str) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.52.0"}
    obj: dict[str, Any] = {
        "apiVersion": "ray.io/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "rayVersion": "2.52.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            },
        },
    }
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "uid-1",
            "kind": {"group": "ray.io", "version": "v1", "kind": kind},
            "operation": "CREATE",
            "name": name,
            "namespace": "ns",
            "object": obj,
        },
    }


async def test_serves_every_path_over_tls(server: WebhookServer, ca: TinyCA) -> None:
    assert server.port > 0
    assert server.url == f"https://127.0.0.1:{server.port}"
    status, body = await _post(
        server, ca, RAYCLUSTER_WEBHOOK.path, orjson.dumps(_review("RayCluster", "ok"))
    )
    assert status == 200
    assert body["response"] == {
        "uid": "uid-1",
        "allowed": True,
        "status": {"metadata": {}, "code": 200},
    }
    status, body = await _post(
        server, ca, RAYCLUSTER_WEBHOOK.path, orjson.dumps(_review("RayCluster", "Not_OK"))
    )
    assert status == 200
    assert body["response"]["allowed"] is False
    assert body["response"]["status"]["code"] == 422
    assert body["response"]["status"]["details"]["causes"][0]["field"] == "metadata.name"
    for webhook in WEBHOOKS:
        async with (
            aiohttp.ClientSession() as session,
            session.get(server.url + webhook.path, ssl=_client_ssl(ca)) as resp,
        ):
            assert resp.status == 405


@pytest.mark.parametrize(
    ("data", "content_type", "needle"),
    [
        (b"{not json", "application/json", "not valid JSON"),
        (b"", "application/json", "empty"),
        (b"{}", "text/plain", "contentType=text/plain"),
        (b'{"apiVersion": "v1", "kind": "Pod"}', "application/json", "expected an AdmissionReview"),
        (b"[1, 2]", "application/json", "not a JSON object"),
    ],
    ids=["bad-json", "empty", "content-type", "not-a-review", "not-an-object"],
)
async def test_malformed_requests_get_400(
    server: WebhookServer, ca: TinyCA, data: bytes, content_type: str, needle: str
) -> None:
    status, body = await _post(server, ca, RAYJOB_WEBHOOK.path, data, content_type)
    assert status == 400
    assert body["kind"] == "AdmissionReview"
    assert body["response"]["allowed"] is False
    assert body["response"]["status"]["code"] == 400
    assert needle in body["response"]["status"]["message"]


async def test_wrong_kind_at_path_gets_400_with_uid(server: WebhookServer, ca: TinyCA) -> None:
    status, body = await _post(
        server, ca, RAYJOB_WEBHOOK.path, orjson.dumps(_review("RayCluster", "ok"))
    )
    assert status == 400
    assert body["response"]["uid"] == "uid-1"


async def test_unknown_path_is_404(server: WebhookServer, ca: TinyCA) -> None:
    status, _ = await _post(server, ca, "/validate-ray-io-v1-raycronjob", b"{}")
    assert status == 404


def _peer_serial(srv: WebhookServer, ca: TinyCA) -> int:
    ctx = _client_ssl(ca)
    with (
        socket.create_connection(("127.0.0.1", srv.port)) as sock,
        ctx.wrap_socket(sock, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


async def test_certificate_is_reloaded_when_files_change(ca: TinyCA, tmp_path: Path) -> None:
    cert, key = _write_pair(ca, tmp_path)
    srv = await start_webhook_server("127.0.0.1", 0, cert, key, reload_interval=0.05)
    try:
        first = await asyncio.to_thread(_peer_serial, srv, ca)
        assert first == x509.load_pem_x509_certificate(cert.read_bytes()).serial_number
        # rotate like a Secret volume does: new files, then swap
        staging = tmp_path / "next"
        staging.mkdir()
        new_cert, new_key = _write_pair(ca, staging, "webhook-renewed")
        os.replace(new_key, key)
        os.replace(new_cert, cert)
        expected = x509.load_pem_x509_certificate(cert.read_bytes()).serial_number
        assert expected != first
        for _ in range(600):  # up to 30 s: generous on a busy machine
            if srv.reloads:
                break
            await asyncio.sleep(0.05)
        assert srv.reloads >= 1
        assert await asyncio.to_thread(_peer_serial, srv, ca) == expected
        # a broken pair is not taken; the last good one keeps serving
        key.write_text("garbage")
        assert srv.reload_certificate() is False
        assert await asyncio.to_thread(_peer_serial, srv, ca) == expected
    finally:
        await srv.stop()


def test_enabled_only_by_exact_true() -> None:
    assert webhooks_enabled({"ENABLE_WEBHOOKS": "true"}) is True
    for value in ("True", "TRUE", "1", "yes", ""):
        assert webhooks_enabled({"ENABLE_WEBHOOKS": value}) is False
    assert webhooks_enabled({}) is False


async def test_maybe_start_follows_env(ca: TinyCA, tmp_path: Path) -> None:
    _write_pair(ca, tmp_path)
    assert await maybe_start_webhook_server(environ={}, cert_dir=tmp_path, port=0) is None
    srv = await maybe_start_webhook_server(
        environ={"ENABLE_WEBHOOKS": "true"}, host="127.0.0.1", port=0, cert_dir=tmp_path
    )
    assert srv is not None
    try:
        assert srv.cert_file == tmp_path / "tls.crt"
        assert srv.port > 0
    finally:
        await srv.stop()


async def test_missing_certificate_fails_to_start(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await start_webhook_server("127.0.0.1", 0, tmp_path / "none.crt", tmp_path / "none.key")
