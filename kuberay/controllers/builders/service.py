"""Services KubeRay creates for a RayCluster (and the RayService variants of them).

Head Service (``<cluster>-head-svc`` or ``headGroupSpec.headService.metadata.name``):

* labels = selector = ``ray.io/cluster``, ``ray.io/node-type=head``, ``ray.io/identifier``,
  ``app.kubernetes.io/name`` (the head template's value if it sets one, else ``kuberay``) and
  ``app.kubernetes.io/created-by=kuberay-operator``; annotations = ``headServiceAnnotations``;
* ports = every port of the head Ray container (unnamed ones become ``<port>-port``), or the
  five defaults when it declares none, plus ``metrics:8080`` if missing; ``appProtocol: tcp``;
* without a custom ``headService`` it is headless (``clusterIP: None``,
  ``publishNotReadyAddresses: true``) when the type is empty/ClusterIP, unless
  ``ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE``; ports are sorted by name;
* a custom ``headService`` is deep-copied: selector replaced, ``headServiceAnnotations`` win
  over its annotations, the computed ports are appended after the user's, our labels win, the
  name is kept if set, the namespace is forced, the type defaulted.

KubeRay appends the computed ports to a custom head Service (and the serve ports) in Go map
order, i.e. randomly; we use ascending port-name order so the output is deterministic.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.controllers.common import gates
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import (
    as_list,
    as_map,
    as_str,
    metadata,
    pod_spec_of_template,
    spec,
    str_map,
)
from kuberay.controllers.common.options import BuildOptions

from .names import (
    check_label,
    generate_identifier,
    head_service_name,
    head_service_name_for_owner,
    headless_service_name,
    serve_service_label,
    serve_service_name,
)
from .owner import controller_owner_reference, set_controller_reference

__all__ = [
    "ServiceBuildError",
    "build_head_service",
    "build_head_service_for_ray_service",
    "build_headless_service",
    "build_rayjob_head_service",
    "build_serve_service",
    "build_serve_service_for_ray_service",
    "head_service_labels",
    "head_service_ports",
    "is_serving_port_name",
    "needs_headless_service",
]

_SERVE_PORT_MISSING: Final = (
    "Please specify a port named 'serve' (or with the prefix 'serve-', e.g. 'serve-grpc') in "
    "the Ray head container; otherwise, the Kubernetes service for Ray Serve will not be created."
)
_INCREMENTAL_UPGRADE: Final = "NewClusterWithIncrementalUpgrade"


class ServiceBuildError(ValueError):
    """KubeRay would refuse to build this Service (reconcile error)."""


def head_service_labels(cluster: Mapping[str, Any]) -> dict[str, str]:
    """KubeRay ``HeadServiceLabels``: the default labels/selector of the head Service."""
    name = as_str(metadata(cluster).get("name"))
    return {
        c.RAY_CLUSTER_LABEL_KEY: name,
        c.RAY_NODE_TYPE_LABEL_KEY: c.HEAD_NODE,
        c.RAY_ID_LABEL_KEY: check_label(generate_identifier(name, c.HEAD_NODE)),
        c.KUBERNETES_APPLICATION_NAME_LABEL_KEY: c.APPLICATION_NAME,
        c.KUBERNETES_CREATED_BY_LABEL_KEY: c.COMPONENT_NAME,
    }


def head_service_ports(cluster: Mapping[str, Any]) -> dict[str, int]:
    """KubeRay ``getServicePorts``: port name -> number exposed by the head Service."""
    head = as_map(spec(cluster).get("headGroupSpec"))
    containers = as_list(pod_spec_of_template(head.get("template")).get("containers"))
    ports: dict[str, int] = {}
    if containers:
        for port in as_list(as_map(containers[RAY_CONTAINER_INDEX]).get("ports")):
            port_map = as_map(port)
            number = int(port_map.get("containerPort") or 0)
            name = as_str(port_map.get("name")) or f"{number}-port"
            ports[name] = number
    if not ports:
        ports = {
            c.CLIENT_PORT_NAME: c.DEFAULT_CLIENT_PORT,
            c.GCS_SERVER_PORT_NAME: c.DEFAULT_GCS_SERVER_PORT,
            c.DASHBOARD_PORT_NAME: c.DEFAULT_DASHBOARD_PORT,
            c.METRICS_PORT_NAME: c.DEFAULT_METRICS_PORT,
            c.SERVING_PORT_NAME: c.DEFAULT_SERVING_PORT,
        }
    ports.setdefault(c.METRICS_PORT_NAME, c.DEFAULT_METRICS_PORT)
    return ports


def is_serving_port_name(name: str) -> bool:
    """``serve`` or ``serve-*`` (e.g. ``serve-grpc``)."""
    return name == c.SERVING_PORT_NAME or name.startswith(c.SERVING_PORT_NAME + "-")


def _from_user_service(
    template: Mapping[str, Any],
    *,
    default_name: str,
    namespace: str,
    selector: Mapping[str, str],
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    default_type: str,
    ports: Callable[[Sequence[Any]], list[Any] | None],
) -> dict[str, Any]:
    """A Service from the user's template (``headService``, ``serveService``): KubeRay's
    selector, ``labels`` and ``annotations`` over the user's, its name unless the user named
    it, the namespace, ``default_type`` unless the user set one, and the ports ``ports(user
    ports)`` returns (None: the user's as they are). Pure; the template is not modified."""
    service: dict[str, Any] = copy.deepcopy(dict(template))
    service["apiVersion"] = "v1"
    service["kind"] = "Service"
    meta = dict(as_map(service.get("metadata")))
    service_spec = dict(as_map(service.get("spec")))
    service_spec["selector"] = dict(selector)
    meta["annotations"] = {**str_map(meta.get("annotations")), **annotations}
    merged = ports(as_list(service_spec.get("ports")))
    if merged is not None:
        service_spec["ports"] = merged
    meta["labels"] = {**str_map(meta.get("labels")), **labels}
    if not meta.get("name"):
        meta["name"] = default_name
    meta["namespace"] = namespace
    if not service_spec.get("type") and default_type:
        service_spec["type"] = default_type
    if not meta["annotations"]:
        meta.pop("annotations")
    service["metadata"] = meta
    service["spec"] = service_spec
    return service


def _service(
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str] | None,
    service_spec: dict[str, Any],
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": service_spec}


def _build_service_for_head_pod(
    cluster: Mapping[str, Any],
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    options: BuildOptions,
) -> dict[str, Any]:
    """KubeRay ``BuildServiceForHeadPod`` (without the owner reference)."""
    defaults = head_service_labels(cluster)
    selector = {k: labels.get(k, v) for k, v in defaults.items()}
    head = as_map(spec(cluster).get("headGroupSpec"))
    default_type = as_str(head.get("serviceType"))
    namespace = as_str(metadata(cluster).get("namespace"))
    ports = [
        {"name": name, "port": port, "appProtocol": c.DEFAULT_SERVICE_APP_PROTOCOL}
        for name, port in sorted(head_service_ports(cluster).items())
    ]

    custom = head.get("headService")
    if isinstance(custom, Mapping):
        return _from_user_service(
            custom,
            default_name=head_service_name(cluster),
            namespace=namespace,
            selector=selector,
            labels=selector,
            annotations=annotations,
            default_type=default_type,
            ports=lambda user: [*user, *ports],  # the user's, then the operator's
        )

    service_spec: dict[str, Any] = {"selector": dict(selector), "ports": ports}
    if default_type:
        service_spec["type"] = default_type
    if not options.enable_ray_head_cluster_ip_service and default_type in ("", "ClusterIP"):
        service_spec["clusterIP"] = "None"
        service_spec["publishNotReadyAddresses"] = True
    return _service(head_service_name(cluster), namespace, selector, annotations, service_spec)


def build_head_service(
    cluster: Mapping[str, Any], options: BuildOptions | None = None
) -> dict[str, Any]:
    """The head Service the RayCluster controller creates (owner reference included)."""
    opts = options if options is not None else BuildOptions()
    head = as_map(spec(cluster).get("headGroupSpec"))
    template_labels = str_map(as_map(as_map(head.get("template")).get("metadata")).get("labels"))
    labels: dict[str, str] = {}
    if c.KUBERNETES_APPLICATION_NAME_LABEL_KEY in template_labels:
        labels[c.KUBERNETES_APPLICATION_NAME_LABEL_KEY] = template_labels[
            c.KUBERNETES_APPLICATION_NAME_LABEL_KEY
        ]
    annotations = str_map(spec(cluster).get("headServiceAnnotations"))
    service = _build_service_for_head_pod(cluster, labels, annotations, opts)
    set_controller_reference(service, cluster)
    return service


def needs_headless_service(cluster: Mapping[str, Any]) -> bool:
    """Any worker group with ``numOfHosts > 1``."""
    for group in as_list(spec(cluster).get("workerGroupSpecs")):
        hosts = as_map(group).get("numOfHosts")
        if isinstance(hosts, int) and hosts > 1:
            return True
    return False


def build_headless_service(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """``<cluster>-headless`` for multi-host worker groups (owner reference included)."""
    name = as_str(metadata(cluster).get("name"))
    service = _service(
        headless_service_name(name),
        as_str(metadata(cluster).get("namespace")),
        {c.RAY_CLUSTER_HEADLESS_SERVICE_LABEL_KEY: name},
        None,
        {
            "clusterIP": "None",
            "selector": {c.RAY_CLUSTER_LABEL_KEY: name, c.RAY_NODE_TYPE_LABEL_KEY: c.WORKER_NODE},
            "type": "ClusterIP",
            "publishNotReadyAddresses": True,
        },
    )
    service["metadata"]["ownerReferences"] = [controller_owner_reference(cluster)]
    return service


def _serve_ports(cluster: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": name, "port": port}
        for name, port in sorted(head_service_ports(cluster).items())
        if is_serving_port_name(name)
    ]


def build_serve_service(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """``<cluster>-serve-svc`` (annotation ``ray.io/enable-serve-service: "true"``)."""
    name = as_str(metadata(cluster).get("name"))
    ports = _serve_ports(cluster)
    if not ports:
        raise ServiceBuildError(_SERVE_PORT_MISSING)
    service_spec: dict[str, Any] = {"selector": {c.RAY_CLUSTER_LABEL_KEY: name}, "ports": ports}
    service_type = as_str(as_map(spec(cluster).get("headGroupSpec")).get("serviceType"))
    if service_type:
        service_spec["type"] = service_type
    service = _service(
        serve_service_name(name),
        as_str(metadata(cluster).get("namespace")),
        {
            c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: name,
            c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: c.KIND_RAYCLUSTER,
            c.RAY_CLUSTER_SERVING_SERVICE_LABEL_KEY: serve_service_label(name),
        },
        None,
        service_spec,
    )
    service["metadata"]["ownerReferences"] = [controller_owner_reference(cluster)]
    return service


def _incremental_upgrade(
    ray_service: Mapping[str, Any], features: Mapping[str, bool] | None
) -> bool:
    if not gates.feature_enabled(features, gates.RAY_SERVICE_INCREMENTAL_UPGRADE):
        return False
    strategy = as_map(spec(ray_service).get("upgradeStrategy"))
    return strategy.get("type") == _INCREMENTAL_UPGRADE


def build_head_service_for_ray_service(
    ray_service: Mapping[str, Any],
    cluster: Mapping[str, Any],
    options: BuildOptions | None = None,
) -> dict[str, Any]:
    """KubeRay ``BuildHeadServiceForRayService`` (no owner reference; the caller sets it)."""
    opts = options if options is not None else BuildOptions()
    service = _build_service_for_head_pod(cluster, {}, {}, opts)
    name = as_str(metadata(ray_service).get("name"))
    service["metadata"]["name"] = head_service_name_for_owner(name)
    service["metadata"]["namespace"] = as_str(metadata(ray_service).get("namespace"))
    service["metadata"]["labels"] = {
        c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: name,
        c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: c.KIND_RAYSERVICE,
        c.RAY_NODE_TYPE_LABEL_KEY: c.HEAD_NODE,
        c.RAY_ID_LABEL_KEY: check_label(generate_identifier(name, c.HEAD_NODE)),
    }
    return service


def build_rayjob_head_service(
    rayjob: Mapping[str, Any],
    cluster: Mapping[str, Any],
    *,
    options: BuildOptions | None = None,
) -> dict[str, Any]:
    """KubeRay ``BuildHeadServiceForRayJob``: ``<rayjob>-head-svc`` selecting ``cluster``'s head.

    Same spec as the cluster's own head Service; labels name the RayJob; the controller owner
    reference to the RayJob is included (KubeRay sets it right before creating the Service).
    """
    opts = options if options is not None else BuildOptions()
    service = _build_service_for_head_pod(cluster, {}, {}, opts)
    name = as_str(metadata(rayjob).get("name"))
    service["metadata"]["name"] = head_service_name_for_owner(name)
    service["metadata"]["namespace"] = as_str(metadata(rayjob).get("namespace"))
    service["metadata"]["labels"] = {
        c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: name,
        c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: c.KIND_RAYJOB,
        c.RAY_NODE_TYPE_LABEL_KEY: c.HEAD_NODE,
        c.RAY_ID_LABEL_KEY: check_label(generate_identifier(name, c.HEAD_NODE)),
    }
    set_controller_reference(service, rayjob, c.KIND_RAYJOB)
    return service


def build_serve_service_for_ray_service(
    ray_service: Mapping[str, Any],
    cluster: Mapping[str, Any],
    features: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """KubeRay ``BuildServeServiceForRayService`` (no owner reference; the caller sets it)."""
    incremental = _incremental_upgrade(ray_service, features)
    cluster_name = as_str(metadata(cluster).get("name"))
    name = cluster_name if incremental else as_str(metadata(ray_service).get("name"))
    namespace = as_str(metadata(ray_service).get("namespace"))
    labels = {
        c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: name,
        c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: c.KIND_RAYSERVICE,
        c.RAY_CLUSTER_SERVING_SERVICE_LABEL_KEY: serve_service_label(name),
    }
    selector = {
        c.RAY_CLUSTER_LABEL_KEY: cluster_name,
        c.RAY_CLUSTER_SERVING_SERVICE_LABEL_KEY: c.ENABLE_RAY_CLUSTER_SERVING_SERVICE_TRUE,
    }
    service_type = as_str(
        as_map(as_map(spec(ray_service).get("rayClusterConfig")).get("headGroupSpec")).get(
            "serviceType"
        )
    )
    ports = _serve_ports(cluster)
    custom = spec(ray_service).get("serveService")
    if not ports and not isinstance(custom, Mapping):
        raise ServiceBuildError(_SERVE_PORT_MISSING)
    if isinstance(custom, Mapping) and not incremental:

        def serve_ports(user: Sequence[Any]) -> list[Any] | None:
            # the operator's ports, each replaced by the user's port of the same name
            if not ports:
                return None
            by_name = {as_str(as_map(p).get("name")): p for p in user}
            return [by_name.get(p["name"], p) for p in ports]

        return _from_user_service(
            custom,
            default_name=serve_service_name(name),
            namespace=namespace,
            selector=selector,
            labels=labels,
            annotations={},
            default_type=service_type,
            ports=serve_ports,
        )
    if not ports:
        raise ServiceBuildError(_SERVE_PORT_MISSING)
    service_spec = {"selector": selector, "ports": ports}
    if service_type:
        service_spec["type"] = service_type
    return _service(serve_service_name(name), namespace, labels, None, service_spec)
