"""Live clusters (``--enable-live-clusters``): the RayClusters Kubernetes has now, and where
their dashboards are.

* ``LiveClusters.entries()``: every RayCluster (all namespaces, or those a login may read) as
  a ``/clusters`` entry with ``sessionName: "live"`` (KubeRay's ``buildLiveClusterInfo``: owner
  from the controller ownerReference when it is a RayJob/RayService), listed at most once per
  ``list_ttl`` seconds.
* ``LiveClusters.find(ns, kind, name)``: the live cluster an ``/enter_cluster`` path names, as
  KubeRay resolves it: a RayCluster by name; a RayJob's or RayService's cluster by the labels
  ``ray.io/originated-from-cr-name`` and ``ray.io/originated-from-crd`` (both: a RayJob and a
  RayService may share a name).
* ``LiveClusters.target(ns, name)``: the head's dashboard Service, named by the RayCluster's
  ``status.head.serviceName``, and the head container's port named ``dashboard`` (else 8265);
  never a host from the request. Kept ``target_ttl`` (30 s, KubeRay's) seconds.
* ``LiveClusters.auth_token(ns, name)`` (``--use-auth-token-mode``): with
  ``spec.authOptions.mode == token`` the ``auth_token`` key of the Secret
  ``authOptions.secretName``, else KubeRay's ``CheckName(<cluster>)``; ``None`` when the
  cluster has no token auth; ``LiveError`` for ``enableK8sTokenAuth`` (KubeRay refuses it too)
  or a missing/empty key. KubeRay re-reads the cluster and the Secret on every request; we keep
  the answer ``token_ttl`` (5 s) seconds, so a page's burst of requests costs one read.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable
from typing import Any, Protocol

import attrs
import structlog

from kuberay.gocompat.gotime import parse_rfc3339_or_none
from kuberay.historyserver.layout import (
    OWNER_KINDS,
    RAY_API_VERSION,
    RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY,
    RAY_ORIGINATED_FROM_CRD_LABEL_KEY,
    RAYCLUSTER_KIND,
)
from kuberay.naming import check_name

log = structlog.get_logger("historyserver.server.live")

RAY_API = RAY_API_VERSION
LIVE_SESSION = "live"
DASHBOARD_PORT_NAME = "dashboard"
DEFAULT_DASHBOARD_PORT = 8265
AUTH_TOKEN_KEY = "auth_token"
CR_NAME_LABEL = RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY
CRD_LABEL = RAY_ORIGINATED_FROM_CRD_LABEL_KEY
_CRD_OF_KIND = {"rayjob": "RayJob", "rayservice": "RayService"}


class LiveError(Exception):
    """A live cluster that cannot be served; ``status`` is the HTTP answer to give."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class KubeReader(Protocol):
    """What this module needs of :class:`kuberay.kube.client.Client`."""

    async def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any]:
        """One object; raises ``kuberay.kube.errors.NotFound`` when absent."""
        ...

    async def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
    ) -> dict[str, Any]:
        """A ``*List`` object."""
        ...


@attrs.frozen
class LiveCluster:
    """A RayCluster Kubernetes has now, as ``/clusters`` lists it."""

    namespace: str
    name: str
    owner_kind: str = ""
    owner_name: str = ""
    created: str = ""

    def as_json(self) -> dict[str, Any]:
        """The ``/clusters`` entry (KubeRay's field names, ``sessionName: live``)."""
        created = parse_rfc3339_or_none(self.created)
        ts = int(created.timestamp()) if created else 0
        return {
            "name": self.name,
            "namespace": self.namespace,
            "sessionName": LIVE_SESSION,
            "createTime": self.created,
            "createTimeStamp": ts,
            "ownerKind": self.owner_kind,
            "ownerName": self.owner_name,
        }


@attrs.frozen
class DashboardTarget:
    """Where a live cluster's dashboard is: its head Service and the dashboard port."""

    namespace: str
    service: str
    port: int


def live_cluster(obj: dict[str, Any]) -> LiveCluster:
    """A RayCluster object as a ``LiveCluster`` (owner from its controller reference)."""
    meta = obj.get("metadata") or {}
    owner_kind = owner_name = ""
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller") and str(ref.get("kind", "")).lower() in (
            *OWNER_KINDS,
            RAYCLUSTER_KIND,
        ):
            owner_kind, owner_name = str(ref["kind"]).lower(), str(ref.get("name", ""))
    return LiveCluster(
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        owner_kind=owner_kind,
        owner_name=owner_name,
        created=str(meta.get("creationTimestamp", "")),
    )


def dashboard_port(cluster: dict[str, Any]) -> int:
    """The head (ray) container's port named ``dashboard``, else 8265 (KubeRay's rule)."""
    containers = (
        ((cluster.get("spec") or {}).get("headGroupSpec") or {}).get("template", {}).get("spec", {})
    ).get("containers") or []
    if containers:
        for port in containers[0].get("ports") or []:
            if port.get("name") == DASHBOARD_PORT_NAME and port.get("containerPort"):
                return int(port["containerPort"])
    return DEFAULT_DASHBOARD_PORT


def _is_not_found(exc: Exception) -> bool:
    return getattr(exc, "status", None) == 404


