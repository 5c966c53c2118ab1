"""The operator's metric families with their types, labels and help, read from the metric
definitions themselves (``hack/docs/gen_docs.py``): each group is registered on a fresh registry
(or, for the module-level families, found in its module) and read back."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase


@dataclass(frozen=True)
class Family:
    """One metric family as a scrape shows it."""

    name: str
    kind: str
    labels: tuple[str, ...]
    help: str


@dataclass(frozen=True)
class Group:
    """Families that come and go together, and when /metrics carries them."""

    title: str
    when: str
    source: str
    families: tuple[Family, ...]


class _NoCache:
    """A cache holding nothing (the scrape-time collectors read RayClusters etc. from it)."""

    def list(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return []


def _exposed_name(metric: MetricWrapperBase) -> str:
    name = str(metric._name)
    return f"{name}_total" if metric._type == "counter" else name


def _from_wrapper(metric: MetricWrapperBase) -> Family:
    return Family(
        _exposed_name(metric),
        str(metric._type),
        tuple(metric._labelnames),
        str(metric._documentation),
    )


def _from_registry(registry: CollectorRegistry) -> tuple[Family, ...]:
    out: list[Family] = []
    for collector in list(registry._collector_to_names):
        if isinstance(collector, MetricWrapperBase):
            out.append(_from_wrapper(collector))
            continue
        for fam in collector.collect():
            labels = tuple(getattr(fam, "_labelnames", ()))
            out.append(Family(fam.name, fam.type, labels, fam.documentation))
    return tuple(sorted(out, key=lambda f: f.name))


def _from_module(module: ModuleType) -> tuple[Family, ...]:
    found = {
        id(v): _from_wrapper(v) for v in vars(module).values() if isinstance(v, MetricWrapperBase)
    }
    return tuple(sorted(found.values(), key=lambda f: f.name))


def _registered(register: Callable[[CollectorRegistry], object]) -> tuple[Family, ...]:
    registry = CollectorRegistry()
    register(registry)
    return _from_registry(registry)


def groups() -> list[Group]:
    """Every metric group of the operator, in the order the reference page shows them."""
    from kuberay.controllers.raycluster.metrics import RayClusterMetrics
    from kuberay.controllers.rayjob.metrics import RayJobMetrics
    from kuberay.controllers.rayservice.metrics import RayServiceMetrics
    from kuberay.webhooks.metrics import WebhookMetrics
    from kuberay.workqueue.metrics import register_metrics

    cache: Any = _NoCache()

    def kuberay_metrics(registry: CollectorRegistry) -> None:
        RayClusterMetrics(cache, registry)
        RayJobMetrics(cache, registry)
        RayServiceMetrics(cache, registry)

    return [
        Group(
            "KubeRay's own",
            "with `--enable-metrics` (config file: `enableMetrics`)",
            "kuberay/controllers/{raycluster,rayjob,rayservice}/metrics.py",
            _registered(kuberay_metrics),
        ),
        Group(
            "controller-runtime: controllers and leader election",
            "always",
            "kuberay/reconcile/metrics.py",
            _from_module(importlib.import_module("kuberay.reconcile.metrics")),
        ),
        Group(
            "workqueue",
            "always (one series set per controller, label `name`)",
            "kuberay/workqueue/metrics.py",
            _registered(register_metrics),
        ),
        Group(
            "REST client",
            "always",
            "kuberay/kube/metrics.py",
            _from_module(importlib.import_module("kuberay.kube.metrics")),
        ),
        Group(
            "admission webhooks",
            "when the webhook server runs (`ENABLE_WEBHOOKS=true`)",
            "kuberay/webhooks/metrics.py",
            _registered(WebhookMetrics),
        ),
    ]


def table(families: Iterable[Family]) -> list[str]:
    """A Markdown table of ``families``."""
    lines = ["| name | type | labels | help |", "| --- | --- | --- | --- |"]
    for fam in families:
        labels = ", ".join(f"`{label}`" for label in fam.labels) or "-"
        text = " ".join(fam.help.split()).replace("|", "\\|")
        lines.append(f"| `{fam.name}` | {fam.kind} | {labels} | {text} |")
    return lines
