"""Where to dial a live cluster's dashboard directly (without ``--use-kubernetes-proxy``).

The head Service is read through the Kubernetes API, never resolved by DNS: a Service's DNS
name can be a CNAME (``type: ExternalName``) to any host, which would turn the proxy into a
GET to wherever the Service's owner points it.

* ``type: ExternalName``: refused (``LiveError`` 502 naming the Service and its external name).
* A cluster IP (``spec.clusterIP`` set and not ``None``): that IP, on the Service's port named
  ``dashboard`` (else the port whose ``targetPort`` or ``port`` is the head's dashboard port,
  else the dashboard port itself).
* A headless Service: the first ready address of its EndpointSlices
  (``kubernetes.io/service-name=<svc>``; ``ready`` unset counts as ready, as kube-proxy
  reads it), on the slice's port named ``dashboard`` (else the dashboard port); none ready:
  ``LiveError`` 503.
* Answers are kept ``ttl`` (``ADDRESS_TTL``, 10 s) per Service, so a page's burst of
  requests costs one read.

RBAC: ``get`` on ``services`` and ``list`` on ``endpointslices.discovery.k8s.io``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs
import structlog

from kuberay.historyserver.server.live import (
    DASHBOARD_PORT_NAME,
    DashboardTarget,
    KubeReader,
    LiveError,
)

log = structlog.get_logger("historyserver.server.live_dial")

ADDRESS_TTL = 10.0
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
_MAX_CACHED = 1024


@attrs.frozen
class Address:
    """An IP address and port to dial."""

    host: str
    port: int


def _not_found(exc: Exception) -> bool:
    return getattr(exc, "status", None) == 404


def service_port(service: dict[str, Any], dashboard_port: int) -> int:
    """The Service port that leads to the head's ``dashboard_port`` (see the module doc)."""
    ports = (service.get("spec") or {}).get("ports") or []
    for port in ports:
        if port.get("name") == DASHBOARD_PORT_NAME and port.get("port"):
            return int(port["port"])
    for port in ports:
        if port.get("targetPort") == dashboard_port and port.get("port"):
            return int(port["port"])
    for port in ports:
        if port.get("port") == dashboard_port:
            return dashboard_port
    return dashboard_port


def ready_address(slices: list[dict[str, Any]], dashboard_port: int) -> Address | None:
    """The first ready endpoint address of ``slices`` and its dashboard port, or ``None``."""
    for piece in slices:
        port = dashboard_port
        for p in piece.get("ports") or []:
            if p.get("name") == DASHBOARD_PORT_NAME and p.get("port"):
                port = int(p["port"])
        for endpoint in piece.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready") is False:
                continue
            for address in endpoint.get("addresses") or []:
                if address:
                    return Address(str(address), port)
    return None


class ServiceAddresses:
    """Resolves a ``DashboardTarget`` to an ``Address`` through the API (module doc)."""

    def __init__(
        self,
        kube: KubeReader,
        *,
        ttl: float = ADDRESS_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.ttl = ttl
        self._clock = clock
        self._cache: dict[DashboardTarget, tuple[float, Address]] = {}

    async def __call__(self, target: DashboardTarget) -> Address:
        """The address to dial for ``target``; ``LiveError`` when there is none (or the
        Service is an ``ExternalName``)."""
        now = self._clock()
        cached = self._cache.get(target)
        if cached is not None and now - cached[0] < self.ttl:
            return cached[1]
        found = await self._resolve(target)
        if len(self._cache) >= _MAX_CACHED:
            self._cache.clear()
        self._cache[target] = (now, found)
        return found

    async def _resolve(self, target: DashboardTarget) -> Address:
        what = f"{target.namespace}/{target.service}"
        try:
            service = await self.kube.get("v1", "Service", target.service, target.namespace)
        except Exception as exc:
            if _not_found(exc):
                raise LiveError(503, f"the head Service {what} does not exist") from exc
            raise LiveError(502, f"cannot read the head Service {what}: {exc}") from exc
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName":
            log.warning("refusing an ExternalName head service", service=what)
            raise LiveError(
                502,
                f"the head Service {what} is of type ExternalName "
                f"({spec.get('externalName', '')!r}): the history server dials only a "
                "Service's cluster IP or its ready endpoints",
            )
        cluster_ip = str(spec.get("clusterIP") or "")
        if cluster_ip and cluster_ip != "None":
            return Address(cluster_ip, service_port(service, target.port))
        try:
            listing = await self.kube.list(
                "discovery.k8s.io/v1",
                "EndpointSlice",
                target.namespace,
                label_selector=f"{SERVICE_NAME_LABEL}={target.service}",
            )
        except Exception as exc:
            raise LiveError(502, f"cannot list the endpoints of {what}: {exc}") from exc
        found = ready_address(list(listing.get("items") or []), target.port)
        if found is None:
            raise LiveError(503, f"the head Service {what} has no ready endpoint")
        return found
