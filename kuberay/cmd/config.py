"""The operator's configuration: KubeRay's flags and its ``config.ray.io/v1alpha1``
``Configuration`` file, resolved into one :class:`OperatorConfig`.

Rules (as KubeRay's ``main.go``): with ``--config FILE`` the file decides and the
other flags are ignored, except ``--feature-gates`` and the two log-encoder
flags, which are always read from the command line (so are ``--kubeconfig`` and
``--cache-sync-timeout``, which KubeRay's file has no field for). Anything wrong ends in a
:class:`ConfigError` whose message is one line naming the flag or field.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import attrs

from kuberay.controllers.config import ControllerConfig, NodeEventFilter
from kuberay.featuregates import FeatureGate, FeatureGateError, parse_bool
from kuberay.featuregates.kuberay_gates import UNIMPLEMENTED_GATES
from kuberay.gocompat.go_text import go_quote
from kuberay.gocompat.goutil import parse_go_duration
from kuberay.logkeys import KEY_FORMATS

CONFIG_API_VERSION = "config.ray.io/v1alpha1"
CONFIG_KIND = "Configuration"
BATCH_SCHEDULERS = ("volcano", "yunikorn", "kai-scheduler", "scheduler-plugins")
ENCODERS = ("json", "console")
LEADER_ELECTION_ID = "ray-operator-leader"
DEFAULT_RECONCILE_CONCURRENCY = 4
"""Workers per controller when neither flag nor config file says (KubeRay's default is 1; at
1000 RayClusters 4 reached ready 29% sooner with less CPU and the same writes: docs/benchmark.md).
The workqueue never gives one object to two workers at once."""


class ConfigError(ValueError):
    """Bad flag or configuration; the message is one line for the user."""


@attrs.define
class OperatorConfig:
    """Everything the operator process needs, with KubeRay's defaults."""

    metrics_addr: str = ":8080"
    probe_addr: str = ":8082"
    enable_leader_election: bool = True
    leader_election_namespace: str = ""
    reconcile_concurrency: int = DEFAULT_RECONCILE_CONCURRENCY
    watch_namespaces: list[str] = attrs.field(factory=list)
    log_file_path: str = ""
    log_file_encoder: str = "json"
    log_stdout_encoder: str = "json"
    log_level: str = "info"
    #: "controller-runtime" (KubeRay's zap keys) or "structlog" (this project's earlier keys)
    log_keys: str = "controller-runtime"
    #: rotation of the log file (KubeRay's lumberjack: 500 MB, 10 backups, 30 days)
    log_file_max_size_mb: float = 500.0
    log_file_max_backups: int = 10
    log_file_max_age_days: float = 30.0
    enable_batch_scheduler: bool = False
    batch_scheduler: str = ""
    use_kubernetes_proxy: bool = False
    enable_metrics: bool = False
    qps: float = 100.0
    burst: int = 200
    kubeconfig: str = ""
    feature_gates: str = ""
    #: Seconds each controller waits at start for its kinds to be served (a CRD applied
    #: together with the operator) and its caches to sync (controller-runtime's
    #: CacheSyncTimeout, 2 minutes); then the operator exits.
    cache_sync_timeout: float = 120.0
    head_sidecar_containers: list[dict[str, Any]] = attrs.field(factory=list)
    worker_sidecar_containers: list[dict[str, Any]] = attrs.field(factory=list)
    default_container_envs: list[dict[str, Any]] = attrs.field(factory=list)
    default_pod_annotations: dict[str, str] = attrs.field(factory=dict)
    default_pod_labels: dict[str, str] = attrs.field(factory=dict)
    delete_rayjob_after_job_finishes: bool = False
    #: Node label keys a worker group's labelRefs may deliver (KubeRay v1.8, NodeLabelDelivery).
    allowed_node_labels: list[str] = attrs.field(factory=list)
    #: The opt-in node event forwarder and its filters (empty: every source/reason/type).
    enable_node_event_forwarder: bool = False
    node_event_forwarder_sources: list[str] = attrs.field(factory=list)
    node_event_forwarder_reasons: list[str] = attrs.field(factory=list)
    node_event_forwarder_types: list[str] = attrs.field(factory=list)
    #: ``ENABLE_WEBHOOKS=true``: the operator serves its webhooks (read from the environment).
    webhooks_served: bool = False
    config_file: str = ""

    def controller_config(self) -> ControllerConfig:
        """The controllers' share of this configuration."""
        return ControllerConfig(
            enable_metrics=self.enable_metrics,
            use_kubernetes_proxy=self.use_kubernetes_proxy,
            batch_scheduler=self.batch_scheduler,
            default_container_envs=tuple(self.default_container_envs),
            head_sidecar_containers=tuple(self.head_sidecar_containers),
            worker_sidecar_containers=tuple(self.worker_sidecar_containers),
            default_pod_annotations=dict(self.default_pod_annotations),
            default_pod_labels=dict(self.default_pod_labels),
            webhooks_served=self.webhooks_served,
            node_event_forwarder=(
                NodeEventFilter(
                    sources=frozenset(self.node_event_forwarder_sources),
                    reasons=frozenset(self.node_event_forwarder_reasons),
                    types=frozenset(self.node_event_forwarder_types),
                )
                if self.enable_node_event_forwarder
                else None
            ),
        )