class LiveClusters:
    """Reads RayClusters (and token Secrets) through a Kubernetes client."""

    def __init__(
        self,
        kube: KubeReader,
        *,
        auth_token_mode: bool = False,
        list_ttl: float = 10.0,
        target_ttl: float = 30.0,
        token_ttl: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.auth_token_mode = auth_token_mode
        self.list_ttl = list_ttl
        self.target_ttl = target_ttl
        self.token_ttl = token_ttl
        self._clock = clock
        self._listed: tuple[float, list[LiveCluster]] | None = None
        self._targets: dict[tuple[str, str], tuple[float, DashboardTarget]] = {}
        self._tokens: dict[tuple[str, str], tuple[float, str | None]] = {}

    async def entries(self, *, refresh: bool = False) -> list[LiveCluster]:
        """Every RayCluster, newest first (listed again after ``list_ttl`` seconds, or now with
        ``refresh``); an unreadable list is logged and gives none (the stored sessions are
        still served)."""
        now = self._clock()
        listed = self._listed
        if not refresh and listed is not None and now - listed[0] < self.list_ttl:
            return listed[1]
        try:
            listing = await self.kube.list(RAY_API, "RayCluster")
        except Exception as exc:  # any failure: serve storage only
            log.warning("cannot list live RayClusters", error=str(exc))
            return []
        found = [live_cluster(obj) for obj in listing.get("items") or []]
        found.sort(key=lambda c: (c.created, c.namespace, c.name), reverse=True)
        self._listed = (now, found)
        return found

    async def find(self, namespace: str, kind: str, name: str) -> LiveCluster | None:
        """The live cluster ``/enter_cluster/{namespace}/{kind}/{name}`` names, or ``None``."""
        if kind == RAYCLUSTER_KIND:
            try:
                return live_cluster(await self.kube.get(RAY_API, "RayCluster", name, namespace))
            except Exception as exc:
                if _is_not_found(exc):
                    return None
                raise LiveError(502, f"cannot read RayCluster {namespace}/{name}: {exc}") from exc
        selector = f"{CR_NAME_LABEL}={name},{CRD_LABEL}={_CRD_OF_KIND[kind]}"
        try:
            listing = await self.kube.list(
                RAY_API, "RayCluster", namespace, label_selector=selector
            )
        except Exception as exc:
            raise LiveError(502, f"cannot list RayClusters in {namespace}: {exc}") from exc
        items = sorted(
            listing.get("items") or [],
            key=lambda o: str((o.get("metadata") or {}).get("creationTimestamp", "")),
            reverse=True,
        )
        if not items:
            return None
        found = live_cluster(items[0])
        if not found.owner_kind:
            found = attrs.evolve(found, owner_kind=kind, owner_name=name)
        return found

    async def _cluster(self, namespace: str, name: str) -> dict[str, Any]:
        try:
            return await self.kube.get(RAY_API, "RayCluster", name, namespace)
        except Exception as exc:
            if _is_not_found(exc):
                raise LiveError(404, f"RayCluster {namespace}/{name} is not live") from exc
            raise LiveError(502, f"cannot read RayCluster {namespace}/{name}: {exc}") from exc

    async def target(self, namespace: str, name: str) -> DashboardTarget:
        """The cluster's dashboard Service and port (``LiveError`` 503 before the head Service
        is in its status)."""
        key = (namespace, name)
        cached = self._targets.get(key)
        now = self._clock()
        if cached is not None and now - cached[0] < self.target_ttl:
            return cached[1]
        cluster = await self._cluster(namespace, name)
        service = str(((cluster.get("status") or {}).get("head") or {}).get("serviceName") or "")
        if not service:
            raise LiveError(503, f"RayCluster {namespace}/{name}: head service not ready")
        target = DashboardTarget(namespace, service, dashboard_port(cluster))
        if len(self._targets) >= 1024:
            self._targets.clear()
        self._targets[key] = (now, target)
        return target

    async def auth_token(self, namespace: str, name: str) -> str | None:
        """The cluster's Ray token (``None``: its dashboard needs none)."""
        key = (namespace, name)
        cached = self._tokens.get(key)
        now = self._clock()
        if cached is not None and now - cached[0] < self.token_ttl:
            return cached[1]
        token = await self._read_token(namespace, name)
        if len(self._tokens) >= 1024:
            self._tokens.clear()
        self._tokens[key] = (now, token)
        return token

    async def _read_token(self, namespace: str, name: str) -> str | None:
        cluster = await self._cluster(namespace, name)
        options = (cluster.get("spec") or {}).get("authOptions") or {}
        if options.get("mode") != "token":
            return None
        if options.get("enableK8sTokenAuth"):
            raise LiveError(
                502,
                f"cannot authenticate proxied requests to RayCluster {namespace}/{name}: "
                "Kubernetes-delegated token auth (enableK8sTokenAuth) is not supported",
            )
        secret_name = options.get("secretName") or check_name(name)
        try:
            secret = await self.kube.get("v1", "Secret", secret_name, namespace)
        except Exception as exc:
            raise LiveError(
                502, f"failed to get auth secret {namespace}/{secret_name}: {exc}"
            ) from exc
        raw = (secret.get("data") or {}).get(AUTH_TOKEN_KEY)
        if raw is None:
            raise LiveError(
                502, f"{AUTH_TOKEN_KEY} key not found in secret {namespace}/{secret_name}"
            )
        try:
            token = base64.b64decode(raw, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise LiveError(502, f"secret {namespace}/{secret_name}: bad {AUTH_TOKEN_KEY}") from exc
        if not token:
            raise LiveError(
                502, f"{AUTH_TOKEN_KEY} key in secret {namespace}/{secret_name} is empty"
            )
        return token
