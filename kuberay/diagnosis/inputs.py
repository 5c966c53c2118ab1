"""What the diagnosis of one resource needs read, decided from the objects already read:
the auth Secret and head Service of a RayCluster, the RayClusters of a RayJob or
RayService, a RayJob's submitter Job, the Event selectors. Each caller reads them its own
way (``kubectl ray why`` with its client, the API server as its caller); the names are
decided here, once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.controllers.builders.auth import auth_token_secret_name
from kuberay.controllers.builders.names import head_service_name
from kuberay.kube import objects as k8s

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

#: The field selector of the namespace's Warning Events (those about a cluster's pods count).
WARNING_EVENTS = "type=Warning"


def auth_secret_to_read(cluster: Obj) -> str | None:
    """The token Secret a RayCluster with token authentication needs (None: no token auth)."""
    auth = k8s.spec(cluster).get("authOptions") or {}
    if auth.get("mode") != "token":
        return None
    return auth_token_secret_name(cluster["metadata"]["name"], auth)


def head_service_to_read(cluster: Obj) -> str | None:
    """The head Service of a RayCluster the operator has processed (None: no status yet)."""
    return head_service_name(cluster) if cluster.get("status") else None


def clusters_to_read(obj: Obj) -> list[str]:
    """The RayClusters a RayJob (``status.rayClusterName``) or a RayService (its active and
    pending clusters) runs on."""
    status = k8s.status(obj)
    if obj.get("kind") == "RayJob":
        return [status["rayClusterName"]] if status.get("rayClusterName") else []
    names: list[str] = []
    for which in ("activeServiceStatus", "pendingServiceStatus"):
        name = (status.get(which) or {}).get("rayClusterName")
        if name:
            names.append(name)
    return names


def events_selector(kind: str, name: str) -> str:
    """The field selector of the Events about ``kind/name``."""
    return f"involvedObject.kind={kind},involvedObject.name={name}"


def cluster_events(name: str, pods: list[Obj], own: list[Obj], warnings: list[Obj]) -> list[Obj]:
    """A RayCluster's Events: its ``own`` plus the Warning Events about its ``pods``."""
    names = {name} | {p["metadata"]["name"] for p in pods}
    return own + [
        e
        for e in warnings
        if (e.get("involvedObject") or {}).get("name") in names
        and (e.get("involvedObject") or {}).get("kind") != "RayCluster"
    ]


__all__ = [
    "WARNING_EVENTS",
    "auth_secret_to_read",
    "cluster_events",
    "clusters_to_read",
    "events_selector",
    "head_service_to_read",
]
