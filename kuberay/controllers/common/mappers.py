"""Watch mappers several controllers share: an event on a child object -> the request of the
ray.io object that (through a RayCluster) owns it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Manager, Request

__all__ = ["cluster_owner_requests", "controller_owner_name", "head_pod_to_cluster_owner"]


def controller_owner_name(obj: Obj, kind: str) -> str | None:
    """The name in ``obj``'s controller owner reference of ``kind``, or None."""
    for ref in k8s.meta(obj).get("ownerReferences") or []:
        if ref.get("kind") == kind and ref.get("controller"):
            return str(ref.get("name"))
    return None


def cluster_owner_requests(
    mgr: Manager, namespace: str, cluster_name: str, owner_kind: str
) -> list[Request]:
    """The request of the ``owner_kind`` object controlling RayCluster ``namespace/cluster_name``
    (read from the manager's cache); ``[]`` when the cluster is not cached or has no such
    owner."""
    try:
        cluster = mgr.cache.get(API_VERSION, KIND_RAYCLUSTER, namespace, cluster_name)
    except LookupError:
        return []
    owner = controller_owner_name(cluster or {}, owner_kind)
    return [Request(namespace, owner)] if owner else []


def head_pod_to_cluster_owner(mgr: Manager, owner_kind: str) -> Callable[[Obj], Iterable[Request]]:
    """Map a head pod (``ray.io/node-type: head``) to the ``owner_kind`` object (RayJob,
    RayService) controlling its RayCluster; any other pod maps to nothing."""

    def map_pod(pod: Obj) -> Iterable[Request]:
        meta = k8s.meta(pod)
        labels = meta.get("labels") or {}
        if labels.get(C.RAY_NODE_TYPE_LABEL_KEY) != C.HEAD_NODE:
            return []
        name = labels.get(C.RAY_CLUSTER_LABEL_KEY)
        if not name:
            return []
        return cluster_owner_requests(mgr, str(meta.get("namespace")), str(name), owner_kind)

    return map_pod
