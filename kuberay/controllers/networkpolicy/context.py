"""What every NetworkPolicy reconcile step shares: the client, the cache and the Event
recorder."""

from __future__ import annotations

import attrs

from kuberay.api.v1.constants import RAY_CLUSTER_LABEL_KEY
from kuberay.kube import Client
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Cache, EventRecorder

#: Index of cached NetworkPolicies by ``<namespace>/<ray.io/cluster label>``.
CLUSTER_INDEX = RAY_CLUSTER_LABEL_KEY


@attrs.define
class Ctx:
    """Per-controller dependencies (not per reconcile)."""

    client: Client
    cache: Cache
    recorder: EventRecorder

    def event(self, cluster: Obj, etype: str, reason: str, message: str, action: str) -> None:
        """An Event regarding ``cluster``."""
        self.recorder.event(cluster, etype, reason, message, action)
