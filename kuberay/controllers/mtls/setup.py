"""Wiring of the mTLS controller (gate ``RayClusterMTLS``, only when the apiserver serves
``cert-manager.io/v1``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER
from kuberay.controllers.mtls.builders import (
    CERT_MANAGER_API_VERSION,
    CERTIFICATE_KIND,
    ISSUER_KIND,
)
from kuberay.controllers.mtls.reconciler import Ctx, MTLSReconciler, MTLSSettings
from kuberay.kube import Client
from kuberay.kube import objects as k8s
from kuberay.reconcile import Controller, Manager, Request

#: KubeRay names it explicitly (``Named("raycluster-mtls")``).
CONTROLLER_NAME = "raycluster-mtls"
#: The component of the Events it records.
EVENT_COMPONENT = "raycluster-mtls-controller"


async def cert_manager_available(client: Client) -> bool:
    """KubeRay ``certManagerAPIAvailable``: the apiserver serves ``cert-manager.io/v1``
    (one discovery GET of ``/apis``)."""
    doc = await client.request("GET", "/apis", verb="get")
    for group in doc.get("groups") or []:
        if group.get("name") != "cert-manager.io":
            continue
        versions = {str(v.get("groupVersion")) for v in group.get("versions") or []}
        return CERT_MANAGER_API_VERSION in versions
    return False


def _pod_to_cluster(pod: dict[str, Any]) -> Iterable[Request]:
    meta = k8s.meta(pod)
    name = (meta.get("labels") or {}).get(c.RAY_CLUSTER_LABEL_KEY)
    return [Request(str(meta.get("namespace") or ""), str(name))] if name else []


def setup_mtls_controller(mgr: Manager, settings: MTLSSettings) -> Controller:
    """Register the controller: For(RayCluster), owning Issuers and Certificates; a Ray
    pod's change (its IP) reconciles its cluster too, one worker as in KubeRay."""
    ctx = Ctx(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(EVENT_COMPONENT),
        settings=settings,
    )
    builder = (
        mgr.controller(CONTROLLER_NAME)
        .for_(API_VERSION, KIND_RAYCLUSTER)
        .owns(CERT_MANAGER_API_VERSION, ISSUER_KIND)
        .owns(CERT_MANAGER_API_VERSION, CERTIFICATE_KIND)
        .watches("v1", "Pod", _pod_to_cluster)
        .with_options(max_concurrent_reconciles=1)
    )
    return builder.complete(MTLSReconciler(ctx))
