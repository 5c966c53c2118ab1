"""The node event forwarder (KubeRay v1.8, opt-in): Node Events re-emitted onto the
RayClusters with Ray pods on that Node."""

from kuberay.controllers.nodeevents.reconciler import NodeEventForwarder
from kuberay.controllers.nodeevents.setup import (
    CONTROLLER_NAME,
    EVENT_COMPONENT,
    setup_node_event_forwarder,
)

__all__ = ["CONTROLLER_NAME", "EVENT_COMPONENT", "NodeEventForwarder", "setup_node_event_forwarder"]
