"""KubeRay's RayService metrics (registered only with ``--enable-metrics``), computed at scrape
time from the informer cache (no API calls):

* ``kuberay_service_info{name,namespace,uid}`` = 1;
* ``kuberay_service_condition_ready{name,namespace,uid,condition}`` = 1, ``condition`` =
  ``true``/``false`` (the Ready condition);
* ``kuberay_service_condition_upgrade_in_progress{name,namespace,uid,condition}`` = 1.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kuberay.api.v1.constants import API_VERSION, KIND_RAYSERVICE
from kuberay.controllers.raycluster import conditions as cond
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Cache


class _ServiceCollector(Collector):
    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[GaugeMetricFamily]:
        labels = ["name", "namespace", "uid"]
        info = GaugeMetricFamily(
            "kuberay_service_info",
            "Metadata information about RayService custom resources",
            labels=labels,
        )
        ready = GaugeMetricFamily(
            "kuberay_service_condition_ready",
            "Describes whether the RayService is ready",
            labels=[*labels, "condition"],
        )
        upgrading = GaugeMetricFamily(
            "kuberay_service_condition_upgrade_in_progress",
            "Describes whether the RayService is performing a zero-downtime upgrade",
            labels=[*labels, "condition"],
        )
        try:
            services = self.cache.list(API_VERSION, KIND_RAYSERVICE)
        except LookupError:
            services = []
        for rs in services:
            meta = k8s.meta(rs)
            ident = [meta.get("name", ""), meta.get("namespace", ""), meta.get("uid", "")]
            conds = k8s.status(rs).get("conditions") or []
            info.add_metric(ident, 1)
            ready.add_metric([*ident, str(cond.is_true(conds, "Ready")).lower()], 1)
            upgrading.add_metric([*ident, str(cond.is_true(conds, "UpgradeInProgress")).lower()], 1)
        yield info
        yield ready
        yield upgrading


class RayServiceMetrics:
    """Registers the collector; ``observe``/``forget`` exist for the reconciler's calls."""

    def __init__(self, cache: Cache, registry: CollectorRegistry) -> None:
        registry.register(_ServiceCollector(cache))

    def observe(self, rs: Obj) -> None:
        """Nothing to record: the series are computed from the cache at scrape time."""

    def forget(self, namespace: str, name: str) -> None:
        """Nothing to drop (a deleted RayService leaves the cache, so its series vanish)."""
