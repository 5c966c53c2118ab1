"""Where to dial a Service (e.g. a head's dashboard) from wherever the operator runs.

In a pod (``KUBERNETES_SERVICE_HOST`` set) the answer is the Service's DNS name and port, as
KubeRay dials it. On a host outside the cluster (``make run``, the e2e tests) that name does not
resolve, and asking the host's DNS would send the query off the machine, so the Service is
resolved through the API instead: a ready endpoint of its EndpointSlices, or, where there are
none (no kube-controller-manager), a ready pod its selector picks. The caller keeps one code path
(the head Service's name); ``--use-kubernetes-proxy`` is a separate choice made before this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from kuberay.controllers.common.objects import as_list, as_map, as_str
from kuberay.kube.interfaces import Reader

__all__ = ["IN_CLUSTER_ENV", "ServiceNotReachable", "in_cluster", "service_address"]

IN_CLUSTER_ENV = "KUBERNETES_SERVICE_HOST"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


class ServiceNotReachable(LookupError):
    """The Service, its port, or a ready endpoint behind it does not exist (yet)."""


def in_cluster(environ: Mapping[str, str] | None = None) -> bool:
    return bool((os.environ if environ is None else environ).get(IN_CLUSTER_ENV))


def _service_port(service: Mapping[str, Any], port: int | str) -> Mapping[str, Any]:
    for p in as_list(as_map(service.get("spec")).get("ports")):
        p = as_map(p)
        if (isinstance(port, str) and p.get("name") == port) or (
            isinstance(port, int) and p.get("port") == port
        ):
            return p
    name = as_str(as_map(service.get("metadata")).get("name"))
    raise ServiceNotReachable(f"service {name} has no port {port!r}")


def _pod_ready(pod: Mapping[str, Any]) -> bool:
    status = as_map(pod.get("status"))
    return status.get("phase") == "Running" and any(
        as_map(c).get("type") == "Ready" and as_map(c).get("status") == "True"
        for c in as_list(status.get("conditions"))
    )


def _container_port(pod: Mapping[str, Any], name: str) -> int | None:
    for container in as_list(as_map(pod.get("spec")).get("containers")):
        for p in as_list(as_map(container).get("ports")):
            if as_map(p).get("name") == name and isinstance(as_map(p).get("containerPort"), int):
                return int(as_map(p)["containerPort"])
    return None


async def _from_endpoint_slices(
    client: Reader, namespace: str, name: str, port_name: str
) -> tuple[str, int] | None:
    slices, _ = await client.list_all(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        namespace,
        label_selector=f"{SERVICE_NAME_LABEL}={name}",
    )
    if not slices:
        return None
    for es in sorted(slices, key=lambda s: as_str(as_map(s.get("metadata")).get("name"))):
        if es.get("addressType") not in (None, "IPv4", "IPv6"):
            continue
        ports = [as_map(p) for p in as_list(es.get("ports"))]
        number = next((p.get("port") for p in ports if (p.get("name") or "") == port_name), None)
        if not isinstance(number, int):
            continue
        for ep in as_list(es.get("endpoints")):
            ep = as_map(ep)
            if as_map(ep.get("conditions")).get("ready") is False:
                continue
            addresses = as_list(ep.get("addresses"))
            if addresses:
                return str(addresses[0]), number
    raise ServiceNotReachable(f"service {namespace}/{name}: no ready endpoint for {port_name!r}")


async def _from_pods(
    client: Reader, namespace: str, service: Mapping[str, Any], sp: Mapping[str, Any]
) -> tuple[str, int]:
    name = as_str(as_map(service.get("metadata")).get("name"))
    selector = as_map(as_map(service.get("spec")).get("selector"))
    if not selector:
        raise ServiceNotReachable(f"service {namespace}/{name} has no selector and no endpoints")
    label_selector = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    pods, _ = await client.list_all("v1", "Pod", namespace, label_selector=label_selector)
    target = sp.get("targetPort", sp.get("port"))
    # As the Service's DNS name and EndpointSlices do: with publishNotReadyAddresses (KubeRay's
    # headless head Service) a running pod that is not Ready still answers for it.
    any_running = bool(as_map(service.get("spec")).get("publishNotReadyAddresses"))
    for pod in sorted(pods, key=lambda p: as_str(as_map(p.get("metadata")).get("name"))):
        status = as_map(pod.get("status"))
        ip = status.get("podIP")
        usable = _pod_ready(pod) or (any_running and status.get("phase") == "Running")
        if not ip or not usable or as_map(pod.get("metadata")).get("deletionTimestamp"):
            continue
        number = _container_port(pod, target) if isinstance(target, str) else target
        if isinstance(number, int):
            return str(ip), number
    raise ServiceNotReachable(f"service {namespace}/{name}: no ready pod behind it")


async def service_address(
    client: Reader,
    namespace: str,
    name: str,
    port: int | str,
    *,
    cluster_domain: str = "cluster.local",
    environ: Mapping[str, str] | None = None,
) -> tuple[str, int]:
    """(host, port) to dial Service ``namespace/name`` on its port ``port`` (number or name).

    In a pod: the Service's DNS name and port. Elsewhere: a ready endpoint's address
    (EndpointSlices, else the selector's ready pods). Raises :class:`ServiceNotReachable`.
    """
    service = await client.get("v1", "Service", name, namespace)
    sp = _service_port(service, port)
    if in_cluster(environ):
        return f"{name}.{namespace}.svc.{cluster_domain}", int(sp["port"])
    found = await _from_endpoint_slices(client, namespace, name, as_str(sp.get("name")))
    if found is not None:
        return found
    return await _from_pods(client, namespace, service, sp)
