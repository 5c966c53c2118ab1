"""kubectl's connection flags applied to the merged kubeconfig by the shared loader
(:mod:`kuberay.kube.kubeconfig`: the server to dial, how to trust it, who to be, through
which proxy), plus ``--request-timeout``.

:func:`resolve` is :func:`kuberay.kube.kubeconfig.resolve` with the flags as its
overrides (``--context``, ``--cluster``, ``--user``, ``--server``, ``--token``, ``--as*``,
certificate flags, ``-n``); without any kubeconfig entry and without ``--server`` it
falls back to the pod's service account.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kuberay.gocompat.goutil import go_duration_seconds
from kuberay.kube.overrides import Overrides

if TYPE_CHECKING:  # the loader is imported when a command connects, not at --help
    from kuberay.kube.kubeconfig import MergedConfig
    from kuberay.kube.restconfig import RestConfig

    #: The resolved connection (the shared loader's :class:`RestConfig`).
    ConnectionConfig = RestConfig
#: What ``--request-timeout 0`` (no timeout) becomes: a day per request.
NO_TIMEOUT = 86400.0
#: Per-request timeout when ``--request-timeout`` is not given.
DEFAULT_TIMEOUT = 30.0


def parse_request_timeout(text: str) -> float:
    """kubectl's ``--request-timeout`` value: ``0`` (none), plain seconds (``5``) or a Go
    duration (``5s``, ``1m``, ``1h30m``, ``250ms``); seconds (0.0 for none)."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        return float(text)
    try:
        seconds = go_duration_seconds(text)
    except ValueError:
        seconds = -1.0
    if seconds < 0:
        raise ValueError(
            "invalid timeout value. Timeout must be a single integer in seconds, or an "
            "integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"
        )
    return seconds


@dataclasses.dataclass
class ConnectionFlags(Overrides):
    """kubectl's connection flags (None: not given): the loader's :class:`Overrides` plus
    ``--kubeconfig`` and ``--request-timeout``."""

    kubeconfig: str | None = None
    request_timeout: str | None = None

    def overrides(self) -> Overrides:
        """The flags as the shared loader's overrides."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(Overrides)}
        return Overrides(**{**fields, "as_groups": list(self.as_groups)})


def load(flags: ConnectionFlags, environ: Mapping[str, str] | None = None) -> MergedConfig:
    """The merged kubeconfig the flags select."""
    from kuberay.kube.kubeconfig import kubeconfig_files, merge

    return merge(kubeconfig_files(flags.kubeconfig, environ))


def namespace_of(
    flags: ConnectionFlags, config: MergedConfig, environ: Mapping[str, str] | None = None
) -> str:
    """``-n``, else the context's namespace, else the pod's (in-cluster), else default."""
    from kuberay.kube.kubeconfig import namespace_of as _namespace_of

    return _namespace_of(config, flags.overrides(), environ)


def resolve(
    flags: ConnectionFlags, config: MergedConfig, environ: Mapping[str, str] | None = None
) -> RestConfig:
    """The connection the flags and the kubeconfig describe (ConfigError if none), with
    ``request_timeout`` set from ``--request-timeout`` (default 30 s)."""
    from kuberay.kube.errors import ConfigError
    from kuberay.kube.kubeconfig import resolve as _resolve

    timeout = DEFAULT_TIMEOUT
    if flags.request_timeout is not None:
        try:
            timeout = parse_request_timeout(flags.request_timeout) or NO_TIMEOUT
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
    conn = _resolve(config, flags.overrides(), environ)
    conn.request_timeout = timeout
    return conn


def proxy_for(server: str, proxy_url: object, environ: Mapping[str, str]) -> str | None:
    """:func:`kuberay.kube.proxy.proxy_for` (the proxy kubectl would dial ``server``
    through)."""
    from kuberay.kube.proxy import proxy_for as shared

    return shared(server, proxy_url, environ)


__all__ = [
    "DEFAULT_TIMEOUT",
    "NO_TIMEOUT",
    "ConnectionFlags",
    "load",
    "namespace_of",
    "parse_request_timeout",
    "proxy_for",
    "resolve",
]
