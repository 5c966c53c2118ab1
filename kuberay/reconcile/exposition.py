"""A registry's text exposition as controller-runtime's ``/metrics`` writes it.

Go's client_golang exposes no ``<counter>_created`` / ``<histogram>_created`` /
``<summary>_created`` series; prometheus-client adds them unless its process-wide
``disable_created_metrics()`` is called. :func:`go_exposition` leaves them out of one
answer instead, so a scrape carries exactly the series controller-runtime's would and no
library user's process is switched (their own exposition keeps its ``_created``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

import prometheus_client
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

__all__ = ["go_exposition"]

#: The metric types prometheus-client gives a ``<name>_created`` sample.
_WITH_CREATED = frozenset({"counter", "histogram", "summary"})


class _WithoutCreated(Collector):
    """``registry``'s families, their ``<name>_created`` samples left out."""

    def __init__(self, registry: prometheus_client.CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():
            if family.type in _WITH_CREATED:
                created = f"{family.name}_created"
                kept = [s for s in family.samples if s.name != created]
                if len(kept) != len(family.samples):
                    family = copy.copy(family)
                    family.samples = kept
            yield family


def go_exposition(registry: prometheus_client.CollectorRegistry) -> bytes:
    """The text format (``prometheus_client.CONTENT_TYPE_LATEST``) of ``registry`` without
    the ``_created`` series client_golang never writes."""
    return prometheus_client.generate_latest(_WithoutCreated(registry))
