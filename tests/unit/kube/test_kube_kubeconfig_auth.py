"""The shared kubeconfig loader end to end: what a request built from a kubeconfig carries
(proxy, bearer from a token file or an exec plugin, basic auth, an exec plugin's client
certificate) as a scripted apiserver and proxy on 127.0.0.1 see it, Go's NO_PROXY rules,
and that an inline client key never lands in a lasting file."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import os
import signal
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from kuberay.kube import Client, TransportError, Unauthorized
from kuberay.kube.errors import ConfigError, CredentialError
from kuberay.testing.pki import TinyCA
from tests.unit.kube.kubeconfig_helpers import b64, exec_user, kubeconfig, recording

ROOT = Path(__file__).resolve().parents[3]
PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")


@pytest.fixture(autouse=True)
def _no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROXY_VARS, "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)


async def get_api(path: Path) -> Client:
    client = await Client.from_kubeconfig(path, request_timeout=5.0, max_retries=0)
    try:
        await client.request("GET", "/api", verb="get")
    finally:
        await client.close()
    return client


async def test_a_clusters_proxy_url_carries_the_requests(tmp_path: Path) -> None:
    async with recording() as proxy:
        cluster = {
            "server": "http://apiserver.kuberay.invalid:8080",  # only a proxy reaches it
            "proxy-url": f"http://127.0.0.1:{proxy.port}",
        }
        await get_api(kubeconfig(tmp_path / "kc", cluster, {"token": "t"}))
    assert proxy.heads[0].startswith("GET http://apiserver.kuberay.invalid:8080/api HTTP/1.1")
    assert proxy.header("Authorization") == "Bearer t"


async def test_https_proxy_from_the_environment_unless_no_proxy_exempts_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = {"server": "https://apiserver.kuberay.invalid:6443"}
    path = kubeconfig(tmp_path / "kc", cluster, {})
    async with recording([(407, b"")]) as proxy:  # refuses the tunnel: enough to see it
        monkeypatch.setenv("https_proxy", f"127.0.0.1:{proxy.port}")  # no scheme: http://
        with pytest.raises(TransportError, match="ProxyError"):
            await get_api(path)
        assert proxy.heads[0].startswith("CONNECT apiserver.kuberay.invalid:6443 HTTP/1.1")
        for exempt in ("kuberay.invalid", ".kuberay.invalid", "*.invalid:6443", "*"):
            monkeypatch.setenv("NO_PROXY", f"example.com, {exempt}")
            with pytest.raises(TransportError) as direct:  # dialled directly: no such name
                await get_api(path)
            assert "ProxyError" not in str(direct.value)
        assert len(proxy.heads) == 1


def test_no_proxy_follows_gos_httpproxy() -> None:
    from kuberay.kube.proxy import proxy_for

    def via(server: str, no_proxy: str) -> str | None:
        env = {"HTTPS_PROXY": "http://p:3128", "HTTP_PROXY": "http://q:3128", "NO_PROXY": no_proxy}
        return proxy_for(server, None, env)

    p = "http://p:3128"
    assert via("https://api.example.com", "") == p
    assert via("http://api.example.com", "") == "http://q:3128"  # HTTP_PROXY for http
    assert via("https://api.example.com", "example.com") is None  # the domain and subdomains
    assert via("https://example.com", "example.com") is None
    assert via("https://api.example.com", ".example.com") is None
    assert via("https://example.com", ".example.com") == p  # a leading dot: subdomains only
    assert via("https://notexample.com", "example.com") == p  # not a bare suffix
    assert via("https://10.2.3.4:6443", "10.0.0.0/8") is None  # CIDR
    assert via("https://11.2.3.4:6443", "10.0.0.0/8") == p
    assert via("https://[fd00::5]:6443", "fd00::/64") is None
    assert via("https://10.2.3.4:6443", "10.2.3.4") is None  # an IP, any port
    assert via("https://10.2.3.4:6443", "10.2.3.4:443") == p  # an IP and another port
    assert via("https://api.example.com", "api.example.com:443") is None  # the default port
    assert via("https://api.example.com:6443", "api.example.com:443") == p
    assert via("https://anything", " , *") is None
    # loopback and localhost are never proxied, whatever NO_PROXY says
    assert via("https://127.0.0.1:6443", "") is None
    assert via("https://[::1]:6443", "") is None
    assert via("https://localhost:6443", "") is None
    # an explicit proxy-url wins; only http:// proxies can be used
    assert proxy_for("https://127.0.0.1", "http://r:1", {}) == "http://r:1"
    with pytest.raises(ConfigError, match="only http:// proxies"):
        proxy_for("https://x", "socks5://r:1080", {})
    cgi = {"HTTP_PROXY": "http://evil:1", "REQUEST_METHOD": "GET"}
    assert proxy_for("http://api.example.com", None, cgi) is None  # httpoxy


async def test_a_token_file_wins_over_a_token(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-file\n")
    async with recording() as api:
        cluster = {"server": f"http://127.0.0.1:{api.port}"}
        user = {"token": "static", "tokenFile": "token"}  # relative to the kubeconfig
        await get_api(kubeconfig(tmp_path / "kc", cluster, user))
    assert api.header("Authorization") == "Bearer from-file"


async def test_basic_auth_is_sent_and_never_mixed_with_a_token(tmp_path: Path) -> None:
    async with recording() as api:
        cluster = {"server": f"http://127.0.0.1:{api.port}"}
        await get_api(kubeconfig(tmp_path / "kc", cluster, {"username": "al", "password": "pw"}))
        assert api.header("Authorization") == "Basic " + base64.b64encode(b"al:pw").decode()
        both = kubeconfig(tmp_path / "both", cluster, {"username": "al", "token": "t"})
        with pytest.raises(ConfigError, match='user "u": more than one authentication method'):
            await Client.from_kubeconfig(both)


async def test_auth_providers_are_refused_naming_the_user(tmp_path: Path) -> None:
    user = {"auth-provider": {"name": "oidc", "config": {"id-token": "cached"}}}
    path = kubeconfig(tmp_path / "kc", {"server": "https://127.0.0.1:1"}, user)
    with pytest.raises(ConfigError, match=r'user "u": auth-provider "oidc".*exec credential'):
        await Client.from_kubeconfig(path)


async def test_an_exec_plugin_token_is_cached_until_expiry_and_rerun_after_a_401(
    tmp_path: Path,
) -> None:
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()
    async with recording([(200, b"{}"), (200, b"{}"), (401, b"{}"), (200, b"{}")]) as api:
        cluster = {"server": f"http://127.0.0.1:{api.port}", "tls-server-name": "n"}
        user = exec_user(tmp_path, "token", EXPIRES=later)
        user["exec"]["provideClusterInfo"] = True
        client = await Client.from_kubeconfig(kubeconfig(tmp_path / "kc", cluster, user))
        try:
            for _ in range(2):  # cached: one run
                await client.request("GET", "/api", verb="get")
            assert (tmp_path / "runs").read_text() == "1"
            with pytest.raises(Unauthorized):  # the server no longer takes exec-token-1
                await client.request("GET", "/api", verb="get")
            await client.request("GET", "/api", verb="get")
        finally:
            await client.close()
    tokens = [api.header("Authorization", i) for i in range(4)]
    assert tokens == ["Bearer exec-token-1"] * 3 + ["Bearer exec-token-2"]
    seen = json.loads((tmp_path / "runs.info").read_text())
    assert seen["argv"] == ["--flag"]
    assert seen["info"]["apiVersion"] == "client.authentication.k8s.io/v1"
    assert seen["info"]["spec"]["interactive"] is False
    assert seen["info"]["spec"]["cluster"]["tls-server-name"] == "n"


async def test_an_expired_exec_credential_is_fetched_again(tmp_path: Path) -> None:
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)).isoformat()
    async with recording() as api:
        cluster = {"server": f"http://127.0.0.1:{api.port}"}
        path = kubeconfig(tmp_path / "kc", cluster, exec_user(tmp_path, "token", EXPIRES=past))
        client = await Client.from_kubeconfig(path)
        try:
            await client.request("GET", "/api", verb="get")
        finally:
            await client.close()
    assert api.header("Authorization") == "Bearer exec-token-2"  # from_kubeconfig ran it first


def tls_server(ca: TinyCA, tmp_path: Path) -> ssl.SSLContext:
    """A server context for 127.0.0.1 that requires a client certificate from ``ca``."""
    leaf = ca.issue("apiserver", ips=("127.0.0.1",), server=True)
    (tmp_path / "srv.crt").write_bytes(leaf.cert_pem)
    (tmp_path / "srv.key").write_bytes(leaf.key_pem)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(tmp_path / "srv.crt", tmp_path / "srv.key")
    ctx.load_verify_locations(cadata=ca.pair.cert_pem.decode())
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


async def test_an_exec_plugin_client_certificate_is_presented(tmp_path: Path) -> None:
    ca = TinyCA("kc-test-ca")
    client_pair = ca.issue("exec-user", client=True)
    (tmp_path / "c.crt").write_bytes(client_pair.cert_pem)
    (tmp_path / "c.key").write_bytes(client_pair.key_pem)
    env = {"CERT_FILE": str(tmp_path / "c.crt"), "KEY_FILE": str(tmp_path / "c.key")}
    async with recording(ssl_context=tls_server(ca, tmp_path)) as api:
        cluster = {
            "server": f"https://127.0.0.1:{api.port}",
            "certificate-authority-data": b64(ca.pair.cert_pem),
        }
        await get_api(kubeconfig(tmp_path / "kc", cluster, exec_user(tmp_path, "cert", **env)))
    assert api.peer_cns == ["exec-user"]
    assert api.header("Authorization") is None


async def test_a_failing_exec_plugin_is_a_clear_error(tmp_path: Path) -> None:
    cluster = {"server": "http://127.0.0.1:1"}
    path = kubeconfig(tmp_path / "kc", cluster, exec_user(tmp_path, "fail"))
    with pytest.raises(CredentialError) as failed:
        await Client.from_kubeconfig(path)
    message = str(failed.value)
    assert f'user "u": exec plugin {sys.executable}: exited with code 3' in message
    assert "boom: no credentials for you" in message
    missing = exec_user(tmp_path, "token")
    missing["exec"]["command"] = str(tmp_path / "no-such-plugin")
    path = kubeconfig(tmp_path / "kc2", cluster, missing)
    with pytest.raises(CredentialError, match=r"no-such-plugin: .*\(install the test plugin\)"):
        await Client.from_kubeconfig(path)


def key_files(directory: Path, key: bytes) -> list[Path]:
    """Files under ``directory`` holding ``key``."""
    return [p for p in directory.rglob("*") if p.is_file() and key in p.read_bytes()]


@pytest.mark.parametrize("memfd", [True, False], ids=["memfd", "temp-file"])
async def test_an_inline_client_key_is_never_left_in_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memfd: bool
) -> None:
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    if not memfd:
        monkeypatch.delattr(os, "memfd_create")
    ca = TinyCA("kc-test-ca")
    pair = ca.issue("inline-user", client=True)
    user = {"client-certificate-data": b64(pair.cert_pem), "client-key-data": b64(pair.key_pem)}
    async with recording(ssl_context=tls_server(ca, tmp_path)) as api:
        cluster = {
            "server": f"https://127.0.0.1:{api.port}",
            "certificate-authority-data": b64(ca.pair.cert_pem),
        }
        client = await Client.from_kubeconfig(kubeconfig(tmp_path / "kc", cluster, user))
        try:
            await client.request("GET", "/api", verb="get")
            detached = client.detached()  # makes its own pool (and TLS context) later
            await detached.request("GET", "/api", verb="get")
            await detached.close()
            assert key_files(scratch, pair.key_pem) == []
        finally:
            await client.close()
    assert api.peer_cns == ["inline-user", "inline-user"]
    assert key_files(scratch, pair.key_pem) == []


def test_a_process_killed_after_loading_an_inline_key_leaves_no_file(tmp_path: Path) -> None:
    ca = TinyCA("kc-test-ca")
    pair = ca.issue("inline-user", client=True)
    user = {"client-certificate-data": b64(pair.cert_pem), "client-key-data": b64(pair.key_pem)}
    path = kubeconfig(tmp_path / "kc", {"server": "https://127.0.0.1:1"}, user)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code = (
        "import asyncio, sys, time\n"
        "from kuberay.kube import Client\n"
        f"client = asyncio.run(Client.from_kubeconfig({str(path)!r}))\n"
        "client.pool  # builds the TLS context with the key\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)}
    for name in PROXY_VARS:
        env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, cwd=ROOT, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGTERM
    assert key_files(scratch, pair.key_pem) == []


async def test_a_detached_client_on_another_loop_still_authenticates(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("tf")
    async with recording() as api:
        cluster = {"server": f"http://127.0.0.1:{api.port}"}
        client = await Client.from_kubeconfig(
            kubeconfig(tmp_path / "kc", cluster, {"tokenFile": str(tmp_path / "token")})
        )
        detached = client.detached()

        def other_loop() -> None:
            async def go() -> None:
                await detached.request("GET", "/api", verb="get")
                await detached.close()

            asyncio.run(go())

        await asyncio.to_thread(other_loop)
        await client.close()
    assert api.header("Authorization") == "Bearer tf"


async def test_concurrent_requests_share_one_plugin_run(tmp_path: Path) -> None:
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)).isoformat()  # always due
    async with recording() as api:
        cluster = {"server": f"http://127.0.0.1:{api.port}"}
        path = kubeconfig(tmp_path / "kc", cluster, exec_user(tmp_path, "token", EXPIRES=past))
        client = await Client.from_kubeconfig(path)  # run 1
        try:
            await asyncio.gather(*(client.request("GET", "/api", verb="get") for _ in range(5)))
        finally:
            await client.close()
    assert (tmp_path / "runs").read_text() == "2"
    assert {api.header("Authorization", i) for i in range(5)} == {"Bearer exec-token-2"}


async def test_a_rotated_plugin_certificate_is_presented_on_new_connections(
    tmp_path: Path,
) -> None:
    ca = TinyCA("kc-test-ca")
    for suffix, cn in (("", "user-a"), (".2", "user-b")):
        pair = ca.issue(cn, client=True)
        (tmp_path / f"c.crt{suffix}").write_bytes(pair.cert_pem)
        (tmp_path / f"c.key{suffix}").write_bytes(pair.key_pem)
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)).isoformat()  # always due
    env = {"CERT_FILE": str(tmp_path / "c.crt"), "KEY_FILE": str(tmp_path / "c.key")}
    async with recording(ssl_context=tls_server(ca, tmp_path)) as api:
        cluster = {
            "server": f"https://127.0.0.1:{api.port}",
            "certificate-authority-data": b64(ca.pair.cert_pem),
        }
        user = exec_user(tmp_path, "cert", EXPIRES=past, **env)
        client = await Client.from_kubeconfig(kubeconfig(tmp_path / "kc", cluster, user))
        try:  # run 1 (user-a) at load; run 2 (user-b), run 3 (user-a) before each request
            for _ in range(2):
                await client.request("GET", "/api", verb="get")
        finally:
            await client.close()
    assert api.peer_cns == ["user-b", "user-a"]
