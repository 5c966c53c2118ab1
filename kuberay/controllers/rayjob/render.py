"""What the RayJob controller (and, for its cluster, the RayCluster controller) creates
for a new RayJob, computed offline with the controllers' own builders.

Children, in the order they appear (see :mod:`~kuberay.controllers.rayjob.machine`):

1. the RayCluster (:func:`~kuberay.controllers.common.build_rayjob_cluster`), then its own
   children as :func:`~kuberay.controllers.raycluster.render.render_raycluster` shows them;
2. in K8sJobMode, the submitter ``batch/v1`` Job (once the cluster is ready);
3. ``<rayjob>-head-svc`` (once the RayJob is Running: right after the submitter in
   K8sJobMode, SidecarMode and HTTPMode; in InteractiveMode only when ``spec.jobId`` is set).

Nothing is created for a suspended RayJob or one managed by another controller. With
``spec.clusterSelector`` the RayJob runs on an existing cluster the renderer cannot see:
no RayCluster and no head Service are created, and the K8sJobMode submitter (which is
built from that cluster) is not rendered.

Placeholders where the operator draws at random: the cluster name ``<rayjob>-<rand5>``,
then the job id (when ``spec.jobId`` is unset) ``<rayjob>-<rand5>``, are drawn in that
order from a random generator seeded with :data:`NAME_SEED`, so output is stable between runs (a
``metadata.generateName`` is completed the same way); the
RayCluster's own uid is unknown (its children's owner references carry an empty one).
"""

from __future__ import annotations

import copy
import random

from kuberay.api.v1.convert import StructureError, structure, unstructure
from kuberay.api.v1.defaults import default_rayjob
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.api.v1.rayjob_types import RayJob
from kuberay.api.v1.rules import managed_elsewhere, submission_mode, uses_cluster_selector
from kuberay.api.v1.validation import validate_rayjob
from kuberay.controllers.builders.names import (
    generate_ray_cluster_name,
    generate_ray_job_id,
    random_suffix,
)
from kuberay.controllers.builders.service import build_head_service, build_rayjob_head_service
from kuberay.controllers.builders.submit_command import RayJobBuildError
from kuberay.controllers.builders.submitter import build_submitter_job
from kuberay.controllers.raycluster.render import render_raycluster
from kuberay.controllers.raycluster.render import stored_form as cluster_stored_form
from kuberay.controllers.rayjob.machine import dashboard_url
from kuberay.controllers.rayjob.rayjob_cluster import build_rayjob_cluster
from kuberay.controllers.render import RenderError, RenderOptions
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

#: Seed of the random cluster-name and job-id suffixes in rendered output.
NAME_SEED = 0


def stored_rayjob(job: Obj) -> Obj:
    """``job`` as the apiserver would store it (CRD defaults, namespace ``default``
    when unset, a ``generateName`` completed with a seeded suffix); RenderError when it
    does not parse."""
    obj = copy.deepcopy(job)
    meta = obj.setdefault("metadata", {})
    meta["namespace"] = meta.get("namespace") or "default"
    if not meta.get("name") and meta.get("generateName"):
        # the apiserver appends five random characters; drawn from the same seed here
        meta["name"] = f"{meta.pop('generateName')}{random_suffix(random.Random(NAME_SEED))}"
    if not meta.get("name"):
        raise RenderError("metadata.name (or metadata.generateName) is required")
    obj.pop("status", None)
    try:
        model = structure(RayJob, obj)
    except (StructureError, ValueError) as exc:
        raise RenderError(f"invalid RayJob: {exc}") from exc
    return unstructure(default_rayjob(model))


def render_rayjob(job: Obj, options: RenderOptions) -> list[Obj]:
    """The children of a new RayJob in the order they appear (RenderError for a spec the
    controller rejects, with its validation messages)."""
    job = stored_rayjob(job)
    gates = dict(options.features)
    errors = [e for e in validate_rayjob(job, gates=gates) if e.source != "webhook"]
    if errors:
        raise RenderError("; ".join(str(e) for e in errors))
    spec = k8s.spec(job)
    if managed_elsewhere(job) or spec.get("suspend"):
        return []
    if uses_cluster_selector(spec):
        return []
    name = str(job["metadata"]["name"])
    rng = random.Random(NAME_SEED)
    cluster_name = generate_ray_cluster_name(name, rng)
    mode = submission_mode(spec)
    status = job.setdefault("status", {})
    if mode != JobSubmissionMode.INTERACTIVE_MODE:
        status["jobId"] = spec.get("jobId") or generate_ray_job_id(name, rng)
    status["rayClusterName"] = cluster_name
    try:
        cluster = build_rayjob_cluster(job, cluster_name, gates=gates, options=options.build)
    except RayJobBuildError as exc:
        raise RenderError(str(exc)) from exc
    out: list[Obj] = [copy.deepcopy(cluster), *render_raycluster(cluster, options)]
    stored_cluster = cluster_stored_form(cluster)
    url = dashboard_url(
        build_head_service(stored_cluster, options.build), options.build.cluster_domain
    )
    if url:
        status["dashboardURL"] = url
    if mode == JobSubmissionMode.INTERACTIVE_MODE and not spec.get("jobId"):
        return out  # Waiting until the user sets spec.jobId
    try:
        if mode == JobSubmissionMode.K8S_JOB_MODE:
            out.append(build_submitter_job(job, stored_cluster, gates=gates, options=options.build))
    except RayJobBuildError as exc:
        raise RenderError(str(exc)) from exc
    out.append(build_rayjob_head_service(job, stored_cluster, options=options.build))
    return out


__all__ = ["NAME_SEED", "render_rayjob", "stored_rayjob"]
