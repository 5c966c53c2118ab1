"""What the RayCluster controller creates for a new RayCluster, computed offline.

The same builders and the same conditions as the reconcile steps (see
:mod:`~kuberay.controllers.raycluster.children` and
:mod:`~kuberay.controllers.raycluster.pods`), in the same order: autoscaler
ServiceAccount/Role/RoleBinding, Ingress or Route, auth Secret, head Service,
headless Service, serve Service, embedded-GCS PVC, head pod, worker pods (one per
desired replica; a multi-host replica is ``numOfHosts`` pods). Differences from
what lands in the apiserver, by necessity: no ``uid`` (owner references carry an
empty one), the auth token is a placeholder, pods keep ``generateName`` and
multi-host replica names are drawn from a fixed seed. Pods carry the operator's
``ray.io/pod-template-hash`` (:mod:`~kuberay.controllers.raycluster.templates`).
"""

from __future__ import annotations

import copy
import random

from kuberay.api.v1.convert import StructureError, structure, unstructure
from kuberay.api.v1.defaults import default_raycluster
from kuberay.api.v1.raycluster_types import RayCluster
from kuberay.api.v1.rules import (
    is_autoscaling_enabled,
    is_gcs_fault_tolerance_embedded,
    is_serve_service_enabled,
    num_of_hosts,
    worker_group_desired_replicas,
)
from kuberay.api.v1.validation import validate_raycluster
from kuberay.controllers.builders.auth import build_auth_secret, needs_auth_secret
from kuberay.controllers.builders.gcs_ft import build_gcs_storage_pvc
from kuberay.controllers.builders.hashing import ray_cluster_recreate_hash
from kuberay.controllers.builders.ingress import (
    build_head_ingress,
    build_head_route,
    ingress_enabled,
)
from kuberay.controllers.builders.names import generate_ray_worker_replica_group_name
from kuberay.controllers.builders.pod import build_head_pod, build_worker_pod
from kuberay.controllers.builders.rbac import (
    build_autoscaler_role,
    build_autoscaler_role_binding,
    build_autoscaler_service_account,
    user_provided_service_account,
)
from kuberay.controllers.builders.service import (
    build_head_service,
    build_headless_service,
    build_serve_service,
    needs_headless_service,
)
from kuberay.controllers.common.replicas import is_multi_host_indexing
from kuberay.controllers.raycluster.templates import stamp_template_hash
from kuberay.controllers.render import RenderError, RenderOptions
from kuberay.featuregates.kuberay_gates import GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

#: The auth Secret's token in rendered output (the operator generates a random one).
TOKEN_PLACEHOLDER = "<generated-by-operator>"
#: Seed of the multi-host replica-name suffixes in rendered output.
REPLICA_NAME_SEED = 0


def stored_form(cluster: Obj, namespace: str | None = None) -> Obj:
    """``cluster`` as the apiserver would store it: CRD defaults applied, namespace set
    (``namespace`` argument, else the object's, else ``default``)."""
    obj = copy.deepcopy(cluster)
    meta = obj.setdefault("metadata", {})
    meta["namespace"] = namespace or meta.get("namespace") or "default"
    if not meta.get("name"):
        raise RenderError("metadata.name is required")
    try:
        model = structure(RayCluster, obj)
    except (StructureError, ValueError) as exc:
        raise RenderError(f"invalid RayCluster: {exc}") from exc
    return unstructure(default_raycluster(model, controller=False))


def _with_namespace(obj: Obj, namespace: str) -> Obj:
    obj.setdefault("metadata", {}).setdefault("namespace", namespace)
    return obj


def render_raycluster(cluster: Obj, options: RenderOptions) -> list[Obj]:
    """The children of ``cluster`` in creation order (RenderError for an invalid spec,
    with the controller's validation messages)."""
    cluster = stored_form(cluster)
    errors = [
        e
        for e in validate_raycluster(cluster, gates=dict(options.features))
        if e.source != "webhook"
    ]
    if errors:
        raise RenderError("; ".join(str(e) for e in errors))
    ns = cluster["metadata"]["namespace"]
    spec = k8s.spec(cluster)
    out: list[Obj] = []
    if is_autoscaling_enabled(cluster):
        if not user_provided_service_account(cluster):
            out.append(build_autoscaler_service_account(cluster))
        out.append(build_autoscaler_role(cluster))
        out.append(build_autoscaler_role_binding(cluster))
    if ingress_enabled(cluster):
        out.append(
            build_head_route(cluster) if options.openshift_routes else build_head_ingress(cluster)
        )
    if needs_auth_secret(cluster):
        out.append(build_auth_secret(cluster, TOKEN_PLACEHOLDER))
    out.append(build_head_service(cluster, options.build))
    if needs_headless_service(cluster):
        out.append(build_headless_service(cluster))
    if is_serve_service_enabled(cluster):
        out.append(build_serve_service(cluster))
    storage = (spec.get("gcsFaultToleranceOptions") or {}).get("storage") or {}
    if (
        is_gcs_fault_tolerance_embedded(cluster)
        and options.features.get(GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE, False)
        and not storage.get("claimName")
    ):
        out.append(build_gcs_storage_pvc(cluster))
    if not spec.get("suspend"):
        out.extend(_pods(cluster, options))
    return [_with_namespace(o, ns) for o in out]


def _pods(cluster: Obj, options: RenderOptions) -> list[Obj]:
    features = dict(options.features)
    head = build_head_pod(
        cluster, options.build, features, recreate_hash=ray_cluster_recreate_hash(cluster)
    )
    stamp_template_hash(head, cluster, k8s.spec(cluster).get("headGroupSpec") or {})
    pods = [head]
    rng = random.Random(REPLICA_NAME_SEED)
    for group in k8s.spec(cluster).get("workerGroupSpecs") or []:
        if group.get("suspend"):
            continue
        made: list[Obj] = []
        desired = worker_group_desired_replicas(group)
        if is_multi_host_indexing(group, features):
            hosts = num_of_hosts(group)
            for index in range(desired // hosts):
                name = generate_ray_worker_replica_group_name(group.get("groupName", ""), rng)
                for host in range(hosts):
                    made.append(
                        build_worker_pod(
                            cluster,
                            group,
                            options.build,
                            features,
                            replica_index=index,
                            replica_group_name=name,
                            host_index=host,
                        )
                    )
        else:
            for index in range(desired):
                made.append(
                    build_worker_pod(cluster, group, options.build, features, replica_index=index)
                )
        for pod in made:
            stamp_template_hash(pod, cluster, group)
        pods.extend(made)
    return pods


__all__ = ["REPLICA_NAME_SEED", "TOKEN_PLACEHOLDER", "render_raycluster", "stored_form"]
