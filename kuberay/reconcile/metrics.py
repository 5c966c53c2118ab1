"""controller-runtime's controller and leader-election metrics, with its names, help,
labels and buckets (``pkg/internal/controller/metrics``, ``pkg/metrics/leaderelection.go``
of controller-runtime v0.24).

``controller`` is the controller's name: for a controller built ``For`` a kind,
the lowercased kind (``raycluster``), as controller-runtime's builder derives it.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Go's client_golang exposes no ``<counter>_created`` series: the operator's /metrics leaves
# them out per answer (``kuberay.reconcile.exposition``), no process-wide switch.

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile",
    "Total number of reconciliations per controller",
    ["controller", "result"],
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors",
    "Total number of reconciliation errors per controller",
    ["controller"],
)
TERMINAL_RECONCILE_ERRORS = Counter(
    "controller_runtime_terminal_reconcile_errors",
    "Total number of terminal reconciliation errors per controller",
    ["controller"],
)
RECONCILE_PANICS = Counter(
    "controller_runtime_reconcile_panics",
    "Total number of reconciliation panics per controller",
    ["controller"],
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller",
    ["controller"],
    buckets=(
        0.005,
        0.01,
        0.025,
        0.05,
        0.1,
        0.15,
        0.2,
        0.25,
        0.3,
        0.35,
        0.4,
        0.45,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
        1.0,
        1.25,
        1.5,
        1.75,
        2.0,
        2.5,
        3.0,
        3.5,
        4.0,
        4.5,
        5,
        6,
        7,
        8,
        9,
        10,
        15,
        20,
        25,
        30,
        40,
        50,
        60,
    ),
)
RECONCILE_TIMEOUTS = Counter(
    "controller_runtime_reconcile_timeouts",
    "Total number of reconciliation timeouts per controller",
    ["controller"],
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller",
    ["controller"],
)
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers",
    "Number of currently used workers per controller",
    ["controller"],
)
LEADER_ELECTION_STATUS = Gauge(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, "
    "1 indicates master. 'name' is the string used to identify the lease. "
    "Please make sure to group by name.",
    ["name"],
)


def init_controller_metrics(controller: str, workers: int) -> None:
    """Pre-create every series of ``controller`` at zero, as controller-runtime does."""
    for result in ("success", "error", "requeue", "requeue_after"):
        RECONCILE_TOTAL.labels(controller=controller, result=result)
    RECONCILE_ERRORS.labels(controller=controller)
    TERMINAL_RECONCILE_ERRORS.labels(controller=controller)
    RECONCILE_PANICS.labels(controller=controller)
    RECONCILE_TIMEOUTS.labels(controller=controller)
    MAX_CONCURRENT_RECONCILES.labels(controller=controller).set(workers)
    ACTIVE_WORKERS.labels(controller=controller).set(0)


# controller-runtime's certificate watcher (``pkg/certwatcher/metrics``): plain
# counters, registered whenever the manager package is linked in, so KubeRay's
# /metrics carries them (at 0) even with webhooks off.
CERT_READS = Counter(
    "certwatcher_read_certificate",
    "Total number of certificate reads",
)
CERT_READ_ERRORS = Counter(
    "certwatcher_read_certificate_errors",
    "Total number of certificate read errors",
)
