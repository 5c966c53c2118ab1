"""The RayJob submitter: the K8sJobMode batch/v1 Job and the SidecarMode head container.

* Pod template (K8sJobMode): a deep copy of ``submitterPodTemplate``, or one container
  ``ray-job-submitter`` (image of the cluster's head container, requests 500m/200Mi, limits
  1/1Gi) with ``restartPolicy: Never``. Only container 0 is configured.
* Container 0 gets ``/bin/bash -ce --`` (``-cel`` with ``ENABLE_LOGIN_SHELL``) and the submit
  script as its only argument unless it already has a ``command`` (SidecarMode always gets
  them); then ``PYTHONUNBUFFERED=1``, ``RAY_DASHBOARD_ADDRESS=<status.dashboardURL>`` and
  ``RAY_JOB_SUBMISSION_ID=<status.jobId>`` are appended (even when already present), and the
  cluster's token-auth env vars when its auth mode is ``token``.
* Template labels gain ``ray.io/originated-from-cr-name``, ``ray.io/originated-from-crd=RayJob``
  and ``app.kubernetes.io/created-by=kuberay-operator``; a cluster with
  ``enableK8sTokenAuth`` adds the projected ``ray-token`` volume.
* The Job: named like the RayJob, the same three labels, ``backoffLimit`` =
  ``submitterConfig.backoffLimit`` or 2, controller owner reference to the RayJob.
* SidecarMode: the default container configured for SidecarMode, with container
  ``restartPolicy: OnFailure`` when the ``SidecarSubmitterRestart`` gate is on.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.api.v1.rules import is_auth_enabled, is_k8s_auth_enabled, submitter_backoff_limit
from kuberay.controllers.common import gates as feature_gates
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import (
    as_list,
    as_map,
    as_str,
    child_dict,
    metadata,
    pod_spec_of_template,
    spec,
    str_map,
)
from kuberay.controllers.common.options import BuildOptions

from .auth import add_ray_token_volume, set_container_token_auth_env_vars
from .owner import controller_owner_reference
from .submit_command import RayJobBuildError, build_job_submit_command

__all__ = [
    "build_submitter_job",
    "build_submitter_pod_template",
    "build_submitter_sidecar_container",
    "default_submitter_container",
    "rayjob_child_labels",
]

_PYTHONUNBUFFERED: Final = "PYTHONUNBUFFERED"


def rayjob_child_labels(rayjob: Mapping[str, Any]) -> dict[str, str]:
    """Labels of the submitter Job and its pods: originated-from the RayJob, created by us."""
    return {
        c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: as_str(metadata(rayjob).get("name")),
        c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: c.KIND_RAYJOB,
        c.KUBERNETES_CREATED_BY_LABEL_KEY: c.COMPONENT_NAME,
    }


def _head_image(cluster_spec: Mapping[str, Any]) -> str:
    head = as_map(cluster_spec.get("headGroupSpec"))
    containers = as_list(pod_spec_of_template(head.get("template")).get("containers"))
    if not containers:
        raise RayJobBuildError("the RayCluster has no head container to take the image from")
    return as_str(as_map(containers[RAY_CONTAINER_INDEX]).get("image"))


def default_submitter_container(cluster_spec: Mapping[str, Any]) -> dict[str, Any]:
    """KubeRay ``GetDefaultSubmitterContainer`` (image of the head's Ray container)."""
    container: dict[str, Any] = {"name": c.SUBMITTER_CONTAINER_NAME}
    image = _head_image(cluster_spec)
    if image:
        container["image"] = image
    container["resources"] = {
        "limits": {"cpu": "1", "memory": "1Gi"},
        "requests": {"cpu": "500m", "memory": "200Mi"},
    }
    return container


def _env_var(name: str, value: str) -> dict[str, str]:
    """A ``corev1.EnvVar`` as Go writes it (an empty value is left out)."""
    return {"name": name, "value": value} if value else {"name": name}


def _configure_submitter_container(
    container: MutableMapping[str, Any],
    rayjob: Mapping[str, Any],
    cluster: Mapping[str, Any],
    submission_mode: str,
    gates: Mapping[str, bool],
    options: BuildOptions,
) -> None:
    """KubeRay ``configureSubmitterContainer`` (in place)."""
    command = build_job_submit_command(rayjob, submission_mode=submission_mode, gates=gates)
    if not as_list(container.get("command")) or submission_mode == JobSubmissionMode.SIDECAR_MODE:
        container["command"] = options.container_command("e")
        container["args"] = [" ".join(command)]
    status = as_map(rayjob.get("status"))
    container["env"] = [
        *as_list(container.get("env")),
        _env_var(_PYTHONUNBUFFERED, "1"),
        _env_var(c.RAY_DASHBOARD_ADDRESS, as_str(status.get("dashboardURL"))),
        _env_var(c.RAY_JOB_SUBMISSION_ID, as_str(status.get("jobId"))),
    ]
    if is_auth_enabled(cluster):
        set_container_token_auth_env_vars(
            as_str(metadata(cluster).get("name")),
            container,
            as_map(spec(cluster).get("authOptions")),
        )


def build_submitter_pod_template(
    rayjob: Mapping[str, Any],
    cluster: Mapping[str, Any],
    *,
    gates: Mapping[str, bool],
    options: BuildOptions,
) -> dict[str, Any]:
    """KubeRay ``getSubmitterTemplate``: the K8sJobMode submitter pod template."""
    user_template = spec(rayjob).get("submitterPodTemplate")
    template: dict[str, Any]
    if isinstance(user_template, Mapping):
        template = copy.deepcopy(dict(user_template))
    else:
        template = {
            "spec": {
                "containers": [default_submitter_container(spec(cluster))],
                "restartPolicy": "Never",
            }
        }
    pod_spec = child_dict(template, "spec")
    containers = [dict(as_map(x)) for x in as_list(pod_spec.get("containers"))]
    if not containers:
        raise RayJobBuildError("submitterPodTemplate has no container to run the submitter in")
    pod_spec["containers"] = containers
    _configure_submitter_container(
        containers[RAY_CONTAINER_INDEX],
        rayjob,
        cluster,
        JobSubmissionMode.K8S_JOB_MODE,
        gates,
        options,
    )
    if is_k8s_auth_enabled(as_map(spec(cluster).get("authOptions"))):
        add_ray_token_volume(pod_spec)
    template_meta = child_dict(template, "metadata")
    labels = str_map(template_meta.get("labels"))
    template_meta["labels"] = {**labels, **rayjob_child_labels(rayjob)}
    return template


def build_submitter_job(
    rayjob: Mapping[str, Any],
    cluster: Mapping[str, Any],
    *,
    gates: Mapping[str, bool],
    options: BuildOptions,
) -> dict[str, Any]:
    """The K8sJobMode submitter ``batch/v1`` Job KubeRay creates (``createNewK8sJob``).

    ``cluster`` is the RayCluster the job runs on (the one created for the RayJob or the one
    its ``clusterSelector`` names); the script dials ``status.dashboardURL`` of the RayJob and
    submits ``status.jobId``. Raises :class:`RayJobBuildError` when the script cannot be built.
    """
    meta = metadata(rayjob)
    template = build_submitter_pod_template(rayjob, cluster, gates=gates, options=options)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": as_str(meta.get("name")),
            "namespace": as_str(meta.get("namespace")),
            "labels": rayjob_child_labels(rayjob),
            "ownerReferences": [controller_owner_reference(rayjob, c.KIND_RAYJOB)],
        },
        "spec": {"backoffLimit": submitter_backoff_limit(spec(rayjob)), "template": template},
    }


def build_submitter_sidecar_container(
    rayjob: Mapping[str, Any],
    cluster: Mapping[str, Any],
    *,
    gates: Mapping[str, bool],
    options: BuildOptions,
) -> dict[str, Any]:
    """KubeRay ``getSubmitterContainer``: the SidecarMode submitter added to the head pod."""
    container = default_submitter_container(spec(cluster))
    _configure_submitter_container(
        container, rayjob, cluster, JobSubmissionMode.SIDECAR_MODE, gates, options
    )
    if feature_gates.feature_enabled(gates, feature_gates.SIDECAR_SUBMITTER_RESTART):
        container["restartPolicy"] = "OnFailure"
    return container
