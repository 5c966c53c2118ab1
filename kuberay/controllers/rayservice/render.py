"""What the RayService controller (and, for its cluster, the RayCluster controller)
creates for a new RayService, computed offline with the controllers' own builders.

Children, in the order they appear (see
:meth:`~kuberay.controllers.rayservice.reconciler.RayServiceReconciler.reconcile`):

1. the pending RayCluster
   (:func:`~kuberay.controllers.rayservice.cluster_builder.build_ray_cluster_for_ray_service`), then
   its own children as :func:`~kuberay.controllers.raycluster.render.render_raycluster`
   shows them;
2. once Serve on that cluster is ready, ``<rayservice>-head-svc`` and the serve Service
   (``<rayservice>-serve-svc`` or ``spec.serveService``), both owned by the RayService.

Nothing is created for a suspended RayService or one managed by another controller. When
the serve Service cannot be built (no serve port and no ``spec.serveService``), the
controller retries forever without creating either Service; so does the renderer's output.

Placeholders where the operator draws at random: the cluster name is
``<rayservice>-<rand5>`` drawn from a random generator seeded with :data:`NAME_SEED`; the
RayCluster's own uid is unknown (its children's owner references carry an empty one).
"""

from __future__ import annotations

import copy
import random

from kuberay.api.v1 import constants as C
from kuberay.api.v1.convert import StructureError, structure, unstructure
from kuberay.api.v1.defaults import default_rayservice
from kuberay.api.v1.rayservice_types import RayService
from kuberay.api.v1.rules import managed_elsewhere
from kuberay.api.v1.validation import validate_rayservice
from kuberay.controllers.builders.names import generate_ray_cluster_name
from kuberay.controllers.builders.owner import set_controller_reference
from kuberay.controllers.builders.service import (
    ServiceBuildError,
    build_head_service_for_ray_service,
    build_serve_service_for_ray_service,
)
from kuberay.controllers.raycluster.render import render_raycluster
from kuberay.controllers.raycluster.render import stored_form as cluster_stored_form
from kuberay.controllers.rayservice.cluster_builder import build_ray_cluster_for_ray_service
from kuberay.controllers.render import RenderError, RenderOptions
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

#: Seed of the random cluster-name suffix in rendered output.
NAME_SEED = 0


def stored_rayservice(service: Obj) -> Obj:
    """``service`` as the apiserver would store it (CRD defaults, namespace ``default``
    when unset); RenderError when it does not parse."""
    obj = copy.deepcopy(service)
    meta = obj.setdefault("metadata", {})
    meta["namespace"] = meta.get("namespace") or "default"
    if not meta.get("name"):
        raise RenderError("metadata.name is required")
    obj.pop("status", None)
    try:
        model = structure(RayService, obj)
    except (StructureError, ValueError) as exc:
        raise RenderError(f"invalid RayService: {exc}") from exc
    return unstructure(default_rayservice(model))


def render_rayservice(service: Obj, options: RenderOptions) -> list[Obj]:
    """The children of a new RayService in the order they appear (RenderError for a spec
    the controller rejects, with its validation messages)."""
    rs = stored_rayservice(service)
    features = dict(options.features)
    errors = [e for e in validate_rayservice(rs, gates=features) if e.source != "webhook"]
    if errors:
        raise RenderError("; ".join(str(e) for e in errors))
    spec = k8s.spec(rs)
    if managed_elsewhere(rs) or spec.get("suspend"):
        return []
    ns = rs["metadata"]["namespace"]
    name = generate_ray_cluster_name(str(rs["metadata"]["name"]), random.Random(NAME_SEED))
    rs["status"] = {"pendingServiceStatus": {"rayClusterName": name}}
    cluster = build_ray_cluster_for_ray_service(rs, name, features=features)
    out: list[Obj] = [copy.deepcopy(cluster), *render_raycluster(cluster, options)]
    stored_cluster = cluster_stored_form(cluster)
    try:
        services = [
            build_head_service_for_ray_service(rs, stored_cluster, options.build),
            build_serve_service_for_ray_service(rs, stored_cluster, features),
        ]
    except ServiceBuildError:
        return out
    for svc in services:
        svc["metadata"]["namespace"] = ns
        set_controller_reference(svc, rs, C.KIND_RAYSERVICE)
        out.append(svc)
    return out


__all__ = ["NAME_SEED", "render_rayservice", "stored_rayservice"]
