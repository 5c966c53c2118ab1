"""The node event forwarder's reconcile (KubeRay v1.8 ``EventForwarderReconciler``, #4978).

One pass per Node Event (``v1`` Event, ``involvedObject.kind=Node``, cached in the namespaces
Node Events are written to): when it passes the filter, happened after this replica started
leading, and is a new occurrence (another uid, or a higher count than the one last
forwarded), every RayCluster with a Ray pod on that Node (the cached pods' ``spec.nodeName``
index) gets one Event: the source's type, reason ``<reason>/<source>``, action ``Forward``,
note ``Node event observed on Node ...``, related object the Node, reported by
``kuberay-node-event-forwarder``. The occurrence is remembered even when no RayCluster was
on the Node, so a pod scheduled there later does not receive an old fault; a deleted source
Event is forgotten. Reads come from the cache only; the one write is the Event.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any, Final

import attrs
import structlog

from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER, RAY_CLUSTER_LABEL_KEY
from kuberay.controllers.config import NodeEventFilter
from kuberay.controllers.nodeevents.forward import (
    forwardable,
    forwarded_note,
    forwarded_reason,
    last_observed,
    occurrences,
)
from kuberay.kube import objects as k8s
from kuberay.reconcile import Cache, EventRecorder, Request, Result

__all__ = ["ACTION", "NODE_NAME_INDEX", "NodeEventForwarder", "pod_node_name"]

log = structlog.get_logger("kuberay.nodeevents")

#: The cached pods' index by ``spec.nodeName``.
NODE_NAME_INDEX: Final = "spec.nodeName"
ACTION: Final = "Forward"
#: How soon an Event seen before leadership was recorded is looked at again.
LEADERSHIP_WAIT: Final = 0.1


def pod_node_name(pod: Any) -> list[str]:
    """Index function: the Node a pod is bound to."""
    name = (pod.get("spec") or {}).get("nodeName")
    return [name] if isinstance(name, str) and name else []


@attrs.define
class NodeEventForwarder:
    """Reconciles ``v1`` Events (see the module doc). ``started_at`` is set by
    :meth:`lead` when this replica starts leading."""

    cache: Cache
    recorder: EventRecorder
    only: NodeEventFilter
    started_at: dt.datetime | None = None
    #: per source Event ``namespace/name``: (uid, count) last forwarded
    forwarded: dict[str, tuple[str, int]] = attrs.field(factory=dict)

    async def lead(self) -> None:
        """The leader-only runnable: record when leadership began (whole seconds, as Event
        timestamps have), then idle until stopped."""
        self.started_at = dt.datetime.now(dt.UTC).replace(microsecond=0)
        await asyncio.Event().wait()

    def _is_new(self, key: str, uid: str, count: int) -> bool:
        last = self.forwarded.get(key)
        return last is None or last[0] != uid or count > last[1]

    async def reconcile(self, request: Request) -> Result:
        """Forward one Node Event (module doc)."""
        key = f"{request.namespace}/{request.name}"
        event = self.cache.get("v1", "Event", request.namespace, request.name)
        if event is None:
            self.forwarded.pop(key, None)
            return Result()
        if not forwardable(event, self.only):
            return Result()
        if self.started_at is None:
            return Result(requeue_after=LEADERSHIP_WAIT)
        seen = last_observed(event)
        if seen is None or seen < self.started_at:
            return Result()
        uid, count = str(k8s.meta(event).get("uid") or ""), occurrences(event)
        if not self._is_new(key, uid, count):
            return Result()
        involved = event.get("involvedObject") or {}
        node = str(involved.get("name") or "")
        clusters: set[tuple[str, str]] = set()
        for pod in self.cache.list("v1", "Pod", index=(NODE_NAME_INDEX, node)):
            meta = k8s.meta(pod)
            name = (meta.get("labels") or {}).get(RAY_CLUSTER_LABEL_KEY)
            if name:
                clusters.add((str(meta.get("namespace")), str(name)))
        node_meta = {"name": node, **({"uid": involved["uid"]} if involved.get("uid") else {})}
        related = {"apiVersion": "v1", "kind": "Node", "metadata": node_meta}
        reason, note = forwarded_reason(event), forwarded_note(node, event)
        for namespace, name in sorted(clusters):
            cluster = self.cache.get(API_VERSION, KIND_RAYCLUSTER, namespace, name)
            if cluster is None:
                continue
            etype = str(event.get("type") or "")
            self.recorder.event(cluster, etype, reason, note, ACTION, related=related)
            log.debug("forwarded node event", node=node, cluster=f"{namespace}/{name}")
        self.forwarded[key] = (uid, count)
        return Result()
