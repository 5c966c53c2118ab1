"""Stand-ins for the RayJob builders the parallel ``rayjob-builders`` branch delivers in
``kuberay.controllers.common`` (see the agreed contract): same names and shapes, replaced
by imports of the real ones when that branch is merged.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from kuberay.controllers.common import constants as C
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.common.owner import set_controller_reference
from kuberay.controllers.common.service import build_head_service

Obj = dict[str, Any]


# ----- builders -------------------------------------------------------------------------------
def _submitter_container(rayjob: Mapping[str, Any], cluster: Mapping[str, Any]) -> Obj:
    head = ((cluster.get("spec") or {}).get("headGroupSpec") or {}).get("template") or {}
    containers = (head.get("spec") or {}).get("containers") or [{}]
    return {
        "name": C.SUBMITTER_CONTAINER_NAME,
        "image": containers[0].get("image", ""),
        "resources": {
            "limits": {"cpu": "1", "memory": "1Gi"},
            "requests": {"cpu": "500m", "memory": "200Mi"},
        },
    }


def _submit_script(rayjob: Mapping[str, Any], address: str) -> str:
    spec = rayjob.get("spec") or {}
    status = rayjob.get("status") or {}
    job_id = status.get("jobId", "")
    return (
        f"if ! ray job status --address {address} {job_id} >/dev/null 2>&1 ; then "
        f"ray job submit --address {address} --no-wait --submission-id {job_id} -- "
        f"{str(spec.get('entrypoint', '')).strip()} ; fi ; "
        f"ray job logs --address {address} --follow {job_id}"
    )


def build_rayjob_cluster(
    rayjob: Mapping[str, Any],
    cluster_name: str,
    *,
    gates: Mapping[str, bool],
    options: BuildOptions,
) -> Obj:
    """The RayCluster a RayJob runs on (stand-in)."""
    meta = rayjob.get("metadata") or {}
    spec = rayjob.get("spec") or {}
    mode = spec.get("submissionMode") or "K8sJobMode"
    labels = dict(meta.get("labels") or {})
    labels.update(
        {
            C.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: meta.get("name", ""),
            C.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: "RayJob",
            C.RAY_JOB_SUBMISSION_MODE_LABEL_KEY: mode,
        }
    )
    annotations = dict(meta.get("annotations") or {})
    cluster: Obj = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": cluster_name,
            "namespace": meta.get("namespace"),
            "labels": labels,
        },
        "spec": copy.deepcopy(spec.get("rayClusterSpec") or {}),
    }
    if mode == "SidecarMode":
        annotations["ray.io/disable-provisioned-head-restart"] = "true"
        head_spec = cluster["spec"]["headGroupSpec"]["template"].setdefault("spec", {})
        sidecar = _submitter_container(rayjob, cluster)
        sidecar["command"] = ["/bin/bash", "-ce", "--"]
        sidecar["args"] = [_submit_script(rayjob, "http://127.0.0.1:8265")]
        head_spec["containers"] = [*head_spec.get("containers", []), sidecar]
        head_spec["restartPolicy"] = "Never"
    if annotations:
        cluster["metadata"]["annotations"] = annotations
    set_controller_reference(cluster, rayjob, "RayJob")
    return cluster


def build_submitter_job(
    rayjob: Mapping[str, Any],
    cluster: Mapping[str, Any],
    *,
    gates: Mapping[str, bool],
    options: BuildOptions,
) -> Obj:
    """The K8sJobMode submitter batch/v1 Job (stand-in)."""
    meta = rayjob.get("metadata") or {}
    spec = rayjob.get("spec") or {}
    status = rayjob.get("status") or {}
    labels = {
        C.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: meta.get("name", ""),
        C.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: "RayJob",
        C.KUBERNETES_CREATED_BY_LABEL_KEY: C.COMPONENT_NAME,
    }
    template = copy.deepcopy(spec.get("submitterPodTemplate")) or {
        "spec": {"containers": [_submitter_container(rayjob, cluster)], "restartPolicy": "Never"}
    }
    container = template["spec"]["containers"][0]
    if not container.get("command"):
        container["command"] = ["/bin/bash", "-ce", "--"]
        container["args"] = [_submit_script(rayjob, "http://" + str(status.get("dashboardURL")))]
    container["env"] = [
        *container.get("env", []),
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "RAY_DASHBOARD_ADDRESS", "value": status.get("dashboardURL", "")},
        {"name": "RAY_JOB_SUBMISSION_ID", "value": status.get("jobId", "")},
    ]
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {**(tmeta.get("labels") or {}), **labels}
    backoff = (spec.get("submitterConfig") or {}).get("backoffLimit")
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "labels": labels,
        },
        "spec": {"backoffLimit": 2 if backoff is None else backoff, "template": template},
    }
    set_controller_reference(job, rayjob, "RayJob")
    return job


def build_job_submit_body(rayjob: Mapping[str, Any]) -> Obj:
    """The HTTPMode POST /api/jobs/ body (stand-in: entrypoint and submission id)."""
    spec = rayjob.get("spec") or {}
    status = rayjob.get("status") or {}
    body: Obj = {"entrypoint": str(spec.get("entrypoint", "")).strip()}
    if status.get("jobId"):
        body["submission_id"] = status["jobId"]
    if spec.get("metadata"):
        body["metadata"] = dict(spec["metadata"])
    if spec.get("entrypointResources"):
        body["entrypoint_resources"] = json.loads(spec["entrypointResources"])
    return body


def build_rayjob_head_service(rayjob: Mapping[str, Any], cluster: Mapping[str, Any]) -> Obj:
    """``<rayjob>-head-svc`` selecting the cluster's head pod (stand-in)."""
    meta = rayjob.get("metadata") or {}
    service = build_head_service(cluster)
    name = str(meta.get("name", ""))
    service["metadata"] = {
        "name": f"{name}-head-svc",
        "namespace": meta.get("namespace"),
        "labels": {
            C.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: name,
            C.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: "RayJob",
            C.RAY_NODE_TYPE_LABEL_KEY: "head",
            "ray.io/identifier": f"{name}-head",
        },
    }
    set_controller_reference(service, rayjob, "RayJob")
    return service
