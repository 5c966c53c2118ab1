"""``kubectl ray history list|open`` against the real history server app (over an in-memory
store holding KubeRay-layout session markers, served on 127.0.0.1), and the in-cluster path:
Service and pod resolution with a fake API client, and the port-forward wiring."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from kuberay.historyserver.layout import ClusterRef, Layout
from kuberay.historyserver.server.app import make_app
from kuberay.kube import NotFound
from kuberay.kubectl_ray import history
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.main import run
from tests.unit.historyserver.memstore import MemoryStore

OLD = "session_2026-01-01_00-00-00_000001_1"
NEW = "session_2026-02-01_00-00-00_000001_2"


@pytest.fixture
async def server() -> AsyncIterator[str]:
    store = MemoryStore()
    markers = [
        (ClusterRef("default", "raycluster-a"), OLD),
        (ClusterRef("default", "raycluster-a"), NEW),
        (ClusterRef("default", "job-1-xyz", "rayjob", "job-1"), OLD),
        (ClusterRef("team", "raycluster-b"), OLD),
    ]
    for ref, session in markers:
        await store.put(Layout(ref).session_marker_key(session), b"")
    test_server = TestServer(make_app(store, cluster_list_ttl=0), host="127.0.0.1")
    await test_server.start_server()
    try:
        yield str(test_server.make_url("")).rstrip("/")
    finally:
        await test_server.close()


async def cli(tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await run(["--kubeconfig", str(tmp_path / "none"), *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


async def test_list_a_namespace_newest_first(server: str, tmp_path: Path) -> None:
    code, out, err = await cli(tmp_path, "history", "list", "--history-server", server)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "NAME",
        "NAMESPACE",
        "SESSION",
        "OWNER",
        "KIND",
        "OWNER",
        "NAME",
        "CREATED",
    ]
    body = [line.split() for line in lines[1:]]
    # newest first; then by session, namespace, owner name, cluster name (the server's order)
    assert body == [
        ["raycluster-a", "default", NEW, "-", "-", "2026-02-01T00:00:00Z"],
        ["raycluster-a", "default", OLD, "-", "-", "2026-01-01T00:00:00Z"],
        ["job-1-xyz", "default", OLD, "rayjob", "job-1", "2026-01-01T00:00:00Z"],
    ]


async def test_list_all_namespaces_and_json(server: str, tmp_path: Path) -> None:
    code, out, _ = await cli(
        tmp_path, "history", "list", "--history-server", server, "-A", "-o", "json"
    )
    assert code == 0
    entries = json.loads(out)
    assert {(e["namespace"], e["name"]) for e in entries} == {
        ("default", "raycluster-a"),
        ("default", "job-1-xyz"),
        ("team", "raycluster-b"),
    }
    assert set(entries[0]) >= {"name", "namespace", "sessionName", "ownerKind", "ownerName"}


async def test_list_namespace_flag_and_empty(server: str, tmp_path: Path) -> None:
    code, out, _ = await cli(tmp_path, "history", "list", "--history-server", server, "-n", "team")
    assert code == 0 and "raycluster-b" in out and "raycluster-a" not in out
    code, out, err = await cli(
        tmp_path, "-n", "empty", "history", "list", "--history-server", server
    )
    assert code == 0 and out == ""
    assert "No stored sessions found in namespace empty." in err


async def test_server_from_the_environment(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(history.SERVER_ENV, server + "/")
    code, out, err = await cli(tmp_path, "history", "list")
    assert code == 0, err
    assert "raycluster-a" in out


async def test_open_prints_the_newest_session_s_url(server: str, tmp_path: Path) -> None:
    code, out, err = await cli(
        tmp_path, "history", "open", "raycluster-a", "--history-server", server
    )
    assert code == 0, err
    url = out.strip()
    assert url == f"{server}/enter_cluster/default/raycluster/raycluster-a/{NEW}"
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        assert body["session"] == NEW
        assert resp.cookies["session_name"].value == NEW


async def test_open_a_session_and_an_owner(server: str, tmp_path: Path) -> None:
    code, out, _ = await cli(
        tmp_path, "history", "open", "raycluster-a", "--session", OLD, "--history-server", server
    )
    assert code == 0 and out.strip().endswith(f"/raycluster/raycluster-a/{OLD}")
    for extra in (["--kind", "rayjob"], []):  # the owner's kind given, or guessed
        code, out, err = await cli(
            tmp_path, "history", "open", "job-1", "--history-server", server, *extra
        )
        assert code == 0, err
        url = out.strip()
        assert url == f"{server}/enter_cluster/default/rayjob/job-1/{OLD}"
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["name"] == "job-1-xyz"
    # the RayJob's cluster by its own name, as the server and KubeRay's picker enter it
    code, out, err = await cli(tmp_path, "history", "open", "job-1-xyz", "--history-server", server)
    assert code == 0, err
    url = out.strip()
    assert url == f"{server}/enter_cluster/default/raycluster/job-1-xyz/{OLD}"
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        assert resp.status == 200, await resp.text()
        assert resp.cookies["owner_name"].value == "job-1"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["nope"], "no stored session of nope in namespace default"),
        (["raycluster-a", "--kind", "rayjob"], "no stored session of rayjob raycluster-a"),
        (["raycluster-a", "--session", "session_x"], "has no stored session session_x"),
        (["raycluster-b"], "in namespace default"),
    ],
)
async def test_open_errors(server: str, tmp_path: Path, argv: list[str], needle: str) -> None:
    code, out, err = await cli(tmp_path, "history", "open", *argv, "--history-server", server)
    assert code == 1 and out == ""
    assert needle in err and "Traceback" not in err


async def test_unreachable_and_invalid_servers(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = await cli(
        tmp_path, "history", "list", "--history-server", f"http://127.0.0.1:{port}"
    )
    assert code == 1 and "cannot reach the history server" in err
    code, _, err = await cli(tmp_path, "history", "list", "--history-server", "ftp://x")
    assert code == 1 and "invalid history server URL" in err


async def test_open_in_cluster_forwards_and_prints_the_local_url(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(history.SERVER_ENV, raising=False)
    seen: list[argparse.Namespace] = []

    @contextlib.asynccontextmanager
    async def fake_forward(env: Env, args: argparse.Namespace) -> AsyncIterator[str]:
        seen.append(args)
        yield server

    monkeypatch.setattr(history, "FORWARD", fake_forward)
    out, err = io.StringIO(), io.StringIO()
    task = asyncio.create_task(
        run(
            ["--kubeconfig", str(tmp_path / "none"), "history", "open", "raycluster-a"],
            stdout=out,
            stderr=err,
        )
    )
    for _ in range(200):
        if "Ctrl-C" in err.getvalue():
            break
        await asyncio.sleep(0.02)
    assert not task.done(), err.getvalue()  # still forwarding
    assert out.getvalue().strip() == f"{server}/enter_cluster/default/raycluster/raycluster-a/{NEW}"
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert seen[0].service == history.DEFAULT_SERVICE and seen[0].local_port == 0
    # list forwards too, and stops when done
    code, out2, _ = await cli(tmp_path, "history", "list", "--service", "ops/hs")
    assert code == 0 and "raycluster-a" in out2
    assert seen[1].service == "ops/hs"


# ----- the in-cluster Service, with a fake API client ---------------------------------------
def _service(ns: str = "ray-system", target: object = "http") -> dict[str, Any]:
    return {
        "metadata": {"name": "kuberay-history-server", "namespace": ns},
        "spec": {
            "selector": {"app.kubernetes.io/name": "kuberay-history-server"},
            "ports": [{"name": "http", "port": 30080, "targetPort": target}],
        },
    }


def _pod(name: str, ready: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ray-system"},
        "spec": {"containers": [{"ports": [{"name": "http", "containerPort": 8080}]}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


class FakeClient:
    def __init__(self, services: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
        self.services = services
        self.pods = pods
        self.calls: list[tuple[str, Any, Any]] = []

    async def get(self, api_version: str, kind: str, name: str, ns: str) -> dict[str, Any]:
        for s in self.services:
            if s["metadata"]["name"] == name and s["metadata"]["namespace"] == ns:
                return s
        raise NotFound(f"{kind} {name}")

    async def list_all(
        self, api_version: str, kind: str, ns: str | None, **kw: Any
    ) -> tuple[list[dict[str, Any]], str]:
        self.calls.append((kind, ns, kw))
        if kind == "Service":
            name = kw["field_selector"].split("=", 1)[1]
            return [s for s in self.services if s["metadata"]["name"] == name], ""
        return self.pods, ""


async def test_find_service_in_any_or_a_given_namespace() -> None:
    client = FakeClient([_service()], [])
    found = await history.find_service(client, "kuberay-history-server", None)  # type: ignore[arg-type]
    assert found["metadata"]["namespace"] == "ray-system"
    assert client.calls[0][1] is None  # looked up cluster-wide
    found = await history.find_service(client, "ray-system/kuberay-history-server", None)  # type: ignore[arg-type]
    assert found["metadata"]["namespace"] == "ray-system"
    with pytest.raises(CLIError, match="no Service kuberay-history-server in namespace ops"):
        await history.find_service(client, "kuberay-history-server", "ops")  # type: ignore[arg-type]
    with pytest.raises(CLIError, match="install manifests/historyserver"):
        await history.find_service(FakeClient([], []), "kuberay-history-server", None)  # type: ignore[arg-type]
    two = FakeClient([_service(), _service("ops")], [])
    with pytest.raises(CLIError, match="--service NS/NAME"):
        await history.find_service(two, "kuberay-history-server", None)  # type: ignore[arg-type]


async def test_ready_pod_and_its_port() -> None:
    client = FakeClient([], [_pod("b"), _pod("a", ready=False), _pod("c")])
    pod = await history.ready_pod(client, _service())  # type: ignore[arg-type]
    assert pod["metadata"]["name"] == "b"
    assert client.calls[-1][2] == {
        "label_selector": "app.kubernetes.io/name=kuberay-history-server"
    }
    assert history.container_port(pod, "http") == 8080
    assert history.container_port(pod, 9000) == 9000
    with pytest.raises(CLIError, match="no container port named metrics"):
        history.container_port(pod, "metrics")
    with pytest.raises(CLIError, match="no ready history server pod"):
        await history.ready_pod(FakeClient([], [_pod("a", ready=False)]), _service())  # type: ignore[arg-type]


async def test_forward_to_service_binds_loopback_and_forwards_to_the_pod_port(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = FakeClient([_service()], [_pod("hs-0")])
    target = server.rsplit(":", 1)[1]
    forwarded: list[tuple[str, str, int]] = []

    async def fake_serve_forward(
        client_: Any, namespace: str, resolve: Any, sock: socket.socket, port: int, on_error: Any
    ) -> asyncio.Server:
        forwarded.append((namespace, await resolve(), port))
        assert sock.getsockname()[0] == "127.0.0.1"

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            r2, w2 = await asyncio.open_connection("127.0.0.1", int(target))

            async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
                dst.close()

            await asyncio.gather(copy(reader, w2), copy(r2, writer), return_exceptions=True)

        return await asyncio.start_server(pipe, sock=sock)

    monkeypatch.setattr(history, "serve_forward", fake_serve_forward)
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    env._client = client  # type: ignore[assignment]
    args = argparse.Namespace(service="kuberay-history-server", local_port=0)
    async with history.forward_to_service(env, args) as base:
        assert base.startswith("http://127.0.0.1:")
        entries = await history.fetch_clusters(base)
    env._client = None
    assert forwarded == [("ray-system", "hs-0", 8080)]
    assert {e["name"] for e in entries} >= {"raycluster-a", "raycluster-b"}