# --------------------------------------------------------------------- flags
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit code 2 (argparse's convention)
        raise ConfigError(message)


def _bool(text: str) -> bool:
    try:
        return parse_bool(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid boolean value {text!r}") from exc


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from exc
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from exc
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from exc


def _string_list(text: str) -> list[str]:
    """A comma-separated list (Go's ``flag`` string slices), blanks dropped."""
    return [item.strip() for item in text.split(",") if item.strip()]


def _duration(text: str) -> float:
    """A Go duration (``2m``, ``30s``, ``1m30s``) in seconds; not negative."""
    try:
        nanos = parse_go_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if nanos < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return nanos / 1e9


def build_parser() -> argparse.ArgumentParser:
    """The ``kuberay-operator`` flags (Go-style ``-flag`` and ``--flag`` both work)."""
    p = _Parser(prog="kuberay-operator", description="KubeRay-compatible Ray operator")

    def flag(name: str, **kw: Any) -> None:
        p.add_argument(f"--{name}", f"-{name}", **kw)

    def bool_flag(name: str, default: bool, help_text: str) -> None:
        flag(name, type=_bool, nargs="?", const=True, default=default, help=help_text)

    flag("metrics-addr", default=":8080", help="address the /metrics endpoint binds to")
    flag("health-probe-bind-address", default=":8082", help="address the probes bind to")
    bool_flag("enable-leader-election", True, "only one replica reconciles at a time")
    flag("leader-election-namespace", default="", help="namespace of the leader Lease")
    flag(
        "reconcile-concurrency",
        type=_positive_int,
        default=DEFAULT_RECONCILE_CONCURRENCY,
        help="workers per controller",
    )
    flag("watch-namespace", default="", help="comma-separated namespaces to watch (all if empty)")
    bool_flag("forced-cluster-upgrade", False, "deprecated; has no effect")
    flag("log-file-path", default="", help="also write logs to this file")
    flag("log-file-encoder", default="json", choices=ENCODERS, help="encoder of the log file")
    flag("log-stdout-encoder", default="json", choices=ENCODERS, help="encoder of stdout logs")
    flag(
        "log-keys",
        default="controller-runtime",
        choices=KEY_FORMATS,
        help="keys of log lines: controller-runtime's (ts, msg, reconcileID, as KubeRay) or "
        "structlog's (timestamp, event, reconcile_id)",
    )
    flag(
        "log-file-max-size",
        type=_non_negative_float,
        default=500.0,
        help="rotate the log file when it would exceed this many megabytes (0: never)",
    )
    flag(
        "log-file-max-backups",
        type=_int,
        default=10,
        help="rotated log files kept (0: all)",
    )
    flag(
        "log-file-max-age",
        type=_non_negative_float,
        default=30.0,
        help="days a rotated log file is kept (0: no limit)",
    )
    bool_flag("enable-batch-scheduler", False, "deprecated; same as --batch-scheduler=volcano")
    flag("batch-scheduler", default="", help=f"one of {', '.join(BATCH_SCHEDULERS)}")
    flag("config", default="", help="path to a config.ray.io/v1alpha1 Configuration file")
    bool_flag("use-kubernetes-proxy", False, "reach Ray dashboards through the apiserver proxy")
    flag("feature-gates", default="", help="comma-separated Name=true|false pairs")
    bool_flag("enable-metrics", False, "export the kuberay_* metrics")
    flag(
        "allowed-node-labels",
        type=_string_list,
        default=[],
        help="comma-separated node label keys a worker group's labelRefs may deliver "
        "(gate NodeLabelDelivery)",
    )
    bool_flag(
        "enable-node-event-forwarder",
        False,
        "re-emit Node Events onto the RayClusters with Pods on that Node",
    )
    for what, example in (("sources", "node-problem-detector"), ("reasons", "XIDError")):
        flag(
            f"node-event-forwarder-{what}",
            type=_string_list,
            default=[],
            help=f"forward only Node Events with these {what}, e.g. {example} (default: all)",
        )
    flag(
        "node-event-forwarder-types",
        type=_string_list,
        default=[],
        help="forward only Node Events of these types: Warning, Normal (default: both)",
    )
    flag("qps", type=_non_negative_float, default=100.0, help="client-side requests per second")
    flag("burst", type=_int, default=200, help="client-side burst")
    flag("kubeconfig", default="", help="kubeconfig file (default $KUBECONFIG, then in-cluster)")
    flag(
        "cache-sync-timeout",
        type=_duration,
        default=120.0,
        help="how long to wait at start for every watched kind to be served (its CRD "
        "installed) and its cache to sync, e.g. 2m (the default) or 30s; then exit",
    )
    bool_flag("zap-devel", False, "development logging (console encoder, debug level)")
    flag("zap-encoder", default="", choices=("", *ENCODERS), help="log encoder (zap compatible)")
    flag("zap-log-level", default="info", help="debug, info or error")
    flag("zap-stacktrace-level", default="error", help="accepted for compatibility")
    flag("zap-time-encoding", default="iso8601", help="accepted for compatibility")
    return p


# --------------------------------------------------------------------- file
_FILE_FIELDS: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "metricsAddr": ("metrics_addr", str),
    "probeAddr": ("probe_addr", str),
    "enableLeaderElection": ("enable_leader_election", bool),
    "leaderElectionNamespace": ("leader_election_namespace", str),
    "reconcileConcurrency": ("reconcile_concurrency", int),
    "watchNamespace": ("watch_namespaces", str),
    "logFile": ("log_file_path", str),
    "logFileEncoder": ("log_file_encoder", str),
    "logStdoutEncoder": ("log_stdout_encoder", str),
    "enableBatchScheduler": ("enable_batch_scheduler", bool),
    "batchScheduler": ("batch_scheduler", str),
    "useKubernetesProxy": ("use_kubernetes_proxy", bool),
    "enableMetrics": ("enable_metrics", bool),
    "qps": ("qps", (int, float)),
    "burst": ("burst", int),
    "headSidecarContainers": ("head_sidecar_containers", list),
    "workerSidecarContainers": ("worker_sidecar_containers", list),
    "defaultContainerEnvs": ("default_container_envs", list),
    "defaultPodAnnotations": ("default_pod_annotations", dict),
    "defaultPodLabels": ("default_pod_labels", dict),
    "deleteRayJobAfterJobFinishes": ("delete_rayjob_after_job_finishes", bool),
    "allowedNodeLabels": ("allowed_node_labels", list),
    "enableNodeEventForwarder": ("enable_node_event_forwarder", bool),
    "nodeEventForwarderSources": ("node_event_forwarder_sources", list),
    "nodeEventForwarderReasons": ("node_event_forwarder_reasons", list),
    "nodeEventForwarderTypes": ("node_event_forwarder_types", list),
}
#: Fields holding a list of strings.
_STRING_LISTS = (
    "allowedNodeLabels",
    "nodeEventForwarderSources",
    "nodeEventForwarderReasons",
    "nodeEventForwarderTypes",
)


def load_config_file(path: str) -> tuple[OperatorConfig, list[str]]:
    """Read a Configuration file; returns the config and warnings (unknown fields)."""
    import yaml  # only with --config (in-cluster without it, the operator never parses YAML)

    try:
        raw = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"--config {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"--config {path}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"--config {path}: expected a {CONFIG_KIND} object")
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    if api_version not in (None, CONFIG_API_VERSION) or kind not in (None, CONFIG_KIND):
        raise ConfigError(
            f"--config {path}: expected apiVersion {CONFIG_API_VERSION} kind {CONFIG_KIND}, "
            f"got {api_version} {kind}"
        )
    cfg = OperatorConfig(config_file=path)
    warnings: list[str] = []
    for key, value in raw.items():
        if key in ("apiVersion", "kind", "metadata"):
            continue
        if key not in _FILE_FIELDS:
            warnings.append(f"--config {path}: unknown field {key!r} ignored")
            continue
        attr, want = _FILE_FIELDS[key]
        if value is None:
            continue
        ok = isinstance(value, want) and not (
            want in (int, (int, float)) and isinstance(value, bool)
        )
        if not ok:
            names = want.__name__ if isinstance(want, type) else "number"
            raise ConfigError(f"--config {path}: field {key} must be a {names}, got {value!r}")
        if key in _STRING_LISTS and not all(isinstance(item, str) for item in value):
            raise ConfigError(f"--config {path}: field {key} must be a list of strings")
        if key == "watchNamespace":
            value = _split_namespaces(value)
        if key == "qps":
            value = float(value)
        setattr(cfg, attr, value)
    return cfg, warnings


