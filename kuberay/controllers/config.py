"""What the controllers take from the operator's configuration.

``kuberay.cmd`` reads KubeRay's flags and its ``config.ray.io/v1alpha1`` file and fills a
:class:`ControllerConfig`; the controllers' setup (:mod:`kuberay.controllers.setup`) reads only
this, so the controllers never import the command line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["ControllerConfig", "NodeEventFilter"]


@attrs.frozen
class NodeEventFilter:
    """Which Node Events the node event forwarder re-emits: an empty set allows every
    source (``source.component`` or ``reportingController``), reason or type."""

    sources: frozenset[str] = frozenset()
    reasons: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()


@attrs.frozen
class ControllerConfig:
    """The controllers' share of the operator's configuration; every default is KubeRay's.

    ``enable_metrics`` (False): export the ``kuberay_*`` metric families.
    ``use_kubernetes_proxy`` (False): reach Ray dashboards through the apiserver proxy.
    ``batch_scheduler`` (""): the batch scheduler plugin by name, "" for none.
    ``default_container_envs``, ``head_sidecar_containers``, ``worker_sidecar_containers``
    (empty): env vars and containers added to every Ray pod, as Kubernetes JSON.
    ``default_pod_annotations``, ``default_pod_labels`` (empty): added to every Ray pod.
    ``webhooks_served`` (False): the operator serves its webhooks (``ENABLE_WEBHOOKS=true``).
    ``node_event_forwarder`` (None: off): run the node event forwarder with this filter.
    """

    enable_metrics: bool = False
    use_kubernetes_proxy: bool = False
    batch_scheduler: str = ""
    default_container_envs: tuple[dict[str, Any], ...] = ()
    head_sidecar_containers: tuple[dict[str, Any], ...] = ()
    worker_sidecar_containers: tuple[dict[str, Any], ...] = ()
    default_pod_annotations: Mapping[str, str] = attrs.field(factory=dict)
    default_pod_labels: Mapping[str, str] = attrs.field(factory=dict)
    webhooks_served: bool = False
    node_event_forwarder: NodeEventFilter | None = None
