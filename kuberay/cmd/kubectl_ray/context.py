"""Kubeconfig, ``--context``, ``-n/--namespace`` and ``-A`` resolved as kubectl does,
and the error type every command raises for a problem the user can act on.

Namespace: ``-n`` if given, else the namespace of the selected context in the
kubeconfig, else ``default``. Kubeconfig: ``--kubeconfig``, else ``$KUBECONFIG``
(colon-separated list, first definition wins), else ``~/.kube/config``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import attrs
import yaml

from kuberay.kube import Client

Obj = dict[str, Any]


class CLIError(Exception):
    """A failure the user can act on; printed as ``Error: <message>`` (no traceback)."""


def kubeconfig_paths(explicit: str | None) -> list[Path]:
    """The kubeconfig files to read, in precedence order."""
    if explicit:
        return [Path(explicit).expanduser()]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path("~/.kube/config").expanduser()]


def _load(paths: list[Path]) -> Obj:
    """Merged kubeconfig (first file to set a key or name wins, as kubectl)."""
    merged: Obj = {"contexts": [], "current-context": ""}
    seen: set[str] = set()
    for path in paths:
        if not path.is_file():
            continue
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CLIError(f"cannot read kubeconfig {path}: {exc}") from exc
        if not merged["current-context"] and doc.get("current-context"):
            merged["current-context"] = doc["current-context"]
        for ctx in doc.get("contexts") or []:
            name = ctx.get("name")
            if name and name not in seen:
                seen.add(name)
                merged["contexts"].append(ctx)
    return merged


def context_namespace(paths: list[Path], context: str | None) -> str:
    """Namespace of ``context`` (default: the current context); "default" if unset."""
    config = _load(paths)
    name = context or config["current-context"]
    if context and not any(c.get("name") == context for c in config["contexts"]):
        raise CLIError(f'context "{context}" does not exist in the kubeconfig')
    for ctx in config["contexts"]:
        if ctx.get("name") == name:
            return str((ctx.get("context") or {}).get("namespace") or "default")
    return "default"


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
    kubeconfig: str | None = None
    context: str | None = None
    stdin: TextIO | None = None
    _client: Client | None = None

    async def client(self) -> Client:
        """The API client for the selected kubeconfig/context (created once)."""
        if self._client is None:
            paths = kubeconfig_paths(self.kubeconfig)
            path = next((p for p in paths if p.is_file()), None)
            if path is None and not os.environ.get("KUBERNETES_SERVICE_HOST"):
                raise CLIError(
                    "no kubeconfig found: set KUBECONFIG or pass --kubeconfig "
                    f"(looked at {', '.join(str(p) for p in paths)})"
                )
            try:
                if path is None:
                    self._client = Client.from_in_cluster(user_agent="kubectl-ray")
                else:
                    self._client = await Client.from_kubeconfig(
                        path, context=self.context, user_agent="kubectl-ray", qps=50, burst=100
                    )
            except Exception as exc:  # kubernetes_asyncio's ConfigException and friends
                raise CLIError(f"invalid kubeconfig {path}: {exc}") from exc
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


__all__ = ["CLIError", "Env", "Obj", "context_namespace", "kubeconfig_paths"]
