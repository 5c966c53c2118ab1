"""KubeRay's RayCluster metrics (registered only with ``--enable-metrics``).

* ``kuberay_cluster_provisioned_duration_seconds{name,namespace,uid}``: seconds from
  creation to the first time ``RayClusterProvisioned`` became True; the series is
  removed when the cluster is gone.
* ``kuberay_cluster_info{name,namespace,uid,owner_kind}`` = 1 and
  ``kuberay_cluster_condition_provisioned{name,namespace,uid,condition}`` = 1,
  computed at scrape time from the informer cache (no API calls).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Gauge
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER
from kuberay.controllers.raycluster import conditions as cond
from kuberay.gocompat.gotime import parse_rfc3339
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Cache


class _InfoCollector(Collector):
    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[GaugeMetricFamily]:
        info = GaugeMetricFamily(
            "kuberay_cluster_info",
            "Metadata information about RayCluster custom resources",
            labels=["name", "namespace", "uid", "owner_kind"],
        )
        provisioned = GaugeMetricFamily(
            "kuberay_cluster_condition_provisioned",
            "Indicates whether the RayCluster is provisioned",
            labels=["name", "namespace", "uid", "condition"],
        )
        try:
            clusters = self.cache.list(API_VERSION, KIND_RAYCLUSTER)
        except LookupError:
            clusters = []
        for rc in clusters:
            meta = k8s.meta(rc)
            labels = meta.get("labels") or {}
            owner = labels.get(C.RAY_ORIGINATED_FROM_CRD_LABEL_KEY) or "None"
            ident = [meta.get("name", ""), meta.get("namespace", ""), meta.get("uid", "")]
            info.add_metric([*ident, owner], 1)
            is_prov = cond.is_true(
                k8s.status(rc).get("conditions") or [], cond.RAY_CLUSTER_PROVISIONED
            )
            provisioned.add_metric([*ident, "true" if is_prov else "false"], 1)
        yield info
        yield provisioned


class RayClusterMetrics:
    """Owns the RayCluster metric series on ``registry``."""

    def __init__(self, cache: Cache, registry: CollectorRegistry) -> None:
        self.provisioned_duration = Gauge(
            "kuberay_cluster_provisioned_duration_seconds",
            "The time, in seconds, when a RayCluster's `RayClusterProvisioned` status "
            "transitions from false (or unset) to true",
            ["name", "namespace", "uid"],
            registry=registry,
        )
        registry.register(_InfoCollector(cache))

    def observe_provisioned(self, cluster: Obj, now: dt.datetime | None = None) -> None:
        """Record creation -> provisioned seconds for ``cluster``."""
        meta = k8s.meta(cluster)
        created = meta.get("creationTimestamp")
        if not created:
            return
        start = parse_rfc3339(created)
        seconds = ((now or dt.datetime.now(dt.UTC)) - start).total_seconds()
        self.provisioned_duration.labels(
            meta.get("name", ""), meta.get("namespace", ""), meta.get("uid", "")
        ).set(seconds)

    def forget(self, namespace: str, name: str) -> None:
        """Drop the series of a deleted cluster."""
        for labels in list(self.provisioned_duration._metrics):
            if labels[0] == name and labels[1] == namespace:
                self.provisioned_duration.remove(*labels)