def _split_namespaces(text: str) -> list[str]:
    return [ns.strip() for ns in text.split(",") if ns.strip()]


def refuse_unimplemented(cfg: OperatorConfig, gates: FeatureGate) -> None:
    """Raise :class:`ConfigError` when a gate or flag asks for a part this build lacks.

    Accepting them in silence would half-apply them; KubeRay users get a one-line
    error naming the gate or flag instead, and the operator does not start.
    """
    on = [name for name in UNIMPLEMENTED_GATES if gates.enabled(name)]
    if on:
        detail = "; ".join(f"{name}: {UNIMPLEMENTED_GATES[name]}" for name in on)
        raise ConfigError(
            f"--feature-gates: {', '.join(f'{n}=true' for n in on)} not supported by this "
            f"build yet ({detail}); leave the gate off"
        )
    from kuberay.controllers.batchscheduler.registry import SCHEDULERS  # a heavy import

    if cfg.batch_scheduler and cfg.batch_scheduler not in SCHEDULERS:
        flag = "--enable-batch-scheduler" if cfg.enable_batch_scheduler else "--batch-scheduler"
        raise ConfigError(
            f"{flag}: batch scheduler {cfg.batch_scheduler!r} is not supported by this build "
            f"yet (pods would be created without its scheduling metadata; supported: "
            f"{', '.join(sorted(SCHEDULERS))}); remove the flag"
        )


