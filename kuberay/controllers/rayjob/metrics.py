"""KubeRay's RayJob metrics (registered only with ``--enable-metrics``).

* ``kuberay_job_execution_duration_seconds{name,namespace,uid,job_deployment_status,
  retry_count}``: set when a RayJob goes from a non-terminal deployment status to
  Complete, Failed or Retrying: seconds since ``status.startTime``; ``retry_count`` is
  the ``failed`` count before that pass. Removed when the RayJob is gone.
* ``kuberay_job_info{name,namespace,uid}`` = 1 and
  ``kuberay_job_deployment_status{name,namespace,uid,deployment_status}`` = 1,
  computed at scrape time from the informer cache (no API calls).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Gauge
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kuberay.api.v1.constants import API_VERSION, KIND_RAYJOB
from kuberay.controllers.rayjob import status as S
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Cache
from kuberay.reconcile.clock import parse_time


class _InfoCollector(Collector):
    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[GaugeMetricFamily]:
        info = GaugeMetricFamily(
            "kuberay_job_info",
            "Metadata information about RayJob custom resources",
            labels=["name", "namespace", "uid"],
        )
        deployment = GaugeMetricFamily(
            "kuberay_job_deployment_status",
            "The RayJob's current deployment status",
            labels=["name", "namespace", "uid", "deployment_status"],
        )
        try:
            jobs = self.cache.list(API_VERSION, KIND_RAYJOB)
        except LookupError:
            jobs = []
        for job in jobs:
            meta = k8s.meta(job)
            ident = [meta.get("name", ""), meta.get("namespace", ""), meta.get("uid", "")]
            info.add_metric(ident, 1)
            state = k8s.status(job).get("jobDeploymentStatus") or ""
            deployment.add_metric([*ident, state], 1)
        yield info
        yield deployment


class RayJobMetrics:
    """Owns the RayJob metric series on ``registry``."""

    def __init__(self, cache: Cache, registry: CollectorRegistry) -> None:
        self.execution_duration = Gauge(
            "kuberay_job_execution_duration_seconds",
            "Duration from when the RayJob CR's JobDeploymentStatus transitions from "
            "Initializing to either the Retrying state or a terminal state, such as Complete "
            "or Failed. The Retrying state indicates that the CR previously failed and that "
            "spec.backoffLimit is enabled.",
            ["name", "namespace", "uid", "job_deployment_status", "retry_count"],
            registry=registry,
        )
        registry.register(_InfoCollector(cache))

    def observe_transition(self, job: Obj, old: Obj, new: Obj, now: dt.datetime) -> None:
        """Record the execution duration if this pass ended (or retried) the RayJob."""
        was = old.get("jobDeploymentStatus") or ""
        now_state = new.get("jobDeploymentStatus") or ""
        if S.is_job_deployment_terminal(was):
            return
        if not (S.is_job_deployment_terminal(now_state) or now_state == S.RETRYING):
            return
        start = parse_time(new.get("startTime"))
        if start is None:
            return
        meta = k8s.meta(job)
        self.execution_duration.labels(
            meta.get("name", ""),
            meta.get("namespace", ""),
            meta.get("uid", ""),
            now_state,
            str(int(old.get("failed") or 0)),
        ).set((now - start).total_seconds())

    def forget(self, namespace: str, name: str) -> None:
        """Drop the series of a deleted RayJob."""
        for labels in list(self.execution_duration._metrics):
            if labels[0] == name and labels[1] == namespace:
                self.execution_duration.remove(*labels)
