"""Dashboard exposure: networking/v1 Ingress (``headGroupSpec.enableIngress``) or OpenShift Route.

Ingress ``CheckName(<cluster>-head-ingress)``: labels ``ray.io/cluster``, ``ray.io/identifier``,
``app.kubernetes.io/name``, ``app.kubernetes.io/created-by``; annotations = all cluster
annotations except ``kubernetes.io/ingress.class``, whose value becomes
``spec.ingressClassName``; one rule (host from ``ingressOptions.host``) with one path
(``ingressOptions.path`` or ``/``, ``pathType`` or ``Prefix``) to the head Service's
``dashboard`` port (default 8265); ``ingressOptions.tls`` copied.

On OpenShift (unless ``USE_INGRESS_ON_OPENSHIFT``) KubeRay creates a Route instead: same
labels, *all* cluster annotations, ``to: Service <head svc> weight 100``, ``port.targetPort`` =
dashboard port, ``wildcardPolicy: None``.

:func:`ingress_needs_update` reproduces the drift check KubeRay runs on an existing Ingress it
controls.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.api.v1.rules import ingress_path, ingress_path_type
from kuberay.controllers.common.objects import as_list, as_map, as_str, metadata, spec, str_map

from .names import check_label, generate_identifier, head_service_name, ingress_name, route_name
from .owner import controller_owner_reference
from .service import head_service_ports

__all__ = [
    "build_head_ingress",
    "build_head_route",
    "ingress_enabled",
    "ingress_needs_update",
    "network_resource_labels",
]


def ingress_enabled(cluster: Mapping[str, Any]) -> bool:
    """``headGroupSpec.enableIngress == true``."""
    return as_map(spec(cluster).get("headGroupSpec")).get("enableIngress") is True


def network_resource_labels(cluster: Mapping[str, Any]) -> dict[str, str]:
    """Labels of the dashboard Ingress/Route."""
    name = as_str(metadata(cluster).get("name"))
    return {
        c.RAY_CLUSTER_LABEL_KEY: name,
        c.RAY_ID_LABEL_KEY: check_label(generate_identifier(name, c.HEAD_NODE)),
        c.KUBERNETES_APPLICATION_NAME_LABEL_KEY: c.APPLICATION_NAME,
        c.KUBERNETES_CREATED_BY_LABEL_KEY: c.COMPONENT_NAME,
    }


def _dashboard_port(cluster: Mapping[str, Any]) -> int:
    return head_service_ports(cluster).get(c.DASHBOARD_PORT_NAME, c.DEFAULT_DASHBOARD_PORT)


def build_head_ingress(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """KubeRay ``BuildIngressForHeadService`` plus the controller owner reference."""
    meta = metadata(cluster)
    cluster_annotations = str_map(meta.get("annotations"))
    options = as_map(as_map(spec(cluster).get("headGroupSpec")).get("ingressOptions"))
    rule: dict[str, Any] = {
        "http": {
            "paths": [
                {
                    "path": ingress_path(options),
                    "pathType": ingress_path_type(options),
                    "backend": {
                        "service": {
                            "name": head_service_name(cluster),
                            "port": {"number": _dashboard_port(cluster)},
                        }
                    },
                }
            ]
        }
    }
    host = options.get("host")
    if isinstance(host, str) and host:
        rule["host"] = host
    ingress_spec: dict[str, Any] = {"rules": [rule]}
    tls = as_list(options.get("tls"))
    if tls:
        ingress_spec["tls"] = copy.deepcopy(list(tls))
    if c.INGRESS_CLASS_ANNOTATION_KEY in cluster_annotations:
        ingress_spec["ingressClassName"] = cluster_annotations[c.INGRESS_CLASS_ANNOTATION_KEY]
    annotations = {
        k: v for k, v in cluster_annotations.items() if k != c.INGRESS_CLASS_ANNOTATION_KEY
    }
    ingress_meta: dict[str, Any] = {
        "name": ingress_name(as_str(meta.get("name"))),
        "namespace": as_str(meta.get("namespace")),
        "labels": network_resource_labels(cluster),
        "ownerReferences": [controller_owner_reference(cluster)],
    }
    if annotations:
        ingress_meta["annotations"] = annotations
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": ingress_meta,
        "spec": ingress_spec,
    }


def ingress_needs_update(
    existing: Mapping[str, Any], desired: Mapping[str, Any]
) -> dict[str, Any] | None:
    """KubeRay ``ingressNeedsUpdate``: the updated object to write, or ``None`` if in sync.

    Labels, annotations and spec are compared; when the desired spec has no
    ``ingressClassName``, the live one (e.g. set by the DefaultIngressClass admission plugin) is
    adopted instead of being cleared.
    """
    updated = copy.deepcopy(dict(existing))
    existing_meta = dict(as_map(updated.get("metadata")))
    desired_meta = metadata(desired)
    changed = False
    for key in ("labels", "annotations"):
        if str_map(existing_meta.get(key)) != str_map(desired_meta.get(key)):
            existing_meta[key] = dict(str_map(desired_meta.get(key)))
            changed = True
    desired_spec = copy.deepcopy(dict(spec(desired)))
    live_spec = spec(existing)
    if (
        desired_spec.get("ingressClassName") is None
        and live_spec.get("ingressClassName") is not None
    ):
        desired_spec["ingressClassName"] = live_spec["ingressClassName"]
    if dict(live_spec) != desired_spec:
        updated["spec"] = desired_spec
        changed = True
    updated["metadata"] = existing_meta
    return updated if changed else None


def build_head_route(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """KubeRay ``BuildRouteForHeadService`` with the name check and owner reference."""
    meta = metadata(cluster)
    namespace = as_str(meta.get("namespace"))
    route_meta: dict[str, Any] = {
        "name": route_name(as_str(meta.get("name")), namespace),
        "namespace": namespace,
        "labels": network_resource_labels(cluster),
        "ownerReferences": [controller_owner_reference(cluster)],
    }
    annotations = str_map(meta.get("annotations"))
    if annotations:
        route_meta["annotations"] = annotations
    return {
        "apiVersion": "route.openshift.io/v1",
        "kind": "Route",
        "metadata": route_meta,
        "spec": {
            "to": {"kind": "Service", "name": head_service_name(cluster), "weight": 100},
            "port": {"targetPort": _dashboard_port(cluster)},
            "wildcardPolicy": "None",
        },
    }