# --------------------------------------------------------------------- resolve
def parse_config(argv: list[str], gates: FeatureGate) -> tuple[OperatorConfig, list[str]]:
    """Flags (and the config file they name) -> validated config; gates are set in place.

    Returns the config and any warnings to log once logging is configured.
    """
    args = build_parser().parse_args(argv)
    warnings: list[str] = []
    if args.config:
        cfg, warnings = load_config_file(args.config)
    else:
        cfg = OperatorConfig(
            metrics_addr=args.metrics_addr,
            probe_addr=args.health_probe_bind_address,
            enable_leader_election=args.enable_leader_election,
            leader_election_namespace=args.leader_election_namespace,
            reconcile_concurrency=args.reconcile_concurrency,
            watch_namespaces=_split_namespaces(args.watch_namespace),
            log_file_path=args.log_file_path,
            enable_batch_scheduler=args.enable_batch_scheduler,
            batch_scheduler=args.batch_scheduler,
            use_kubernetes_proxy=args.use_kubernetes_proxy,
            enable_metrics=args.enable_metrics,
            qps=args.qps,
            burst=args.burst,
            allowed_node_labels=args.allowed_node_labels,
            enable_node_event_forwarder=args.enable_node_event_forwarder,
            node_event_forwarder_sources=args.node_event_forwarder_sources,
            node_event_forwarder_reasons=args.node_event_forwarder_reasons,
            node_event_forwarder_types=args.node_event_forwarder_types,
        )
        if args.forced_cluster_upgrade:
            warnings.append("--forced-cluster-upgrade is deprecated and has no effect")
    # Always from the command line, even with --config.
    cfg.log_stdout_encoder = args.zap_encoder or args.log_stdout_encoder
    cfg.log_file_encoder = args.log_file_encoder
    cfg.log_keys = args.log_keys
    cfg.log_file_max_size_mb = args.log_file_max_size
    cfg.log_file_max_backups = max(0, args.log_file_max_backups)
    cfg.log_file_max_age_days = args.log_file_max_age
    cfg.kubeconfig = args.kubeconfig
    cfg.cache_sync_timeout = args.cache_sync_timeout
    cfg.feature_gates = args.feature_gates
    cfg.log_level = "debug" if args.zap_devel else args.zap_log_level
    if args.zap_devel and not args.zap_encoder:
        cfg.log_stdout_encoder = "console"
    try:
        gates.set_from_string(args.feature_gates)
    except FeatureGateError as exc:
        raise ConfigError(f"--feature-gates: {exc}") from exc
    validate(cfg, gates)
    return cfg, warnings


