"""The collector's settings: KubeRay's flags and env vars with their defaults, and ours.

Precedence is KubeRay's: a flag's value, replaced by its env var when that is set and
non-empty. Identity settings (role, backend, cluster, owner, the enables) that are wrong stop
the program with one line (``ConfigError``); a malformed tunable env var (rotation interval,
sizes, poll interval, port, ...) is reported as one warning line and its default is used, as
KubeRay does ("crash-looping this sidecar would take the head pod out of its Service
endpoints").

Ours, beyond KubeRay (all optional):

* ``--events-host`` / ``RAY_COLLECTOR_EVENTS_HOST``: comma list of addresses the event
  endpoint binds; default ``127.0.0.1,::1`` (Ray's aggregator posts to ``localhost`` in the
  same pod). ``0.0.0.0`` widens it.
* ``--event-flush-interval`` / ``RAY_COLLECTOR_EVENT_FLUSH_INTERVAL`` (10s): how often the
  growing event files are also put at their final key, so events reach storage within about
  this long instead of after rotation (``0`` turns it off: KubeRay's behaviour).
* ``--log-upload-interval`` / ``RAY_COLLECTOR_LOG_UPLOAD_INTERVAL`` (10s): how often the live
  session's logs are scanned and what grew is re-put (``0``: only at shutdown, like KubeRay).
* ``--log-upload-budget-mb`` / ``RAY_COLLECTOR_LOG_UPLOAD_BUDGET_MB`` (64): at most this many
  MiB of live logs are put per scan; the rest waits for the next scan (not at shutdown).
* ``--log-format`` / ``RAY_COLLECTOR_LOG_FORMAT``: ``json`` (default) or ``console``.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence

import attrs

from kuberay.gocompat.goutil import go_duration_seconds, go_parse_bool
from kuberay.historyserver.layout import OWNER_KINDS, LayoutError, normalize_root

SUPPORTED_BACKENDS = ("s3", "gcs", "azureblob", "aliyunoss", "local")
DEFAULT_DASHBOARD_ADDRESS = "http://localhost:8265"
DEFAULT_TOKEN_PATH = "/var/run/secrets/ray.io/serviceaccount/token"
MIB = 1024 * 1024

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


class ConfigError(Exception):
    """A setting that cannot be used; the message is one line naming it."""


@attrs.frozen
class AuthSettings:
    """How the collector authenticates to the dashboard (KubeRay ``pkg/utils/auth.go``)."""

    mode: str = ""
    token: str = ""
    k8s_token_auth: bool = False
    token_path: str = DEFAULT_TOKEN_PATH


@attrs.frozen
class CollectorOptions:
    """Every setting, resolved. Durations are seconds; sizes bytes."""

    role: str
    storage_backend: str
    cluster_name: str
    cluster_namespace: str = "default"
    storage_root_dir: str = ""
    owner_kind: str = ""
    owner_name: str = ""
    events_port: int = 8084
    events_hosts: tuple[str, ...] = ("127.0.0.1", "::1")
    dashboard_address: str = DEFAULT_DASHBOARD_ADDRESS
    storage_backend_config_path: str = ""
    event_data_dir: str = "/tmp/ray/event-data"
    event_rotation_interval: float = 300.0
    event_max_file_size: int = 100 * MIB
    event_max_disk: int = 200 * MIB
    event_compression: bool = False
    event_flush_interval: float = 10.0
    enable_event_collector: bool = True
    enable_log_collector: bool = True
    poll_interval: float = 30.0
    additional_endpoints: tuple[str, ...] = ()
    log_upload_interval: float = 10.0
    log_upload_budget: int = 64 * MIB
    pod_ip: str = ""
    fq_ray_ip: str = ""
    dashboard_port: str = "8265"
    tmp_root: str = "/tmp/ray"
    auth: AuthSettings = AuthSettings()
    log_format: str = "json"
    warnings: tuple[str, ...] = ()

    @property
    def is_head(self) -> bool:
        """Whether this is the head's collector (markers, endpoint snapshots)."""
        return self.role == "Head"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kuberay-history-collector",
        description="Collect a Ray node's events, logs and dashboard snapshots into storage.",
    )
    add = p.add_argument
    for flag in ("enable-event-collector", "enable-log-collector", "event-compression-enabled"):
        add(f"--{flag}", nargs="?", const="true", default=None)
    for flag in (
        "role",
        "storage-backend",
        "ray-cluster-name",
        "ray-cluster-namespace",
        "storage-root-dir",
        "log-batching",
        "events-port",
        "storage-backend-config-path",
        "push-interval",
        "owner-kind",
        "owner-name",
        "ray-dashboard-address",
        "event-data-dir",
        "event-rotation-interval",
        "event-max-file-size-mb",
        "event-max-disk-mb",
        "events-host",
        "event-flush-interval",
        "log-upload-interval",
        "log-upload-budget-mb",
        "log-format",
    ):
        add(f"--{flag}", default=None)
    return p


