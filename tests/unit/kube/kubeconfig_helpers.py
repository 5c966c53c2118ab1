"""Helpers of the kubeconfig tests: a scripted apiserver (and proxy) on 127.0.0.1 that
records what arrives, kubeconfig documents, and a scripted exec credential plugin."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import yaml

#: An exec credential plugin: counts its runs in $STATE, records its request and argv in
#: $STATE.info, then acts as $MODE says (token: exec-token-<run>; cert: $CERT_FILE and
#: $KEY_FILE, or their ``.<run>`` variants when present; fail).
PLUGIN = """\
import json, os, pathlib, sys
state = pathlib.Path(os.environ["STATE"])
n = int(state.read_text()) + 1 if state.exists() else 1
state.write_text(str(n))
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
pathlib.Path(str(state) + ".info").write_text(json.dumps({"info": info, "argv": sys.argv[1:]}))
mode = os.environ.get("MODE", "token")
if mode == "fail":
    print("boom: no credentials for you", file=sys.stderr)
    sys.exit(3)
def pem(var):  # $VAR.<run> if it exists, else $VAR
    run = pathlib.Path(f"{os.environ[var]}.{n}")
    return (run if run.exists() else pathlib.Path(os.environ[var])).read_text()
status = {"token": f"exec-token-{n}"} if mode == "token" else {
    "clientCertificateData": pem("CERT_FILE"),
    "clientKeyData": pem("KEY_FILE"),
}
if os.environ.get("EXPIRES"):
    status["expirationTimestamp"] = os.environ["EXPIRES"]
print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential", "status": status}))
"""


class Recorder:
    """A TCP server on 127.0.0.1 answering each request with the next of ``answers``
    (the last one repeats); records request heads and the TLS peer certificate's CN."""

    def __init__(self, answers: Sequence[tuple[int, bytes]]) -> None:
        self.answers = list(answers)
        self.heads: list[str] = []
        self.peer_cns: list[str] = []
        self.port = 0

    def header(self, name: str, index: int = -1) -> str | None:
        """The value of header ``name`` in request ``index`` (None when absent)."""
        for line in self.heads[index].split("\r\n")[1:]:
            key, _, value = line.partition(":")
            if key.strip().lower() == name.lower():
                return value.strip()
        return None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peercert")
        if peer:
            for rdn in peer.get("subject", ()):
                for key, value in rdn:
                    if key == "commonName":
                        self.peer_cns.append(value)
        with contextlib.suppress(Exception, asyncio.CancelledError):
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode()
                self.heads.append(head)
                status, body = self.answers[min(len(self.heads) - 1, len(self.answers) - 1)]
                writer.write(
                    f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        writer.close()


@contextlib.asynccontextmanager
async def recording(
    answers: Sequence[tuple[int, bytes]] = ((200, b"{}"),),
    ssl_context: ssl.SSLContext | None = None,
) -> AsyncIterator[Recorder]:
    """A :class:`Recorder` serving until the block ends."""
    rec = Recorder(answers)
    server = await asyncio.start_server(rec.handle, "127.0.0.1", 0, ssl=ssl_context)
    rec.port = server.sockets[0].getsockname()[1]
    try:
        yield rec
    finally:
        server.close()


def kubeconfig(path: Path, cluster: dict[str, Any], user: dict[str, Any]) -> Path:
    """A kubeconfig whose current context joins ``cluster`` and ``user`` (both named "u")."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def exec_user(tmp_path: Path, mode: str, **env: str) -> dict[str, Any]:
    """A user entry running :data:`PLUGIN` with ``sys.executable`` in ``mode``."""
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN)
    pairs = {"STATE": str(tmp_path / "runs"), "MODE": mode, **env}
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script), "--flag"],
            "env": [{"name": k, "value": v} for k, v in pairs.items()],
            "interactiveMode": "Never",
            "installHint": "install the test plugin",
        }
    }


def b64(data: bytes) -> str:
    """Base64 text of ``data`` (a kubeconfig's ``*-data``)."""
    return base64.b64encode(data).decode()
