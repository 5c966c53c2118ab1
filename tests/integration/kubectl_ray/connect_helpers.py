"""Helpers of the connection tests: the admin kubeconfig split into files, kubeconfig
writers, ``kubectl ray`` runs with a chosen environment, ``whoami`` through the plugin's
own client, a CONNECT proxy and a silent server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import yaml

from kuberay.kubectl_ray import run
from kuberay.kubectl_ray.context import Env
from kuberay.kubectl_ray.main import build_parser, connection_flags
from tests.integration.kubectl_ray.conftest import Result


@attrs.frozen
class Admin:
    """The test apiserver's admin connection as separate files."""

    server: str
    ca: Path
    cert: Path
    key: Path

    def cluster(self, server: str | None = None, **extra: Any) -> dict[str, Any]:
        """A kubeconfig cluster entry (CA by path)."""
        return {"server": server or self.server, "certificate-authority": str(self.ca), **extra}

    def user(self) -> dict[str, Any]:
        """A kubeconfig user entry with the admin client certificate."""
        return {"client-certificate": str(self.cert), "client-key": str(self.key)}


def split_admin(kubeconfig: Path, into: Path) -> Admin:
    """Write the admin kubeconfig's CA, certificate and key to files under ``into``."""
    doc = yaml.safe_load(kubeconfig.read_text())
    ctx = next(c for c in doc["contexts"] if c["name"] == doc["current-context"])["context"]
    cluster = next(c for c in doc["clusters"] if c["name"] == ctx["cluster"])["cluster"]
    user = next(u for u in doc["users"] if u["name"] == ctx["user"])["user"]
    into.mkdir(parents=True, exist_ok=True)

    def write(name: str, section: dict[str, Any], field: str) -> Path:
        path = into / name
        if section.get(f"{field}-data"):
            path.write_bytes(base64.b64decode(section[f"{field}-data"]))
        else:
            path.write_bytes(Path(section[field]).read_bytes())
        path.chmod(0o600)
        return path

    return Admin(
        server=cluster["server"],
        ca=write("ca.crt", cluster, "certificate-authority"),
        cert=write("admin.crt", user, "client-certificate"),
        key=write("admin.key", user, "client-key"),
    )


def kubeconfig(
    path: Path,
    *,
    clusters: dict[str, dict[str, Any]] | None = None,
    users: dict[str, dict[str, Any]] | None = None,
    contexts: dict[str, dict[str, Any]] | None = None,
    current: str | None = None,
) -> Path:
    """Write a kubeconfig file."""
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    if clusters is not None:
        doc["clusters"] = [{"name": n, "cluster": c} for n, c in clusters.items()]
    if users is not None:
        doc["users"] = [{"name": n, "user": u} for n, u in users.items()]
    if contexts is not None:
        doc["contexts"] = [{"name": n, "context": c} for n, c in contexts.items()]
    if current is not None:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


@contextlib.contextmanager
def environ(**values: str | None) -> Iterator[None]:
    """Set (or, with None, unset) environment variables for the block."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


async def ray(*argv: str) -> Result:
    """``kubectl ray ARGV`` in-process with the current environment."""
    out, err = io.StringIO(), io.StringIO()
    code = await run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(""))
    return Result(code, out.getvalue(), err.getvalue())


async def whoami(*argv: str) -> dict[str, Any]:
    """The user the apiserver sees for a plugin run with these connection flags (a
    SelfSubjectReview sent by the plugin's own client)."""
    args = build_parser().parse_args([*argv, "version"])
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), flags=connection_flags(args))
    try:
        client = await env.client()
        review = await client.request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            verb="create",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        )
    finally:
        await env.close()
    return dict(review["status"]["userInfo"])


@attrs.define
class ConnectProxy:
    """An HTTP CONNECT proxy on 127.0.0.1 that sends every tunnel to 127.0.0.1 (so
    a made-up host name reaches the local apiserver); ``targets`` lists what was asked."""

    port: int = 0
    targets: list[str] = attrs.field(factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
            if method != "CONNECT":
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                return
            self.targets.append(target)
            port = int(target.rsplit(":", 1)[1])
            up_r, up_w = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()

            async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
                with contextlib.suppress(OSError):
                    while data := await r.read(65536):
                        w.write(data)
                        await w.drain()
                with contextlib.suppress(OSError):
                    w.close()

            await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                writer.close()


@contextlib.asynccontextmanager
async def connect_proxy() -> AsyncIterator[ConnectProxy]:
    """A running :class:`ConnectProxy`."""
    proxy = ConnectProxy()
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    proxy.port = server.sockets[0].getsockname()[1]
    try:
        yield proxy
    finally:
        server.close()


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[int]:
    """A TCP server on 127.0.0.1 that accepts and never answers; its port."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        for w in held:
            w.close()
        server.close()
