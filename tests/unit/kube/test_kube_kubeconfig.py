"""kuberay.kube.kubeconfig: the settings a kubeconfig or service account gives the client,
read without importing kubernetes-asyncio's generated client."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.kube.kubeconfig import (
    ConfigError,
    FileToken,
    in_cluster,
    kubeconfig_files,
    load_kubeconfig,
)

ROOT = Path(__file__).resolve().parents[3]


def write(path: Path, clusters: list[Any], users: list[Any], current: str = "c") -> Path:
    """A kubeconfig with one context per user, named (and pointing at) as the user."""
    contexts = [
        {"name": u["name"], "context": {"cluster": u["name"], "user": u["name"]}} for u in users
    ]
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": c["name"], "cluster": c["cluster"]} for c in clusters],
        "users": [{"name": u["name"], "user": u["user"]} for u in users],
        "contexts": contexts,
        "current-context": current,
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_inline_certificates_stay_in_memory(tmp_path: Path) -> None:
    cluster = {"server": "https://127.0.0.1:6443", "certificate-authority-data": b64(b"CA")}
    user = {"client-certificate-data": b64(b"CERT"), "client-key-data": b64(b"KEY")}
    path = write(
        tmp_path / "kc", [{"name": "c", "cluster": cluster}], [{"name": "c", "user": user}]
    )
    cfg = load_kubeconfig([path])
    assert cfg.host == "https://127.0.0.1:6443"
    assert cfg.verify_ssl
    assert (cfg.ca_data, cfg.cert_data, cfg.key_data) == (b"CA", b"CERT", b"KEY")
    assert (cfg.ssl_ca_cert, cfg.cert_file, cfg.key_file) == (None, None, None)
    assert await cfg.auth_settings() == {}


async def test_relative_paths_token_file_and_context_choice(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("CA")
    (tmp_path / "tok").write_text("secret-1\n")
    clusters = [
        {"name": "a", "cluster": {"server": "https://a", "certificate-authority": "ca.crt"}},
        {"name": "b", "cluster": {"server": "https://b", "insecure-skip-tls-verify": True}},
    ]
    users = [
        {"name": "a", "user": {"tokenFile": "tok"}},
        {"name": "b", "user": {"token": "static"}},
    ]
    path = write(tmp_path / "kc", clusters, users, current="a")
    a = load_kubeconfig([path])
    assert a.ssl_ca_cert == str(tmp_path / "ca.crt")
    assert (await a.auth_settings())["BearerToken"]["value"] == "Bearer secret-1"
    b = load_kubeconfig([path], context="b")
    assert (b.host, b.verify_ssl, b.ssl_ca_cert) == ("https://b", False, None)
    assert b.bearer_token() == "static"
    with pytest.raises(ConfigError, match="nope"):
        load_kubeconfig([path], context="nope")


def test_a_token_file_is_read_again_after_a_minute(tmp_path: Path) -> None:
    token_path = tmp_path / "token"
    token_path.write_text("one")
    now = [0.0]
    token = FileToken(str(token_path), now=lambda: now[0])
    assert token() == "one"
    token_path.write_text("two")
    now[0] = 30.0
    assert token() == "one"
    now[0] = 61.0
    assert token() == "two"
    token_path.unlink()  # mid-rotation: the last token is kept
    now[0] = 130.0
    assert token() == "two"


def test_kubeconfig_env_lists_files_merged_first_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write(
        tmp_path / "one",
        [{"name": "c", "cluster": {"server": "https://first"}}],
        [{"name": "c", "user": {"token": "t1"}}],
    )
    second = write(
        tmp_path / "two",
        [
            {"name": "c", "cluster": {"server": "https://second"}},
            {"name": "d", "cluster": {"server": "https://d"}},
        ],
        [{"name": "c", "user": {"token": "t2"}}, {"name": "d", "user": {"token": "td"}}],
        current="d",
    )
    monkeypatch.setenv(
        "KUBECONFIG", f"{first}{os.pathsep}{tmp_path / 'missing'}{os.pathsep}{second}"
    )
    paths = kubeconfig_files(None)
    assert paths == [first, second]
    cfg = load_kubeconfig(paths)  # current-context from the first file that sets one
    assert (cfg.host, cfg.bearer_token()) == ("https://first", "t1")
    assert load_kubeconfig(paths, context="d").host == "https://d"


def test_in_cluster_reads_the_service_account(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("CA")
    (tmp_path / "token").write_text("sa-token")
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    cfg = in_cluster(env, sa_dir=tmp_path)
    assert cfg.host == "https://[fd00::1]:443"
    assert cfg.ssl_ca_cert == str(tmp_path / "ca.crt")
    assert cfg.bearer_token() == "sa-token"
    with pytest.raises(ConfigError):
        in_cluster({}, sa_dir=tmp_path)


def test_the_operator_does_not_import_kubernetes_asyncio(tmp_path: Path) -> None:
    """The generated client is tens of MiB: importing the operator, its controllers and
    connecting with an ordinary kubeconfig must not load it."""
    path = write(
        tmp_path / "kc",
        [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        [{"name": "c", "user": {"token": "t"}}],
    )
    code = (
        "import asyncio, sys\n"
        "import kuberay.cmd.operator_run, kuberay.controllers.setup\n"
        "from kuberay.kube import Client\n"
        f"asyncio.run(Client.from_kubeconfig({str(path)!r}))\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubernetes_asyncio')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.stdout.strip() == "[]"
