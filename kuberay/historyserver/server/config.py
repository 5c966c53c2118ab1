"""The server's settings: KubeRay's history-server flags with their defaults, and ours.

KubeRay's (``cmd/historyserver/main.go``): ``--storage-backend`` (env ``STORAGE_BACKEND``,
required), ``--storage-root-dir`` (``STORAGE_ROOT_DIR``), ``--kubeconfigs``,
``--use-kubernetes-proxy``, ``--use-auth-token-mode``, ``--kube-api-qps`` (100),
``--kube-api-burst`` (200), ``--session-process-timeout`` (2m), ``--session-cache-size``
(100), ``--session-cache-max-memory`` (``2Gi``, a Kubernetes quantity; ``0`` turns the byte
bound off), ``--session-cache-ttl`` (0: off), ``--dashboard-dir`` (``/dashboard``, accepted,
unused as upstream).

Ours: ``--listen`` (``:8080``; ``host:port``, ``127.0.0.1:0`` picks a free port),
``--storage-backend-config-path`` (``STORAGE_BACKEND_CONFIG_PATH``),
``--enable-live-clusters`` (off; KubeRay v1.8's flag: live RayClusters are listed and
proxied, GET/HEAD only; ``--use-kubernetes-proxy`` and ``--use-auth-token-mode`` need it),
``--kubernetes-login`` (off: a caller must show a Kubernetes token, by ``Authorization:
Bearer`` or the ``/login`` cookie, and sees only namespaces where it may get RayClusters),
``--cluster-list-ttl`` (10s: how long the marker listing is reused),
``--session-reload-interval`` (10s: how often a cached session whose cluster may still be
writing is checked for new objects and reloaded, see ``freshness``; ``0`` turns it off),
``--log-format`` (``json``/``console``), ``--dashboard-ui-dir`` (``DASHBOARD_UI_DIR``: Ray
dashboard UI builds to serve, see ``ui_builds``), ``--dashboard-ui-from-ray`` (true: also
serve the build of an installed ``ray`` package). With live clusters and the login off nothing
talks to Kubernetes.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping, Sequence

import attrs

from kuberay.gocompat.goutil import go_duration_seconds, go_parse_bool
from kuberay.historyserver.layout import LayoutError, normalize_root

_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)([KMGTPE]i?|k|m)?$")
_FACTORS = {
    None: 1,
    "k": 10**3,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}


class ConfigError(Exception):
    """A setting that cannot be used; the message is one line naming it."""


def parse_quantity(text: str) -> int:
    """Bytes in a Kubernetes quantity (``2Gi``, ``512Mi``, ``1G``, ``1500``, ``0``)."""
    m = _QUANTITY.fullmatch(text.strip())
    if m is None or m[2] == "m":
        raise ValueError(f"invalid quantity {text!r}: use e.g. 2Gi, 512Mi or 0")
    return int(float(m[1]) * _FACTORS[m[2]])


def parse_listen(text: str) -> tuple[str, int]:
    """``(host, port)`` from ``:8080``, ``0.0.0.0:8080``, ``127.0.0.1:0`` or ``[::1]:80``;
    an empty host means every address."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"invalid listen address {text!r}: use host:port, e.g. :8080")
    return host.strip("[]") or "0.0.0.0", int(port)


@attrs.frozen
class ServerOptions:
    """Every setting, resolved. Durations are seconds, sizes bytes."""

    storage_backend: str
    storage_root_dir: str = ""
    storage_backend_config_path: str = ""
    kubeconfigs: str = ""
    use_kubernetes_proxy: bool = False
    use_auth_token_mode: bool = False
    kube_api_qps: float = 100.0
    kube_api_burst: int = 200
    session_process_timeout: float = 120.0
    session_cache_size: int = 100
    session_cache_max_memory: int = 2 * 2**30
    session_cache_ttl: float = 0.0
    dashboard_dir: str = "/dashboard"
    listen_host: str = "0.0.0.0"
    listen_port: int = 8080
    enable_live_clusters: bool = False
    kubernetes_login: bool = False
    cluster_list_ttl: float = 10.0
    session_reload_interval: float = 10.0
    log_format: str = "json"
    dashboard_ui_dir: str = ""
    dashboard_ui_from_ray: bool = True


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kuberay-history-server",
        description="Serve Ray's dashboard API for stored (dead) Ray cluster sessions.",
    )
    add = p.add_argument
    add("--storage-backend", default=None)
    add("--storage-root-dir", default=None)
    add("--storage-backend-config-path", default=None)
    add("--kubeconfigs", default="")
    for flag in (
        "use-kubernetes-proxy",
        "use-auth-token-mode",
        "enable-live-clusters",
        "kubernetes-login",
    ):
        add(f"--{flag}", nargs="?", const="true", default="false")
    add("--kube-api-qps", default="100")
    add("--kube-api-burst", default="200")
    add("--session-process-timeout", default="2m")
    add("--session-cache-size", default="100")
    add("--session-cache-max-memory", default="2Gi")
    add("--session-cache-ttl", default="0")
    add("--dashboard-dir", default="/dashboard")
    add("--listen", default=":8080")
    add("--cluster-list-ttl", default="10s")
    add("--session-reload-interval", default="10s")
    add("--log-format", default="json", choices=("json", "console"))
    add("--dashboard-ui-dir", default=None)
    add("--dashboard-ui-from-ray", nargs="?", const="true", default="true")
    return p


