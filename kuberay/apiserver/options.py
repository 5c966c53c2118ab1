"""The API server's settings: KubeRay's ``apiserver/cmd/main.go`` flags, and ours.

KubeRay's (Go ``flag``: one or two dashes): ``--httpPortFlag`` (``:8888``),
``--enable-api-server-v2`` (true), ``--cors-allow-origin`` (empty: no CORS headers),
``--collectMetricsFlag`` (true: ``/metrics`` answers). Accepted and ignored, so upstream's
command lines keep working: ``--rpcPortFlag``, ``--grpc_timeout``, ``--logFilePath``,
``--localSwaggerPath`` (the gRPC V1 API is not served).

Ours: ``--kubeconfig`` (else in-cluster, else ``KUBECONFIG``/``~/.kube/config``),
``--auth-mode`` (``caller``, the default: each request reaches the kube-apiserver with its
caller's bearer token; ``service-account``: with the server's own credentials, as KubeRay's),
``--tls-cert-file``/``--tls-private-key-file`` (HTTPS on the listener; both or neither),
``--history-server-url`` (where the dashboard's history links go; empty: none),
``--enable-dashboard`` (true: the web UI at ``/dashboard/``, with the V2 routes it calls),
``--log-format`` (``json``/``console``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import attrs

from kuberay.gocompat.goutil import go_parse_bool as parse_bool

CALLER = "caller"
SERVICE_ACCOUNT = "service-account"
AUTH_MODES = (CALLER, SERVICE_ACCOUNT)


class OptionsError(Exception):
    """A setting that cannot be used; the message is one line naming the flag."""


@attrs.frozen
class ApiServerOptions:
    """Every setting, resolved."""

    http_host: str = "0.0.0.0"
    http_port: int = 8888
    enable_v2: bool = True
    cors_allow_origin: str = ""
    collect_metrics: bool = True
    kubeconfig: str = ""
    auth_mode: str = CALLER
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    history_server_url: str = ""
    enable_dashboard: bool = True
    log_format: str = "json"


def parse_listen(text: str) -> tuple[str, int]:
    """``(host, port)`` from ``:8888``, ``127.0.0.1:0`` or ``[::1]:8888`` (empty host: every
    address); ``ValueError`` otherwise."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"invalid --httpPortFlag {text!r}: use host:port, e.g. :8888")
    return host.strip("[]") or "0.0.0.0", int(port)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise OptionsError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kuberay-apiserver",
        description="KubeRay's API server (V2), acting as its caller.",
    )

    def flag(name: str, **kw: Any) -> None:
        p.add_argument(f"--{name}", f"-{name}", **kw)

    flag("httpPortFlag", default=":8888")
    flag("enable-api-server-v2", nargs="?", const="true", default="true")
    flag("cors-allow-origin", default="")
    flag("collectMetricsFlag", nargs="?", const="true", default="true")
    for ignored in ("rpcPortFlag", "grpc_timeout", "logFilePath", "localSwaggerPath"):
        flag(ignored, default=None)
    flag("kubeconfig", default="")
    flag("auth-mode", default=CALLER)
    flag("tls-cert-file", default="")
    flag("tls-private-key-file", default="")
    flag("history-server-url", default="")
    flag("enable-dashboard", nargs="?", const="true", default="true")
    flag("log-format", default="json", choices=("json", "console"))
    return p


def parse_options(argv: Sequence[str]) -> ApiServerOptions:
    """Options from ``argv``; :class:`OptionsError` (one line) for a bad one."""
    ns = _parser().parse_args(list(argv))
    try:
        host, port = parse_listen(ns.httpPortFlag)
        options = ApiServerOptions(
            http_host=host,
            http_port=port,
            enable_v2=parse_bool(ns.enable_api_server_v2),
            cors_allow_origin=ns.cors_allow_origin,
            collect_metrics=parse_bool(ns.collectMetricsFlag),
            kubeconfig=ns.kubeconfig,
            auth_mode=ns.auth_mode,
            tls_cert_file=ns.tls_cert_file,
            tls_private_key_file=ns.tls_private_key_file,
            history_server_url=ns.history_server_url.rstrip("/"),
            enable_dashboard=parse_bool(ns.enable_dashboard),
            log_format=ns.log_format,
        )
    except ValueError as exc:
        raise OptionsError(str(exc)) from None
    if options.auth_mode not in AUTH_MODES:
        raise OptionsError(f"--auth-mode must be one of {', '.join(AUTH_MODES)}")
    if bool(options.tls_cert_file) != bool(options.tls_private_key_file):
        raise OptionsError("--tls-cert-file and --tls-private-key-file go together")
    return options
