"""What every RayCluster reconcile step shares: the client, the cache, events,
expectations, options and gates, plus helpers to create/delete children."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import FIELD_MANAGER
from kuberay.controllers.batchscheduler import BatchScheduler
from kuberay.controllers.common.options import BuildOptions
from kuberay.kube import Client, Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Cache, EventRecorder, Expectations
from kuberay.reconcile.children import ensure
from kuberay.reconcile.clock import format_time
from kuberay.reconcile.clock import utc_now as real_now

ROUTE_API_GROUP = "route.openshift.io"
ROUTE_API_VERSION = "route.openshift.io/v1"
ROUTE_KIND = "Route"
#: API groups whose presence means "OpenShift" (KubeRay ``IsOpenShiftCluster``).
OPENSHIFT_API_GROUPS = (ROUTE_API_GROUP, "security.openshift.io", "config.openshift.io")
#: Index of cached children by ``<namespace>/<ray.io/cluster label>``.
CLUSTER_INDEX = C.RAY_CLUSTER_LABEL_KEY


def cluster_index(obj: Obj) -> list[str]:
    """Index function: ``namespace/<ray.io/cluster>`` of a labelled child."""
    meta = k8s.meta(obj)
    name = (meta.get("labels") or {}).get(C.RAY_CLUSTER_LABEL_KEY)
    return [f"{meta.get('namespace')}/{name}"] if name else []


def group_key(cluster: Obj, group: str) -> str:
    """The Expectations owner of one group's pods: ``<namespace>/<cluster>/<group>`` (the
    head group is ``""``)."""
    meta = cluster["metadata"]
    return f"{meta['namespace']}/{meta['name']}/{group}"


def utc_now() -> str:
    """RFC 3339 timestamp, second precision (what metav1.Time serialises)."""
    return format_time(real_now())


@attrs.define
class RayClusterSettings:
    """Operator-level inputs of the RayCluster controller.

    ``requeue_seconds``: steady-state requeue (``RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV``,
    default 300; 0 or less: none). ``expectation_timeout``: how long a created pod may
    stay invisible in the cache before the group is scaled again (KubeRay: 30 s).
    ``openshift_api_groups``: which of KubeRay's OpenShift marker API groups the
    apiserver serves (discovered once at start-up, see ``detect_openshift_api_groups``).
    ``cert_manager_available``: the apiserver serves ``cert-manager.io/v1`` (discovered at
    start-up); a cluster with TLS enabled is refused without it.
    ``batch_scheduler``: the ``--batch-scheduler`` plugin name ("" for none).
    ``webhooks_served``: the operator serves its webhooks (``ENABLE_WEBHOOKS=true``); without
    them a worker group with ``labelRefs`` is refused (nothing would deliver its labels).
    """

    options: BuildOptions = attrs.field(factory=BuildOptions)
    features: Mapping[str, bool] = attrs.field(factory=dict)
    requeue_seconds: float = 300.0
    error_requeue_seconds: float = 2.0
    expectation_timeout: float = 30.0
    enable_metrics: bool = False
    openshift_api_groups: frozenset[str] = frozenset()
    cert_manager_available: bool = False
    batch_scheduler: str = ""
    webhooks_served: bool = False

    @property
    def is_openshift(self) -> bool:
        """Any OpenShift marker group (route/security/config.openshift.io) is served."""
        return bool(self.openshift_api_groups)

    @property
    def has_route_api(self) -> bool:
        """``route.openshift.io`` is served (Routes can be created and watched)."""
        return ROUTE_API_GROUP in self.openshift_api_groups

    @property
    def routes_enabled(self) -> bool:
        """``enableIngress`` makes an OpenShift Route (and Routes are watched): the Route
        API is served and ``USE_INGRESS_ON_OPENSHIFT`` is not "true"."""
        return self.has_route_api and not self.options.use_ingress_on_openshift


@attrs.define
class Ctx:
    """Per-controller dependencies (not per reconcile)."""

    client: Client
    cache: Cache
    recorder: EventRecorder
    settings: RayClusterSettings
    expectations: Expectations
    metrics: Any = None
    now: Callable[[], str] = utc_now
    #: The ``--batch-scheduler`` plugin (None: KubeRay's no-op default).
    scheduler: BatchScheduler | None = None

    def event(self, cluster: Obj, etype: str, reason: str, message: str, action: str = "") -> None:
        """An Event regarding ``cluster``."""
        self.recorder.event(cluster, etype, reason, message, action)

    def children(self, api_version: str, kind: str, cluster: Obj, **labels: str) -> list[Obj]:
        """Cached children of ``kind`` labelled ``ray.io/cluster=<cluster>`` (plus ``labels``)."""
        meta = cluster["metadata"]
        found = self.cache.list(
            api_version, kind, index=(CLUSTER_INDEX, f"{meta['namespace']}/{meta['name']}")
        )
        if labels:
            found = [
                o
                for o in found
                if all(((o["metadata"].get("labels") or {}).get(k)) == v for k, v in labels.items())
            ]
        return found

    def cached(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        """One cached object, or None."""
        return self.cache.get(api_version, kind, namespace, name)

    async def create(self, obj: Obj) -> Obj:
        """Create ``obj`` (AlreadyExists propagates)."""
        return await self.client.create(obj, field_manager=FIELD_MANAGER)

    async def create_if_absent(self, obj: Obj) -> bool:
        """Create ``obj``; False if it already existed."""
        done = await ensure(self.client, obj, field_manager=FIELD_MANAGER)
        return done.created

    async def delete_pod(self, pod: Obj) -> bool:
        """Delete one pod (pinned to its uid); False if it was already gone."""
        meta = pod["metadata"]
        try:
            await self.client.delete(
                "v1", "Pod", meta["name"], meta["namespace"], preconditions={"uid": meta["uid"]}
            )
        except (NotFound, Conflict):  # Conflict: a new pod of that name, not ours to delete
            return False
        return True