def _flag_bool(text: str) -> bool:
    """A boolean flag as Go's ``strconv.ParseBool`` reads it (surrounding space ignored)."""
    return go_parse_bool(text.strip())


def _flag_seconds(text: str) -> float:
    """A Go duration flag (surrounding space ignored) in seconds."""
    return go_duration_seconds(text.strip())


def parse_options(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> ServerOptions:
    """Options from ``argv`` over the env (``STORAGE_BACKEND``, ``STORAGE_ROOT_DIR``,
    ``STORAGE_BACKEND_CONFIG_PATH``); ``ConfigError`` (one line) for a bad one."""
    env = dict(os.environ) if environ is None else environ
    try:
        ns = _parser().parse_args(list(argv))
    except SystemExit as exc:
        raise ConfigError("invalid command line (see --help)") from exc
    backend = (ns.storage_backend or env.get("STORAGE_BACKEND", "")).strip().lower()
    if not backend:
        raise ConfigError("--storage-backend (or STORAGE_BACKEND) is required")
    try:
        host, port = parse_listen(ns.listen)
        options = ServerOptions(
            storage_backend=backend,
            storage_root_dir=normalize_root(
                env.get("STORAGE_ROOT_DIR", "")
                if ns.storage_root_dir is None
                else ns.storage_root_dir
            ),
            storage_backend_config_path=(
                env.get("STORAGE_BACKEND_CONFIG_PATH", "")
                if ns.storage_backend_config_path is None
                else ns.storage_backend_config_path
            ),
            kubeconfigs=ns.kubeconfigs,
            use_kubernetes_proxy=_flag_bool(ns.use_kubernetes_proxy),
            use_auth_token_mode=_flag_bool(ns.use_auth_token_mode),
            kube_api_qps=float(ns.kube_api_qps),
            kube_api_burst=int(ns.kube_api_burst),
            session_process_timeout=_flag_seconds(ns.session_process_timeout),
            session_cache_size=int(ns.session_cache_size),
            session_cache_max_memory=parse_quantity(ns.session_cache_max_memory),
            session_cache_ttl=_flag_seconds(ns.session_cache_ttl),
            dashboard_dir=ns.dashboard_dir,
            listen_host=host,
            listen_port=port,
            enable_live_clusters=_flag_bool(ns.enable_live_clusters),
            kubernetes_login=_flag_bool(ns.kubernetes_login),
            cluster_list_ttl=_flag_seconds(ns.cluster_list_ttl),
            session_reload_interval=_flag_seconds(ns.session_reload_interval),
            log_format=ns.log_format,
            dashboard_ui_dir=(
                env.get("DASHBOARD_UI_DIR", "")
                if ns.dashboard_ui_dir is None
                else ns.dashboard_ui_dir
            ),
            dashboard_ui_from_ray=_flag_bool(ns.dashboard_ui_from_ray),
        )
    except (ValueError, LayoutError) as exc:
        raise ConfigError(str(exc)) from None
    if "," in options.kubeconfigs:
        raise ConfigError("--kubeconfigs takes one path only")
    if options.session_cache_size < 1:
        raise ConfigError("--session-cache-size must be at least 1")
    if (options.use_kubernetes_proxy or options.use_auth_token_mode) and not (
        options.enable_live_clusters
    ):
        raise ConfigError(
            "--use-kubernetes-proxy and --use-auth-token-mode apply to live clusters: "
            "add --enable-live-clusters"
        )
    return options
