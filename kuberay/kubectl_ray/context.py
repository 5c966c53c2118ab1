"""The per-run environment every command gets (:class:`Env`: output streams, the
resolved namespace, a lazily made API client) and the error type every command raises
for a problem the user can act on. Kubeconfig loading is the shared
:mod:`kuberay.kube.kubeconfig`; kubectl's connection flags are :mod:`.connection`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from kuberay.kubectl_ray.connection import DEFAULT_TIMEOUT, ConnectionFlags, load, resolve

if TYPE_CHECKING:
    from kuberay.kube import Client
    from kuberay.kube.restconfig import RestConfig as ConnectionConfig


class CLIError(Exception):
    """A failure the user can act on; printed as ``Error: <message>`` (no traceback)."""


def context_namespace(flags: ConnectionFlags) -> str:
    """The namespace kubectl would use with these flags. A kubeconfig that cannot be
    read gives ``-n`` or "default" here: the error is raised when a command needs the
    apiserver (commands that do not, such as ``render``, still run)."""
    from kuberay.kube.errors import ConfigError
    from kuberay.kubectl_ray.connection import namespace_of

    try:
        return namespace_of(flags, load(flags))
    except ConfigError:
        return flags.namespace or "default"


ClientFactory = Callable[[], Any]


@attrs.define
class Env:
    """What every command gets: output streams, the resolved namespace and a lazily
    created API client (``await env.client()``; closed by :func:`main.run`)."""

    stdout: TextIO
    stderr: TextIO
    namespace: str = "default"
    namespace_explicit: bool = False
    all_namespaces: bool = False
    flags: ConnectionFlags = attrs.field(factory=ConnectionFlags)
    stdin: TextIO | None = None
    _client: Client | None = None
    _connection: ConnectionConfig | None = None

    @property
    def kubeconfig(self) -> str | None:
        """``--kubeconfig`` as given."""
        return self.flags.kubeconfig

    @property
    def context(self) -> str | None:
        """``--context`` as given."""
        return self.flags.context

    def connection(self) -> ConnectionConfig:
        """The connection the flags and kubeconfig describe (CLIError when there is none)."""
        if self._connection is None:
            from kuberay.kube.errors import ConfigError

            try:
                self._connection = resolve(self.flags, load(self.flags))
            except ConfigError as exc:
                raise CLIError(str(exc)) from exc
        return self._connection

    @property
    def server(self) -> str:
        """The apiserver URL (empty before the connection is resolved)."""
        return self._connection.host if self._connection is not None else ""

    async def client(self) -> Client:
        """The API client for the selected connection (created once)."""
        if self._client is None:
            from kuberay.kube import Client
            from kuberay.kube.errors import ConfigError

            config = self.connection()
            try:
                await config.prepare()  # an exec plugin's client certificate, if any
            except ConfigError as exc:
                raise CLIError(str(exc)) from exc
            self._client = Client(
                config,
                user_agent="kubectl-ray",
                qps=50,
                burst=100,
                request_timeout=config.request_timeout or DEFAULT_TIMEOUT,
            )
        return self._client

    async def close(self) -> None:
        """Close the client if one was made."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    def out(self, text: str = "") -> None:
        """A line on stdout."""
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def err(self, text: str) -> None:
        """A line on stderr (progress and warnings)."""
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def list_namespace(self) -> str | None:
        """The namespace to list in: None with ``-A``."""
        return None if self.all_namespaces else self.namespace


__all__ = ["CLIError", "Env", "context_namespace"]
