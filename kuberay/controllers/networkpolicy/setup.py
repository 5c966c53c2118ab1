"""Wiring of the NetworkPolicy controller into a Manager (gate ``RayClusterNetworkPolicy``)."""

from __future__ import annotations

from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER, RAY_CLUSTER_LABEL_KEY
from kuberay.controllers.networkpolicy.builders import (
    NETWORK_POLICY_API_VERSION,
    NETWORK_POLICY_KIND,
)
from kuberay.controllers.networkpolicy.context import CLUSTER_INDEX, Ctx
from kuberay.controllers.networkpolicy.reconciler import NetworkPolicyReconciler
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Controller, GenerationChangedPredicate, Manager

#: KubeRay names it explicitly (``Named("networkpolicy")``): the ``controller`` label of
#: its metrics.
CONTROLLER_NAME = "networkpolicy"
#: The component of the Events it records (KubeRay's ``GetEventRecorder`` name).
EVENT_COMPONENT = "networkpolicy-controller"


def _cluster_index(obj: Obj) -> list[str]:
    meta = k8s.meta(obj)
    name = k8s.labels(obj).get(RAY_CLUSTER_LABEL_KEY)
    return [f"{meta.get('namespace')}/{name}"] if name else []


def setup_networkpolicy_controller(mgr: Manager) -> Controller:
    """Register the controller: For(RayCluster) on generation changes, owning
    NetworkPolicies (a change to one reconciles its RayCluster)."""
    mgr.cache.add_index(
        NETWORK_POLICY_API_VERSION, NETWORK_POLICY_KIND, CLUSTER_INDEX, _cluster_index
    )
    ctx = Ctx(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(EVENT_COMPONENT),
    )
    builder = (
        mgr.controller(CONTROLLER_NAME)
        .for_(API_VERSION, KIND_RAYCLUSTER, predicates=[GenerationChangedPredicate])
        .owns(NETWORK_POLICY_API_VERSION, NETWORK_POLICY_KIND)
    )
    return builder.complete(NetworkPolicyReconciler(ctx))
