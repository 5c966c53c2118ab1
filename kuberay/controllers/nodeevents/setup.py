"""Wiring of the opt-in node event forwarder into a Manager (``--enable-node-event-forwarder``)."""

from __future__ import annotations

from typing import Final

from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER
from kuberay.controllers.config import NodeEventFilter
from kuberay.controllers.nodeevents.forward import forwardable
from kuberay.controllers.nodeevents.reconciler import (
    NODE_NAME_INDEX,
    NodeEventForwarder,
    pod_node_name,
)
from kuberay.reconcile import ByObject, Controller, Manager
from kuberay.reconcile.predicates import predicate_funcs

__all__ = ["CONTROLLER_NAME", "EVENT_COMPONENT", "NODE_EVENT_SCOPE", "setup_node_event_forwarder"]

#: KubeRay's ``Named("node-event-forwarder")`` and its recorder's name.
CONTROLLER_NAME: Final = "node-event-forwarder"
EVENT_COMPONENT: Final = "kuberay-node-event-forwarder"
#: Only Events about Nodes are cached, from the namespaces Node Events are written to
#: (``default``; ``kube-system`` for some agents), where KubeRay grants the read.
NODE_EVENT_SCOPE: Final = ByObject(
    field_selector="involvedObject.kind=Node", namespaces=("default", "kube-system")
)


def setup_node_event_forwarder(mgr: Manager, only: NodeEventFilter) -> Controller:
    """Register the forwarder: For(v1 Event) filtered by ``only``, the cached pods indexed
    by ``spec.nodeName``, and a leader-only runnable recording when leadership began."""
    mgr.cache.by_object.setdefault(("v1", "Event"), NODE_EVENT_SCOPE)
    mgr.cache.add_index("v1", "Pod", NODE_NAME_INDEX, pod_node_name)
    forwarder = NodeEventForwarder(mgr.cache, mgr.event_recorder(EVENT_COMPONENT), only)
    mgr.add_runnable(forwarder.lead)
    builder = (
        mgr.controller(CONTROLLER_NAME)
        .for_("v1", "Event", predicates=[predicate_funcs(lambda e: forwardable(e, only))])
        # pods and RayClusters are read from the cache: make sure it holds them
        .watches("v1", "Pod", lambda _pod: ())
        .watches(API_VERSION, KIND_RAYCLUSTER, lambda _cluster: ())
    )
    return builder.complete(forwarder)
