"""Options of a :class:`~kuberay.reconcile.Manager` and of its controllers (controller-runtime's
``manager.Options`` and ``controller.Options``), as frozen values with their defaults stated.

Build them with keyword arguments and derive variants with :func:`attrs.evolve`::

    options = ManagerOptions(namespaces=("team-a",), controller=ControllerOptions(
        max_concurrent_reconciles=4))
    manager = Manager(client, options)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from kuberay.reconcile.cache import GVK, ByObject

__all__ = ["ControllerOptions", "ManagerOptions"]


def _tuple_or_none(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen(kw_only=True)
class ControllerOptions:
    """How one controller runs; a manager's are the default of every controller it builds.

    * ``max_concurrent_reconciles`` (default ``1``): reconciles of different objects run at
      once (never two of the same object).
    * ``cache_sync_timeout`` (default ``120.0`` s): how long the controller waits for its
      kinds to be served and its caches to sync before the manager's ``run`` raises
      :class:`~kuberay.reconcile.controller.CacheSyncTimeout`.
    * ``rate_limiter`` (default ``None``: the default controller rate limiter, per-item
      5 ms..1000 s exponential, max'ed with 10 qps / burst 100): the work queue's limiter.
    """

    max_concurrent_reconciles: int = 1
    cache_sync_timeout: float = 120.0
    rate_limiter: Any = None


@attrs.frozen(kw_only=True)
class ManagerOptions:
    """What a :class:`~kuberay.reconcile.Manager` watches, serves and how it elects a leader.

    * ``namespaces`` (default ``None``: all namespaces): the namespaces the cache watches.
    * ``by_object`` (default ``None``: no per-kind scoping): label/field selectors by kind.
    * ``leader_election`` (default ``False``); ``leader_election_id`` (default ``""``,
      required when leader election is on): the Lease's name; ``leader_election_namespace``
      (default ``None``: the pod's own namespace).
    * ``lease_duration`` / ``renew_deadline`` / ``retry_period`` (defaults ``15.0`` /
      ``10.0`` / ``2.0`` s): the Lease timings, as controller-runtime's.
    * ``metrics_bind_address`` (default ``":8080"``) and ``health_probe_bind_address``
      (default ``":8081"``): where ``/metrics`` and ``/healthz`` + ``/readyz`` are served;
      ``"0"`` disables either.
    * ``controller`` (default ``ControllerOptions()``): the options of every controller built
      with :meth:`~kuberay.reconcile.Manager.controller` unless it sets its own.
    * ``graceful_shutdown_timeout`` (default ``30.0`` s): how long in-flight reconciles may
      finish on a graceful stop.
    * ``resync_period`` (default ``0.0``: none): informer resync period.
    * ``handle_signals`` (default ``True``): SIGTERM/SIGINT stop :meth:`run` gracefully.
    """

    namespaces: tuple[str, ...] | None = attrs.field(default=None, converter=_tuple_or_none)
    by_object: Mapping[GVK, ByObject] | None = None
    leader_election: bool = False
    leader_election_id: str = ""
    leader_election_namespace: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    metrics_bind_address: str = ":8080"
    health_probe_bind_address: str = ":8081"
    controller: ControllerOptions = ControllerOptions()
    graceful_shutdown_timeout: float = 30.0
    resync_period: float = 0.0
    handle_signals: bool = True
