"""The RayCluster a RayJob creates (KubeRay ``constructRayClusterForRayJob``).

* name: the one chosen for the RayJob (``status.rayClusterName``), namespace of the RayJob;
* labels: the RayJob's labels, then ``ray.io/originated-from-cr-name=<rayjob>``,
  ``ray.io/originated-from-crd=RayJob`` and ``ray.io/job-submission-mode=<spec.submissionMode>``
  (ours win);
* annotations: the RayJob's, plus ``ray.io/disable-provisioned-head-restart: "true"`` in
  SidecarMode;
* spec: a deep copy of ``rayClusterSpec``; in SidecarMode the submitter container is appended
  to the head pod template and the head ``restartPolicy`` becomes ``Never``;
* a controller owner reference to the RayJob.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.api.v1.rules import submission_mode
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.controllers.builders.submit_command import RayJobBuildError
from kuberay.controllers.builders.submitter import build_submitter_sidecar_container
from kuberay.controllers.common.objects import as_list, as_str, child_dict, metadata, spec, str_map
from kuberay.controllers.common.options import BuildOptions

__all__ = ["build_rayjob_cluster", "rayjob_cluster_labels"]


def rayjob_cluster_labels(rayjob: Mapping[str, Any]) -> dict[str, str]:
    """The labels of the RayCluster created for ``rayjob``."""
    meta = metadata(rayjob)
    return {
        **str_map(meta.get("labels")),
        c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: as_str(meta.get("name")),
        c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: c.KIND_RAYJOB,
        c.RAY_JOB_SUBMISSION_MODE_LABEL_KEY: as_str(spec(rayjob).get("submissionMode")),
    }


def build_rayjob_cluster(
    rayjob: Mapping[str, Any],
    cluster_name: str,
    *,
    gates: Mapping[str, bool],
    options: BuildOptions,
) -> dict[str, Any]:
    """The RayCluster object KubeRay creates for ``rayjob`` under ``cluster_name``.

    Raises :class:`RayJobBuildError` when the RayJob has no ``rayClusterSpec`` or, in
    SidecarMode, when the submitter container cannot be built.
    """
    cluster_spec = spec(rayjob).get("rayClusterSpec")
    if not isinstance(cluster_spec, Mapping):
        raise RayJobBuildError("the RayJob has no rayClusterSpec to create a RayCluster from")
    meta = metadata(rayjob)
    sidecar_mode = submission_mode(spec(rayjob)) == JobSubmissionMode.SIDECAR_MODE
    annotations = str_map(meta.get("annotations"))
    if sidecar_mode:
        annotations[c.DISABLE_PROVISIONED_HEAD_RESTART_ANNOTATION_KEY] = "true"
    cluster_meta: dict[str, Any] = {
        "name": cluster_name,
        "namespace": as_str(meta.get("namespace")),
        "labels": rayjob_cluster_labels(rayjob),
    }
    if annotations:
        cluster_meta["annotations"] = annotations
    cluster_meta["ownerReferences"] = [controller_owner_reference(rayjob, c.KIND_RAYJOB)]
    cluster: dict[str, Any] = {
        "apiVersion": c.API_VERSION,
        "kind": c.KIND_RAYCLUSTER,
        "metadata": cluster_meta,
        "spec": copy.deepcopy(dict(cluster_spec)),
    }
    if sidecar_mode:
        sidecar = build_submitter_sidecar_container(rayjob, cluster, gates=gates, options=options)
        head = child_dict(cluster["spec"], "headGroupSpec")
        pod_spec = child_dict(child_dict(head, "template"), "spec")
        pod_spec["containers"] = [*as_list(pod_spec.get("containers")), sidecar]
        pod_spec["restartPolicy"] = "Never"
    return cluster
