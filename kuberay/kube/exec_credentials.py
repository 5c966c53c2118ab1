"""Where a user's credentials come from: a static token, a token file, or a client-go
credential (``exec``) plugin.

* A token file is re-read at most once a minute (client-go's ``CachedFileTokenSource``),
  so a rotated (bound, expiring) service-account token is picked up; while the file is
  unreadable mid-rotation the last token is kept. When a user has both ``tokenFile`` and
  ``token``, the file wins and the static token is only the fallback while the file cannot
  be read (client-go ``NewBearerAuthWithRefreshRoundTripper``).
* An ``exec`` plugin (``client.authentication.k8s.io/v1`` or ``v1beta1``) is run as
  client-go runs it: ``command`` with ``args``, this process's environment plus ``env``,
  ``KUBERNETES_EXEC_INFO`` holding an ``ExecCredential`` request (``spec.interactive``,
  and ``spec.cluster`` when ``provideClusterInfo``), stdin only when ``interactiveMode``
  allows and stdin is a terminal. Its stdout is an ``ExecCredential`` of the same
  apiVersion whose ``status`` holds a ``token`` and/or ``clientCertificateData`` +
  ``clientKeyData`` (PEM), cached until ``expirationTimestamp`` (forever without one).
  The plugin runs again at expiry, or on the next request after the apiserver answered
  401 (:meth:`Credentials.invalidate`, client-go's ``maybeRefreshCreds``); concurrent
  requests in one event loop share one run. A run is bounded by :data:`EXEC_TIMEOUT`
  (then killed). Any failure is a :class:`~kuberay.kube.errors.CredentialError` naming
  the user and the command (and the plugin's ``installHint`` when the command is
  missing, and the tail of its stderr when it failed).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import sys
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kuberay.gocompat.gotime import parse_rfc3339
from kuberay.kube.errors import CredentialError

#: Seconds a token read from a file is used before the file is read again.
TOKEN_FILE_TTL = 60.0
#: Seconds an exec plugin may run before it is killed and the request fails.
EXEC_TIMEOUT = 60.0
#: The ExecCredential versions client-go still speaks.
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
#: Bytes of a failed plugin's stderr quoted in the error.
_STDERR_TAIL = 2000


class FileToken:
    """A bearer token read from ``path``, cached for ``ttl`` seconds (see the module doc)."""

    def __init__(
        self, path: str, ttl: float = TOKEN_FILE_TTL, now: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = path
        self.ttl = ttl
        self._now = now
        self._token = ""
        self._read_at: float | None = None

    def __call__(self) -> str:
        """The token; CredentialError when the file was never readable."""
        now = self._now()
        if self._read_at is None or now - self._read_at >= self.ttl:
            try:
                self._token = Path(self.path).read_text().strip()
            except OSError as exc:
                if self._read_at is None:
                    raise CredentialError(
                        f"cannot read token file {self.path}: {exc.strerror or exc}"
                    ) from exc
                # Keep the last token while the file is being rotated.
            self._read_at = now
        return self._token


class ExecPlugin:
    """One ``users[].user.exec`` entry of user ``user`` (``cluster``: the
    ``KUBERNETES_EXEC_INFO`` cluster, sent when ``provideClusterInfo``)."""

    def __init__(
        self, spec: Mapping[str, Any], user: str, cluster: Mapping[str, Any] | None = None
    ) -> None:
        self.user = user
        self.command = str(spec.get("command") or "")
        self.args = [str(a) for a in spec.get("args") or []]
        self.env = {str(e.get("name")): str(e.get("value", "")) for e in spec.get("env") or []}
        self.api_version = str(spec.get("apiVersion") or "")
        self.interactive_mode = str(spec.get("interactiveMode") or "IfAvailable")
        self.install_hint = str(spec.get("installHint") or "").strip()
        self.cluster = dict(cluster) if spec.get("provideClusterInfo") and cluster else None
        self.timeout = EXEC_TIMEOUT
        if not self.command:
            raise CredentialError(f'user "{user}": exec plugin has no command')
        if self.api_version not in EXEC_API_VERSIONS:
            raise CredentialError(
                f'user "{user}": exec plugin {self.command}: apiVersion '
                f"{self.api_version or '(none)'!r} is not one of {', '.join(EXEC_API_VERSIONS)}"
            )

    def _fail(self, what: str) -> CredentialError:
        return CredentialError(f'user "{self.user}": exec plugin {self.command}: {what}')

    async def run(self) -> dict[str, Any]:
        """Run the plugin once; the ``status`` of the ExecCredential it printed."""
        interactive = self.interactive_mode != "Never" and sys.stdin.isatty()
        if self.interactive_mode == "Always" and not interactive:
            raise self._fail("interactiveMode is Always but stdin is not a terminal")
        spec: dict[str, Any] = {"interactive": interactive}
        if self.cluster is not None:
            spec["cluster"] = self.cluster
        info = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}
        env = {**os.environ, **self.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
        try:
            proc = await asyncio.create_subprocess_exec(
                self.command,
                *self.args,
                env=env,
                stdin=None if interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=None if interactive else asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            hint = f" ({self.install_hint})" if self.install_hint else ""
            raise self._fail(f"{exc.strerror or exc}{hint}") from exc
        try:
            async with asyncio.timeout(self.timeout):
                out, err = await proc.communicate()
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise self._fail(f"no credential within {self.timeout:g}s; killed") from None
        if proc.returncode != 0:
            tail = (err or b"")[-_STDERR_TAIL:].decode(errors="replace").strip()
            raise self._fail(f"exited with code {proc.returncode}" + (f": {tail}" if tail else ""))
        return self._status(out)

    def _status(self, out: bytes) -> dict[str, Any]:
        try:
            doc = json.loads(out)
        except ValueError:
            raise self._fail("printed no ExecCredential JSON") from None
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise self._fail("printed something other than an ExecCredential")
        if doc.get("apiVersion") != self.api_version:
            raise self._fail(
                f"asked for {self.api_version}, the plugin returned {doc.get('apiVersion')}"
            )
        status = doc.get("status")
        if not isinstance(status, dict):
            raise self._fail("the ExecCredential has no status")
        has_cert = bool(status.get("clientCertificateData"))
        if has_cert != bool(status.get("clientKeyData")):
            raise self._fail("clientCertificateData and clientKeyData must come together")
        if not status.get("token") and not has_cert:
            raise self._fail("the ExecCredential has neither a token nor a client certificate")
        return status


class Credentials:
    """A user's credential source: a ``static`` token, a ``token_file``, an ``exec_plugin``
    (or none). ``cert_generation`` changes whenever a plugin hands out a new client
    certificate, so the transport knows to open new connections."""

    def __init__(
        self,
        *,
        static: str | None = None,
        token_file: str | None = None,
        exec_plugin: ExecPlugin | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.static = static
        self.token_file = token_file
        self.exec_plugin = exec_plugin
        self.cert_generation = 0
        self._file = FileToken(token_file, now=now) if token_file else None
        self._now = now
        self._token = ""
        self._cert: tuple[bytes, bytes] | None = None
        self._valid_until: float | None = None  # None: not run yet
        self._runs = 0
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    async def prepare(self) -> None:
        """Run the exec plugin now if it has not run (before the first connection, whose
        TLS handshake may need the certificate it returns)."""
        if self.exec_plugin is not None and self._valid_until is None:
            await self._refresh()

    async def token(self) -> str | None:
        """The current bearer token (re-read or re-run when due), or None."""
        if self._file is not None or self.static:
            return self.stored_token()
        if self.exec_plugin is not None:
            if self._valid_until is None or self._now() >= self._valid_until:
                await self._refresh()
            return self._token or None
        return None

    def stored_token(self) -> str | None:
        """The token file's (re-read when due) or the static token, synchronously: not an
        exec plugin's."""
        if self._file is not None:
            try:
                return self._file() or self.static or None
            except CredentialError:
                if self.static:
                    return self.static
                raise
        return self.static or None

    def client_certificate(self) -> tuple[bytes, bytes] | None:
        """The client certificate and key (PEM) the exec plugin last returned, if any."""
        return self._cert

    def invalidate(self) -> None:
        """Forget the plugin's credential (the apiserver rejected it: 401); the next
        request runs the plugin again. No-op for other sources."""
        if self.exec_plugin is not None and self._valid_until is not None:
            self._valid_until = 0.0

    async def _refresh(self) -> None:
        assert self.exec_plugin is not None
        loop = asyncio.get_running_loop()
        lock = self._locks.setdefault(loop, asyncio.Lock())
        runs = self._runs
        async with lock:
            if self._runs != runs:  # another task refreshed meanwhile
                return
            status = await self.exec_plugin.run()
            self._token = str(status.get("token") or "")
            cert = status.get("clientCertificateData")
            new = (str(cert).encode(), str(status["clientKeyData"]).encode()) if cert else None
            if new != self._cert:
                self._cert = new
                self.cert_generation += 1
            self._valid_until = self._expiry(status.get("expirationTimestamp"))
            self._runs += 1
            import structlog  # not at import (kubectl ray's --help reads kubeconfigs)

            structlog.get_logger("kuberay.kube").debug(
                "exec credential plugin ran",
                user=self.exec_plugin.user,
                command=self.exec_plugin.command,
                expires=status.get("expirationTimestamp"),
            )

    def _expiry(self, stamp: object) -> float:
        if not stamp:
            return float("inf")
        try:
            when = parse_rfc3339(str(stamp))
        except ValueError:
            assert self.exec_plugin is not None
            raise self.exec_plugin._fail(f"invalid expirationTimestamp {stamp!r}") from None
        return self._now() + (when - dt.datetime.now(dt.UTC)).total_seconds()


__all__ = [
    "EXEC_API_VERSIONS",
    "EXEC_TIMEOUT",
    "TOKEN_FILE_TTL",
    "Credentials",
    "ExecPlugin",
    "FileToken",
]
