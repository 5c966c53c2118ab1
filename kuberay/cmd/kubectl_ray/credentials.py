"""Where a bearer token comes from: the kubeconfig or ``--token``, a token file (re-read
every minute, as client-go does), or a client-go credential (``exec``) plugin.

An ``exec`` plugin is run as client-go runs it: ``command`` with ``args``, the user's
environment plus ``env``, ``KUBERNETES_EXEC_INFO`` describing the request, stdin only
when ``interactiveMode`` allows and stdin is a terminal; its stdout is an
``ExecCredential`` whose ``status`` has a ``token`` or ``clientCertificateData`` +
``clientKeyData``, valid until ``expirationTimestamp`` (then the plugin runs again).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import sys
import time
from typing import Any

import attrs

#: Seconds a token read from a file is used before the file is read again.
TOKEN_FILE_TTL = 60.0


class CredentialError(Exception):
    """A credential plugin or token file failed."""


@attrs.define
class ExecPlugin:
    """One ``users[].user.exec`` entry."""

    command: str
    args: list[str] = attrs.field(factory=list)
    env: dict[str, str] = attrs.field(factory=dict)
    api_version: str = "client.authentication.k8s.io/v1"
    interactive: str = "IfAvailable"
    install_hint: str = ""
    user: str = ""

    @classmethod
    def from_spec(cls, spec: dict[str, Any], user: str) -> ExecPlugin:
        """From the kubeconfig's ``exec`` mapping."""
        return cls(
            command=str(spec.get("command") or ""),
            args=[str(a) for a in spec.get("args") or []],
            env={str(e.get("name")): str(e.get("value", "")) for e in spec.get("env") or []},
            api_version=str(spec.get("apiVersion") or "client.authentication.k8s.io/v1"),
            interactive=str(spec.get("interactiveMode") or "IfAvailable"),
            install_hint=str(spec.get("installHint") or ""),
            user=user,
        )

    async def run(self) -> dict[str, Any]:
        """The ``status`` of the ExecCredential the plugin prints."""
        interactive = self.interactive != "Never" and sys.stdin.isatty()
        info = {
            "apiVersion": self.api_version,
            "kind": "ExecCredential",
            "spec": {"interactive": interactive},
        }
        env = {**os.environ, **self.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
        try:
            proc = await asyncio.create_subprocess_exec(
                self.command,
                *self.args,
                env=env,
                stdin=None if interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=None,
            )
        except OSError as exc:
            hint = f" ({self.install_hint.strip()})" if self.install_hint else ""
            raise CredentialError(
                f'user "{self.user}": exec plugin {self.command}: {exc.strerror or exc}{hint}'
            ) from exc
        out, _ = await proc.communicate()
        if proc.returncode != 0:
            raise CredentialError(
                f'user "{self.user}": exec plugin {self.command} exited with code {proc.returncode}'
            )
        try:
            doc = json.loads(out)
        except ValueError as exc:
            raise CredentialError(
                f'user "{self.user}": exec plugin {self.command} printed no ExecCredential JSON'
            ) from exc
        status = doc.get("status") if isinstance(doc, dict) else None
        if not isinstance(status, dict):
            raise CredentialError(
                f'user "{self.user}": exec plugin {self.command} returned no status'
            )
        return status


@attrs.define
class Credentials:
    """A bearer token source: ``static``, ``token_file`` or ``exec_plugin`` (or none)."""

    static: str | None = None
    token_file: str | None = None
    exec_plugin: ExecPlugin | None = None
    _cached: str = ""
    _valid_until: float = 0.0
    _cert_files: tuple[str, str] | None = None

    async def prepare(self) -> tuple[str, str] | None:
        """Run the exec plugin once (before the first connection); the client
        certificate and key files it returned, if any."""
        if self.exec_plugin is not None:
            await self._refresh()
        return self._cert_files

    async def token(self) -> str | None:
        """The current bearer token (refreshed when due), or None."""
        if self.static:
            return self.static
        now = time.monotonic()
        if self.token_file:
            if not self._cached or now >= self._valid_until:
                try:
                    with open(self.token_file) as f:
                        self._cached = f.read().strip()
                except OSError as exc:
                    if not self._cached:
                        raise CredentialError(
                            f"cannot read token file {self.token_file}: {exc.strerror or exc}"
                        ) from exc
                self._valid_until = now + TOKEN_FILE_TTL
            return self._cached
        if self.exec_plugin is not None:
            if now >= self._valid_until:
                await self._refresh()
            return self._cached or None
        return None

    async def _refresh(self) -> None:
        assert self.exec_plugin is not None
        status = await self.exec_plugin.run()
        self._cached = str(status.get("token") or "")
        if status.get("clientCertificateData") and status.get("clientKeyData"):
            self._cert_files = (
                temp_file(str(status["clientCertificateData"]).encode()),
                temp_file(str(status["clientKeyData"]).encode()),
            )
        expires = status.get("expirationTimestamp")
        self._valid_until = float("inf")
        if expires:
            try:
                when = dt.datetime.fromisoformat(str(expires).replace("Z", "+00:00"))
                left = (when - dt.datetime.now(dt.UTC)).total_seconds()
                self._valid_until = time.monotonic() + max(left - 10.0, 0.0)
            except ValueError:
                pass


def temp_file(data: bytes) -> str:
    """A private (0600) file holding ``data`` (one per content), removed at exit."""
    from kuberay.kube.kubeconfig import temp_file as private_file  # not at `--help`

    return private_file(data, prefix="kubectl-ray-")


__all__ = ["CredentialError", "Credentials", "ExecPlugin", "temp_file"]
