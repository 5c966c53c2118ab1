"""The two mutating webhooks of node label delivery (KubeRay v1.8, gate NodeLabelDelivery),
answering AdmissionReviews; the decisions are :mod:`kuberay.webhooks.node_labels`'.

* ``/mutate-v1-pod`` (``mpod.kb.io``, pods CREATE, failurePolicy Fail): prepares a worker pod
  of a group with ``labelRefs`` (:func:`mutate_pod`); a pod that is not KubeRay's shape, or
  whose RayCluster or group cannot be found, is denied (403) with the reason;
* ``/mutate-v1-pod-binding`` (``mpodbinding.kb.io``, pods/binding CREATE, failurePolicy
  Ignore, sideEffects NoneOnDryRun): writes the bound Node's labels into the Binding
  (:func:`mutate_binding`). It never denies: labels it cannot deliver are withheld with a
  ``RequiredNodeLabelMissing`` Warning Event on the Pod (none on a dry run), and the worker
  exits before ``ray start`` saying so.

What they read is a :class:`ClusterReads`: in the operator, RayClusters and Ray pods from
the manager's cache and Nodes (metadata only) from the apiserver (:class:`CachedReads`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Collection, Mapping
from typing import Any, Final, Protocol

import attrs
import structlog

from kuberay.api.v1.constants import (
    API_VERSION,
    KIND_RAYCLUSTER,
    RAY_CLUSTER_LABEL_KEY,
    RAY_NODE_GROUP_LABEL_KEY,
    RAY_NODE_LABELS_ANNOTATION_KEY,
    RAY_NODE_TYPE_LABEL_KEY,
    WORKER_NODE,
)
from kuberay.api.v1.convert import StructureError, structure
from kuberay.api.v1.gates import FeatureGates, gate_enabled
from kuberay.api.v1.raycluster_types import LabelRef
from kuberay.featuregates.kuberay_gates import NODE_LABEL_DELIVERY
from kuberay.kube import Client, KubeError, NotFound
from kuberay.reconcile import Cache, EventRecorder
from kuberay.reconcile.cache import NotRegistered
from kuberay.webhooks.admission import ADMISSION_API_VERSIONS, BadRequest
from kuberay.webhooks.node_labels import (
    WITHHELD_ACTION,
    WITHHELD_REASON,
    NodeLabelsWithheld,
    PodRefused,
    binding_patch,
    node_labels_for,
    prepare_worker_patch,
    withheld_message,
)

__all__ = [
    "BINDING_WEBHOOK_COMPONENT",
    "POD_BINDING_WEBHOOK_NAME",
    "POD_BINDING_WEBHOOK_PATH",
    "POD_WEBHOOK_NAME",
    "POD_WEBHOOK_PATH",
    "CachedReads",
    "ClusterReads",
    "PodWebhooks",
    "mutate_binding",
    "mutate_pod",
]

log = structlog.get_logger("kuberay.webhooks.pods")

POD_WEBHOOK_PATH: Final = "/mutate-v1-pod"
POD_WEBHOOK_NAME: Final = "mpod.kb.io"
POD_BINDING_WEBHOOK_PATH: Final = "/mutate-v1-pod-binding"
POD_BINDING_WEBHOOK_NAME: Final = "mpodbinding.kb.io"
#: The reporting component of the ``RequiredNodeLabelMissing`` Events (KubeRay's recorder).
BINDING_WEBHOOK_COMPONENT: Final = "kuberay-pod-binding-webhook"


class ClusterReads(Protocol):
    """What the pod webhooks read."""

    async def raycluster(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The RayCluster, or None."""
        ...

    async def rayclusters(self, namespace: str) -> list[Mapping[str, Any]]:
        """Every RayCluster of ``namespace``."""
        ...

    async def pod(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The Pod (its metadata at least), or None when it does not exist."""
        ...

    async def node_labels(self, name: str) -> Mapping[str, str]:
        """The Node's labels (``KubeError`` when it cannot be read)."""
        ...


@attrs.frozen
class CachedReads:
    """RayClusters and Ray pods from ``cache`` (a pod not there yet, or a kind the cache
    does not hold yet, is read from the apiserver), Nodes from the apiserver; with ``cache``
    None everything is read from the apiserver (tests, a webhook server without an
    operator)."""

    client: Client
    cache: Cache | None = None

    async def raycluster(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """See :class:`ClusterReads`."""
        if self.cache is not None:
            try:
                return self.cache.get(API_VERSION, KIND_RAYCLUSTER, namespace, name)
            except NotRegistered:  # before the controllers started: ask the apiserver
                pass
        try:
            found: Mapping[str, Any] = await self.client.get(
                API_VERSION, KIND_RAYCLUSTER, name, namespace
            )
        except NotFound:
            return None
        return found

    async def rayclusters(self, namespace: str) -> list[Mapping[str, Any]]:
        """See :class:`ClusterReads`."""
        if self.cache is not None:
            try:
                return list(self.cache.list(API_VERSION, KIND_RAYCLUSTER, namespace))
            except NotRegistered:
                pass
        items, _ = await self.client.list_all(API_VERSION, KIND_RAYCLUSTER, namespace)
        return list(items)

    async def pod(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """See :class:`ClusterReads`."""
        if self.cache is not None:
            try:
                cached = self.cache.get("v1", "Pod", namespace, name)
            except NotRegistered:
                cached = None
            if cached is not None:
                return cached
        try:
            found: Mapping[str, Any] = await self.client.get("v1", "Pod", name, namespace)
        except NotFound:
            return None
        return found

    async def node_labels(self, name: str) -> Mapping[str, str]:
        """See :class:`ClusterReads`."""
        node = await self.client.get("v1", "Node", name)
        labels = (node.get("metadata") or {}).get("labels") or {}
        return {str(k): str(v) for k, v in labels.items()}


@attrs.frozen
class PodWebhooks:
    """The pod webhooks' inputs: the reads, the recorder of the withheld-labels Events
    (None: none recorded), the operator's gates and ``allowedNodeLabels``."""

    reads: ClusterReads
    recorder: EventRecorder | None = None
    gates: FeatureGates = None
    allowed_node_labels: Collection[str] = frozenset()

    @property
    def enabled(self) -> bool:
        """Whether the NodeLabelDelivery gate is on."""
        return gate_enabled(self.gates, NODE_LABEL_DELIVERY)


def _request(body: Any, resource: str, sub_resource: str = "") -> tuple[str, Mapping[str, Any]]:
    if not isinstance(body, Mapping) or body.get("kind") != "AdmissionReview":
        raise BadRequest("request body is not an AdmissionReview")
    api_version = body.get("apiVersion")
    request = body.get("request")
    if api_version not in ADMISSION_API_VERSIONS or not isinstance(request, Mapping):
        raise BadRequest(f"expected an AdmissionReview of {' or '.join(ADMISSION_API_VERSIONS)}")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadRequest("AdmissionReview request has no uid")
    res = request.get("resource") or {}
    if res.get("resource") != resource or (request.get("subResource") or "") != sub_resource:
        where = f"{resource}/{sub_resource}" if sub_resource else resource
        raise BadRequest(f"this webhook mutates {where}", uid)
    if not isinstance(request.get("object"), Mapping):
        raise BadRequest("request without an object", uid)
    return str(api_version), request


def _answer(api_version: str, uid: str, patch: list[dict[str, Any]] | None) -> dict[str, Any]:
    response: dict[str, Any] = {"uid": uid, "allowed": True}
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode("ascii")
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


def _denied(api_version: str, uid: str, message: str) -> dict[str, Any]:
    status: dict[str, Any] = {"metadata": {}, "status": "Failure", "message": message}
    status.update(reason="Forbidden", code=403)
    response = {"uid": uid, "allowed": False, "status": status}
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


def _label_refs(group: Mapping[str, Any]) -> list[LabelRef]:
    refs: list[LabelRef] = []
    for raw in group.get("labelRefs") or ():
        try:
            refs.append(structure(LabelRef, raw))
        except StructureError:  # the CRD schema keeps this from happening
            continue
    return refs


def _group(cluster: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    for group in (cluster.get("spec") or {}).get("workerGroupSpecs") or ():
        if isinstance(group, Mapping) and group.get("groupName") == name:
            return group
    return None


async def mutate_pod(hooks: PodWebhooks, body: Any) -> dict[str, Any]:
    """Answer a pods CREATE AdmissionReview (see the module doc)."""
    api_version, request = _request(body, "pods")
    uid = str(request["uid"])
    pod: Mapping[str, Any] = request["object"]
    if request.get("operation") != "CREATE" or not hooks.enabled:
        return _answer(api_version, uid, None)
    labels = (pod.get("metadata") or {}).get("labels") or {}
    cluster_name = labels.get(RAY_CLUSTER_LABEL_KEY) or ""
    if not cluster_name or labels.get(RAY_NODE_TYPE_LABEL_KEY) != WORKER_NODE:
        return _answer(api_version, uid, None)
    namespace = (pod.get("metadata") or {}).get("namespace") or request.get("namespace") or ""
    group_name = labels.get(RAY_NODE_GROUP_LABEL_KEY) or ""
    try:
        cluster = await hooks.reads.raycluster(namespace, cluster_name)
    except KubeError as exc:
        return _denied(
            api_version,
            uid,
            f"cannot read RayCluster {namespace}/{cluster_name} for a worker pod of group "
            f"{group_name}: {exc}",
        )
    where = f"RayCluster {namespace}/{cluster_name}"
    if cluster is None:
        return _denied(
            api_version,
            uid,
            f"cannot read {where} for a worker pod of group {group_name}: not found",
        )
    group = _group(cluster, group_name)
    if group is None:
        return _denied(api_version, uid, f"worker group {group_name} not found in {where}")
    if not group.get("labelRefs"):
        return _answer(api_version, uid, None)
    try:
        patch = prepare_worker_patch(pod)
    except PodRefused as exc:
        return _denied(api_version, uid, f"worker pod of group {group_name} in {where}: {exc}")
    log.info(
        "prepared pod for node label delivery",
        namespace=namespace,
        ray_cluster=cluster_name,
        group=group_name,
        label_refs=len(group["labelRefs"]),
    )
    return _answer(api_version, uid, patch)


def _labelled_group(
    clusters: list[Mapping[str, Any]], pod_labels: Mapping[str, str]
) -> Mapping[str, Any] | None:
    if pod_labels.get(RAY_NODE_TYPE_LABEL_KEY) != WORKER_NODE:
        return None
    for cluster in clusters:
        if (cluster.get("metadata") or {}).get("name") == pod_labels.get(RAY_CLUSTER_LABEL_KEY):
            group = _group(cluster, pod_labels.get(RAY_NODE_GROUP_LABEL_KEY) or "")
            return group if group is not None and group.get("labelRefs") else None
    return None


async def mutate_binding(hooks: PodWebhooks, body: Any) -> dict[str, Any]:
    """Answer a pods/binding CREATE AdmissionReview (see the module doc)."""
    api_version, request = _request(body, "pods", "binding")
    uid = str(request["uid"])
    binding: Mapping[str, Any] = request["object"]
    if request.get("operation") != "CREATE" or not hooks.enabled:
        return _answer(api_version, uid, None)
    annotations = (binding.get("metadata") or {}).get("annotations") or {}
    node_name = (binding.get("target") or {}).get("name") or ""
    if RAY_NODE_LABELS_ANNOTATION_KEY in annotations or not node_name:
        return _answer(api_version, uid, None)
    namespace = str(request.get("namespace") or "")
    pod_name = str(request.get("name") or (binding.get("metadata") or {}).get("name") or "")
    try:
        clusters = [
            c
            for c in await hooks.reads.rayclusters(namespace)
            if any(g.get("labelRefs") for g in (c.get("spec") or {}).get("workerGroupSpecs") or ())
        ]
    except KubeError as exc:
        log.error(
            "cannot list RayClusters, admitting the binding without node labels", error=str(exc)
        )
        return _answer(api_version, uid, None)
    if not clusters:  # decided without a read: no group of this namespace delivers labels
        return _answer(api_version, uid, None)
    try:
        pod = await hooks.reads.pod(namespace, pod_name)
    except KubeError as exc:
        log.error("cannot read pod, admitting the binding without node labels", error=str(exc))
        return _answer(api_version, uid, None)
    pod_meta = (pod or {}).get("metadata") or {}
    group = _labelled_group(clusters, pod_meta.get("labels") or {})
    if pod is None or group is None:
        return _answer(api_version, uid, None)
    try:
        node_labels = await hooks.reads.node_labels(node_name)
        labels = node_labels_for(node_labels, _label_refs(group), hooks.allowed_node_labels)
    except (KubeError, NodeLabelsWithheld) as exc:
        cause = str(exc) if isinstance(exc, NodeLabelsWithheld) else f"cannot read node: {exc}"
        _withhold(hooks, request, pod_meta, node_name, cause)
        return _answer(api_version, uid, None)
    log.info("delivering node labels", pod=f"{namespace}/{pod_name}", node=node_name, labels=labels)
    return _answer(api_version, uid, binding_patch(binding, labels))


def _withhold(
    hooks: PodWebhooks,
    request: Mapping[str, Any],
    pod_meta: Mapping[str, Any],
    node_name: str,
    cause: str,
) -> None:
    message = withheld_message(node_name, cause)
    log.info(message, pod=f"{pod_meta.get('namespace')}/{pod_meta.get('name')}")
    if hooks.recorder is None or request.get("dryRun"):
        return
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": dict(pod_meta)}
    hooks.recorder.event(pod, "Warning", WITHHELD_REASON, message, WITHHELD_ACTION)