def _go_style(argv: Sequence[str]) -> list[str]:
    """Go's flag package takes ``-name`` as well as ``--name``."""
    return [
        f"-{a}" if a.startswith("-") and not a.startswith("--") and len(a) > 2 else a for a in argv
    ]


class _Resolver:
    def __init__(self, flags: argparse.Namespace, environ: Mapping[str, str]) -> None:
        self.flags = flags
        self.env = environ
        self.warnings: list[str] = []

    def raw(self, flag: str, env: str | None) -> tuple[str | None, str]:
        """The env value when set and non-empty, else the flag's; with where it came from."""
        if env and self.env.get(env, ""):
            return self.env[env], env
        if not flag:
            return None, env or ""
        value = getattr(self.flags, flag.replace("-", "_"))
        return value, f"--{flag}"

    def string(self, flag: str, env: str | None, default: str) -> str:
        value, _ = self.raw(flag, env)
        return default if value is None else value

    def tunable(self, flag: str, env: str | None, default: float, kind: str) -> float:
        value, source = self.raw(flag, env)
        if value is None:
            return default
        try:
            parsed = _seconds(value) if kind == "duration" else float(int(value))
            if parsed < 0 or (kind != "duration" and parsed <= 0):
                raise ValueError("must be positive")
        except ValueError:
            if source.startswith("--"):
                raise ConfigError(f"invalid {source}={value!r}: expected a {kind}") from None
            self.warnings.append(f"invalid {source}={value!r}, using default {default:g}")
            return default
        return parsed

    def boolean(self, flag: str, env: str | None, default: bool) -> bool:
        value, source = self.raw(flag, env)
        if value is None:
            return default
        try:
            return go_parse_bool(value.strip())
        except ValueError:
            if source.startswith("--"):
                raise ConfigError(f"invalid {source}={value!r}: use true or false") from None
            self.warnings.append(f"invalid {source}={value!r}, using default {default}")
            return default


def _check_dns1123(value: str, what: str) -> None:
    if not value or len(value) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(value):
        raise ConfigError(
            f"invalid {what} {value!r}: must be a lowercase RFC 1123 subdomain "
            "(a-z, 0-9, '-', '.', starting and ending alphanumeric)"
        )