def validate(cfg: OperatorConfig, gates: FeatureGate) -> None:
    """Cross-field checks, as KubeRay's ``ValidateBatchSchedulerConfig`` and friends."""
    for name, value in (
        ("log-stdout-encoder", cfg.log_stdout_encoder),
        ("log-file-encoder", cfg.log_file_encoder),
    ):
        if value not in ENCODERS:
            raise ConfigError(f"--{name}: must be json or console, got {value!r}")
    if cfg.log_level.lower() not in ("debug", "info", "warn", "warning", "error"):
        raise ConfigError(f"--zap-log-level: unknown level {cfg.log_level!r}")
    if cfg.reconcile_concurrency < 1:
        raise ConfigError(
            f"reconcileConcurrency must be at least 1, got {cfg.reconcile_concurrency}"
        )
    if cfg.qps < 0 or cfg.burst < 0:
        raise ConfigError("qps and burst must not be negative")
    for event_type in cfg.node_event_forwarder_types:
        if event_type not in ("Normal", "Warning"):
            raise ConfigError(
                f"--node-event-forwarder-types: invalid event type {go_quote(event_type)}: "
                'must be one of "Normal", "Warning"'
            )
    batch_requested = cfg.enable_batch_scheduler or bool(cfg.batch_scheduler)
    if gates.enabled("KubernetesWAS") and batch_requested:
        raise ConfigError(
            "the KubernetesWAS feature gate cannot be combined with a batch scheduler "
            "(--batch-scheduler / --enable-batch-scheduler)"
        )
    if cfg.enable_batch_scheduler and cfg.batch_scheduler:
        raise ConfigError(
            "do not use both --enable-batch-scheduler (deprecated) and --batch-scheduler"
        )
    if cfg.batch_scheduler and cfg.batch_scheduler not in BATCH_SCHEDULERS:
        raise ConfigError(
            f"--batch-scheduler: unknown scheduler {cfg.batch_scheduler!r}; "
            f"choose one of {', '.join(BATCH_SCHEDULERS)}"
        )
    if cfg.enable_batch_scheduler:
        cfg.batch_scheduler = "volcano"
