"""What every RayService reconcile shares: client, cache, events, the dashboard poller,
settings, clocks, and KubeRay's two in-memory maps (Serve configs sent per cluster, and
when each dangling RayCluster may be deleted)."""

from __future__ import annotations

import datetime as dt
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, Protocol, TypeVar

import attrs

from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.dashboard import DashboardClient
from kuberay.controllers.dashboard.poller import Observed
from kuberay.controllers.dashboard.target import DashboardTarget, ServeProxyTarget
from kuberay.controllers.rayservice.settle import HOLD_FLOOR_SECONDS
from kuberay.kube import Client
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Cache, EventRecorder
from kuberay.reconcile.clock import utc_now

ObjectKey = tuple[str, str]
T = TypeVar("T")

#: Poller owner keys of RayServices are ``(namespace, "RayService/<name>")``: the poller is
#: shared with the RayJob controller and a RayJob may have the same name.
OWNER_PREFIX = "RayService/"

#: KubeRay's ``ServiceDefaultRequeueDuration``.
REQUEUE_SECONDS = 2.0
#: KubeRay's Serve config LRU size.
SERVE_CONFIG_CACHE_SIZE = 1000


class ServeDashboard(Protocol):
    """The part of ``DashboardPoller`` the RayService controller uses (never awaits)."""

    on_result: Callable[[ObjectKey], None] | None

    def call(
        self,
        owner: ObjectKey,
        name: str,
        target: DashboardTarget | ServeProxyTarget,
        fn: Callable[[DashboardClient], Awaitable[T]],
        *,
        max_age: float,
        retry_failures: bool = False,
        invalidates: str | None = None,
        key: Hashable = None,
    ) -> Observed[T] | None: ...

    def forget(self, owner: ObjectKey, keep: Callable[[str], bool] | None = None) -> None: ...


@attrs.define
class RayServiceSettings:
    """Operator-level inputs. ``env`` gives ``ENABLE_ZERO_DOWNTIME``; ``serve_max_age``:
    how old a Serve status / proxy health answer may be before it is asked again;
    ``settle_hold_floor_seconds``: the least time an incremental upgrade's traffic step
    waits for the pending cluster's Serve to settle (see ``settle.hold_bound``)."""

    options: BuildOptions = attrs.field(factory=BuildOptions)
    features: Mapping[str, bool] = attrs.field(factory=dict)
    env: Mapping[str, str] = attrs.field(factory=dict)
    enable_metrics: bool = False
    requeue_seconds: float = REQUEUE_SECONDS
    serve_max_age: float = 2.0
    settle_hold_floor_seconds: float = HOLD_FLOOR_SECONDS

    def gate(self, name: str, default: bool) -> bool:
        """A feature gate's value (``default`` when not given)."""
        return bool(self.features.get(name, default))


@attrs.define
class ServeConfigCache:
    """KubeRay's ``ServeConfigs``: ``ns/name`` -> cluster -> the ``serveConfigV2`` last
    applied to it (LRU of 1000 RayServices)."""

    size: int = SERVE_CONFIG_CACHE_SIZE
    _entries: OrderedDict[str, dict[str, str]] = attrs.field(factory=OrderedDict)

    def get(self, key: str, cluster: str) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry.get(cluster)

    def put(self, key: str, cluster: str, config: str) -> None:
        if not config:
            return
        entry = self._entries.setdefault(key, {})
        entry[cluster] = config
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def keep_only(self, key: str, clusters: frozenset[str] | set[str]) -> None:
        """Drop the configs of clusters other than ``clusters`` (active/pending)."""
        entry = self._entries.get(key)
        if entry is not None:
            for name in [n for n in entry if n not in clusters]:
                del entry[name]

    def forget(self, key: str) -> None:
        self._entries.pop(key, None)


def owner_key(namespace: str, name: str) -> ObjectKey:
    """The dashboard poller's owner key for a RayService."""
    return (namespace, OWNER_PREFIX + name)


@attrs.define
class Ctx:
    """Per-controller dependencies (not per reconcile)."""

    client: Client
    cache: Cache
    recorder: EventRecorder
    settings: RayServiceSettings
    dashboard: ServeDashboard
    metrics: Any = None
    now: Callable[[], dt.datetime] = utc_now
    monotonic: Callable[[], float] = time.monotonic
    serve_configs: ServeConfigCache = attrs.field(factory=ServeConfigCache)
    #: cluster ``ns/name`` -> when it may be deleted (``now()`` clock).
    deletion_times: dict[str, dt.datetime] = attrs.field(factory=dict)

    def event(self, obj: Obj, etype: str, reason: str, message: str, action: str) -> None:
        """An Event regarding ``obj`` (the RayService)."""
        self.recorder.event(obj, etype, reason, message, action)

    def cached(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        """One cached object, or None."""
        if not name:
            return None
        return self.cache.get(api_version, kind, namespace, name)