def parse_options(argv: Sequence[str], environ: Mapping[str, str]) -> CollectorOptions:
    """Resolve flags (``argv`` without the program name) and env vars into options."""
    parser = _parser()
    try:
        flags, extra = parser.parse_known_args(_go_style(argv))
    except SystemExit as exc:  # argparse already printed its usage line
        raise ConfigError("invalid command line") from exc
    if extra:
        raise ConfigError(f"unknown arguments: {' '.join(extra)}")
    r = _Resolver(flags, environ)

    role = r.string("role", "RAY_ROLE", "Worker").strip()
    if role.lower() not in ("head", "worker"):
        raise ConfigError(f"invalid role {role!r}: must be Head or Worker")
    role = role.capitalize()

    enable_events = r.boolean("enable-event-collector", "ENABLE_EVENT_COLLECTOR", True)
    enable_logs = r.boolean("enable-log-collector", "ENABLE_LOG_COLLECTOR", True)
    if not enable_events and not enable_logs:
        raise ConfigError(
            "at least one of --enable-event-collector or --enable-log-collector must be enabled"
        )

    cluster_name = r.string("ray-cluster-name", "RAY_CLUSTER_NAME", "").strip()
    _check_dns1123(cluster_name, "ray-cluster-name")
    namespace = r.string("ray-cluster-namespace", "RAY_CLUSTER_NAMESPACE", "default").strip()
    _check_dns1123(namespace, "ray-cluster-namespace")
    owner_kind = r.string("owner-kind", "OWNER_KIND", "").strip().lower()
    owner_name = r.string("owner-name", "OWNER_NAME", "").strip()
    if bool(owner_kind) != bool(owner_name):
        raise ConfigError(
            "both --owner-name and --owner-kind must be provided together, or both omitted"
        )
    if owner_kind and owner_kind not in OWNER_KINDS:
        raise ConfigError(
            f"unsupported owner-kind {owner_kind!r}: supported kinds are 'rayjob' or 'rayservice'"
        )
    if owner_name:
        _check_dns1123(owner_name, "owner-name")

    backend = r.string("storage-backend", "STORAGE_BACKEND", "").strip().lower()
    if backend not in SUPPORTED_BACKENDS:
        raise ConfigError(
            f"unsupported storage backend {backend!r}: use one of {', '.join(SUPPORTED_BACKENDS)}"
        )
    root = r.string("storage-root-dir", "STORAGE_ROOT_DIR", "")
    try:
        normalize_root(root)
    except LayoutError as exc:
        raise ConfigError(str(exc)) from None

    port = int(r.tunable("events-port", "EVENTS_PORT", 8084, "port number"))
    if not 0 < port < 65536:
        raise ConfigError(f"invalid events port {port}: must be 1-65535")
    hosts_raw = r.string("events-host", "RAY_COLLECTOR_EVENTS_HOST", "127.0.0.1,::1")
    hosts = tuple(h.strip() for h in hosts_raw.split(",") if h.strip()) or ("127.0.0.1",)

    log_format = r.string("log-format", "RAY_COLLECTOR_LOG_FORMAT", "json")
    if log_format not in ("json", "console"):
        raise ConfigError(f"invalid log format {log_format!r}: use json or console")
    r.string("push-interval", "PUSH_INTERVAL", "1m")  # read but unused, as in KubeRay
    r.string("log-batching", "LOG_BATCHING", "1000")  # read but unused, as in KubeRay

    additional = tuple(
        ep.strip()
        for ep in environ.get("RAY_COLLECTOR_ADDITIONAL_ENDPOINTS", "").split(",")
        if ep.strip()
    )
    for ep in additional:
        if not ep.startswith("/"):
            raise ConfigError(
                f"invalid RAY_COLLECTOR_ADDITIONAL_ENDPOINTS entry {ep!r}: must start with /"
            )

    poll = r.tunable("", "RAY_COLLECTOR_POLL_INTERVAL", 30.0, "duration")
    if poll <= 0:
        r.warnings.append("RAY_COLLECTOR_POLL_INTERVAL must be positive, using default 30s")
        poll = 30.0

    rotation = r.tunable(
        "event-rotation-interval", "RAY_COLLECTOR_EVENT_ROTATION_INTERVAL", 300.0, "duration"
    )
    if rotation <= 0:
        rotation = 300.0

    return CollectorOptions(
        role=role,
        storage_backend=backend,
        cluster_name=cluster_name,
        cluster_namespace=namespace,
        storage_root_dir=root,
        owner_kind=owner_kind,
        owner_name=owner_name,
        events_port=port,
        events_hosts=hosts,
        dashboard_address=r.string(
            "ray-dashboard-address", "RAY_DASHBOARD_ADDRESS", DEFAULT_DASHBOARD_ADDRESS
        ).rstrip("/"),
        storage_backend_config_path=r.string(
            "storage-backend-config-path", "STORAGE_BACKEND_CONFIG_PATH", ""
        ),
        event_data_dir=r.string(
            "event-data-dir", "RAY_COLLECTOR_EVENT_DATA_DIR", "/tmp/ray/event-data"
        ),
        event_rotation_interval=rotation,
        event_max_file_size=int(
            r.tunable(
                "event-max-file-size-mb", "RAY_COLLECTOR_EVENT_MAX_FILE_SIZE_MB", 100, "size in MB"
            )
        )
        * MIB,
        event_max_disk=int(
            r.tunable("event-max-disk-mb", "RAY_COLLECTOR_EVENT_MAX_DISK_MB", 200, "size in MB")
        )
        * MIB,
        event_compression=r.boolean(
            "event-compression-enabled", "RAY_COLLECTOR_EVENT_COMPRESSION_ENABLED", False
        ),
        event_flush_interval=r.tunable(
            "event-flush-interval", "RAY_COLLECTOR_EVENT_FLUSH_INTERVAL", 10.0, "duration"
        ),
        enable_event_collector=enable_events,
        enable_log_collector=enable_logs,
        poll_interval=poll,
        additional_endpoints=additional,
        log_upload_interval=r.tunable(
            "log-upload-interval", "RAY_COLLECTOR_LOG_UPLOAD_INTERVAL", 10.0, "duration"
        ),
        log_upload_budget=int(
            r.tunable(
                "log-upload-budget-mb", "RAY_COLLECTOR_LOG_UPLOAD_BUDGET_MB", 64, "size in MB"
            )
        )
        * MIB,
        pod_ip=environ.get("POD_IP", ""),
        fq_ray_ip=environ.get("FQ_RAY_IP", ""),
        dashboard_port=environ.get("RAY_DASHBOARD_PORT", "") or "8265",
        tmp_root=environ.get("RAY_TMP_ROOT", "") or "/tmp/ray",
        auth=AuthSettings(
            mode=environ.get("RAY_AUTH_MODE", ""),
            token=environ.get("RAY_AUTH_TOKEN", "").strip(),
            k8s_token_auth=_env_bool(environ.get("RAY_ENABLE_K8S_TOKEN_AUTH", "")),
        ),
        log_format=log_format,
        warnings=tuple(r.warnings),
    )


def _env_bool(value: str) -> bool:
    try:
        return go_parse_bool(value.strip())
    except ValueError:
        return False


def _seconds(value: str) -> float:
    """A Go duration flag or env value (surrounding space ignored) in seconds."""
    return go_duration_seconds(value.strip())
