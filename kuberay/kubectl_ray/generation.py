"""KubeRay's plugin cluster config (``--file`` YAML and the ``create`` flags) and the
RayCluster / RayJob it generates (``pkg/util/generation`` in KubeRay's plugin).

Pure: config dict in, object dict out. Zero quantities are left out of requests and
limits; CPU is a request only (no CPU limit), as KubeRay generates it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kuberay.api.v1.constants import API_VERSION
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.gocompat.quantity import Quantity
from kuberay.kubectl_ray.common import (
    GOOGLE_TPU,
    NVIDIA_GPU,
    RAY_IMAGE,
    RAY_VERSION,
    TPU_ACCELERATOR_SELECTOR,
    TPU_TOPOLOGY_SELECTOR,
    validate_quantity,
)
from kuberay.kubectl_ray.context import CLIError

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

DEFAULT_GROUP = "default-group"
TPU_DOC_URL = "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus#availability"
GCSFUSE_VOLUME = "cluster-storage"
GCSFUSE_DRIVER = "gcsfuse.csi.storage.gke.io"

_TOP_KEYS = {
    "namespace",
    "name",
    "labels",
    "annotations",
    "ray-version",
    "image",
    "service-account",
    "head",
    "gke",
    "autoscaler",
    "worker-groups",
}
_HEAD_KEYS = {"cpu", "gpu", "memory", "ephemeral-storage", "ray-start-params", "node-selectors"}
_GROUP_KEYS = _HEAD_KEYS | {"name", "tpu", "num-of-hosts", "replicas"}


def default_config() -> Obj:
    """The defaults a ``--file`` config starts from."""
    return {
        "ray-version": RAY_VERSION,
        "image": RAY_IMAGE,
        "head": {"cpu": "2", "memory": "4Gi"},
        "worker-groups": [{"name": DEFAULT_GROUP, "replicas": 1, "cpu": "2", "memory": "4Gi"}],
    }


def _strict_keys(doc: Obj, allowed: set[str], where: str) -> None:
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise CLIError(f"failed to parse config file: unknown field(s) {unknown} in {where}")


def parse_config_file(path: str) -> Obj:
    """The config file over :func:`default_config` (strict: unknown keys are errors)."""
    file = Path(path)
    if not file.exists():
        raise CLIError(f"failed to parse config file: config file {path} does not exist")
    try:
        doc = yaml.safe_load(file.read_text()) or {}
    except yaml.YAMLError as exc:
        raise CLIError(f"failed to parse config file: failed to parse YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise CLIError("failed to parse config file: the top level must be a mapping")
    _strict_keys(doc, _TOP_KEYS, "the config")
    config = default_config()
    for key, value in doc.items():
        if key == "head" and isinstance(value, dict):
            _strict_keys(value, _HEAD_KEYS, "head")
            config["head"] = {**config["head"], **value}
        else:
            config[key] = value
    for i, group in enumerate(config.get("worker-groups") or []):
        if not isinstance(group, dict):
            raise CLIError(f"failed to parse config file: worker group {i} must be a mapping")
        _strict_keys(group, _GROUP_KEYS, f"worker group {i}")
    return config


def validate_tpu(tpu: str | None, num_of_hosts: int | None, selectors: dict[str, str]) -> None:
    """KubeRay's ValidateTPU: TPUs need both GKE TPU node selectors and hosts > 0."""
    if not tpu or Quantity.parse(str(tpu)).is_zero():
        return
    if num_of_hosts == 0:
        raise CLIError("numOfHosts cannot be 0 when using TPU")
    for key in (TPU_ACCELERATOR_SELECTOR, TPU_TOPOLOGY_SELECTOR):
        if key not in (selectors or {}):
            raise CLIError(
                f"{key} is not set in --worker-node-selectors. See {TPU_DOC_URL} for "
                "supported values"
            )


def validate_config(config: Obj) -> None:
    """Resource quantities of head and groups, TPU rules, gcsfuse required fields."""
    head = config.get("head") or {}
    for key in ("cpu", "gpu", "memory", "ephemeral-storage"):
        if head.get(key) is not None:
            validate_quantity(str(head[key]), key)
    for i, group in enumerate(config.get("worker-groups") or []):
        for key in ("cpu", "gpu", "tpu", "memory", "ephemeral-storage"):
            if group.get(key) is not None:
                validate_quantity(str(group[key]), f"{key} (worker group {i})")
        validate_tpu(group.get("tpu"), group.get("num-of-hosts"), group.get("node-selectors"))
    fuse = ((config.get("gke") or {}).get("gcsfuse")) or None
    if fuse is not None:
        if not fuse.get("bucket-name"):
            raise CLIError(".gcsfuse.bucket-name is required")
        if not fuse.get("mount-path"):
            raise CLIError(".gcsfuse.mount-path is required")


def _resources(
    cpu: Any, memory: Any, storage: Any, gpu: Any, tpu: Any, *, with_cpu: bool
) -> dict[str, str]:
    out: dict[str, str] = {}
    pairs = [
        ("cpu", cpu if with_cpu else None),
        ("memory", memory),
        ("ephemeral-storage", storage),
        (NVIDIA_GPU, gpu),
        (GOOGLE_TPU, tpu),
    ]
    for name, value in pairs:
        if value is None or str(value) == "":
            continue
        q = Quantity.parse(str(value))
        if not q.is_zero():
            out[name] = str(q)
    return out


def _container(name: str, image: str, part: Obj, tpu: Any = None) -> Obj:
    requests = _resources(
        part.get("cpu"),
        part.get("memory"),
        part.get("ephemeral-storage"),
        part.get("gpu"),
        tpu,
        with_cpu=True,
    )
    limits = _resources(
        None,
        part.get("memory"),
        part.get("ephemeral-storage"),
        part.get("gpu"),
        tpu,
        with_cpu=False,
    )
    resources: Obj = {}
    if limits:
        resources["limits"] = limits
    if requests:
        resources["requests"] = requests
    return {"name": name, "image": image, "resources": resources}


def _pod_spec(container: Obj, selectors: dict[str, str] | None, sa: str | None) -> Obj:
    spec: Obj = {"containers": [container]}
    if selectors:
        spec["nodeSelector"] = dict(selectors)
    if sa:
        spec["serviceAccountName"] = sa
    return spec


def cluster_spec(config: Obj) -> Obj:
    """The ``RayClusterSpec`` of a config."""
    image = str(config.get("image") or RAY_IMAGE)
    sa = config.get("service-account") or None
    head = config.get("head") or {}
    head_container = _container("ray-head", image, head)
    head_container["ports"] = [
        {"containerPort": 6379, "name": "gcs-server"},
        {"containerPort": 8265, "name": "dashboard"},
        {"containerPort": 10001, "name": "client"},
    ]
    groups: list[Obj] = []
    for i, group in enumerate(config.get("worker-groups") or []):
        name = group.get("name") or (DEFAULT_GROUP if i == 0 else f"{DEFAULT_GROUP}-{i}")
        spec: Obj = {
            "groupName": name,
            "replicas": int(group.get("replicas") or 0),
            "rayStartParams": dict(group.get("ray-start-params") or {}),
            "template": {
                "spec": _pod_spec(
                    _container("ray-worker", image, group, group.get("tpu")),
                    group.get("node-selectors"),
                    sa,
                )
            },
        }
        if group.get("num-of-hosts") is not None:
            spec["numOfHosts"] = int(group["num-of-hosts"])
        groups.append(spec)
    out: Obj = {
        "rayVersion": str(config.get("ray-version") or RAY_VERSION),
        "headGroupSpec": {
            "rayStartParams": dict(head.get("ray-start-params") or {}),
            "template": {"spec": _pod_spec(head_container, head.get("node-selectors"), sa)},
        },
        "workerGroupSpecs": groups,
    }
    version = (config.get("autoscaler") or {}).get("version")
    if version:
        out["enableInTreeAutoscaling"] = True
        out["autoscalerOptions"] = {"version": version}
    fuse = (config.get("gke") or {}).get("gcsfuse")
    if fuse:
        _add_gcsfuse(out, fuse)
    return out


def _add_gcsfuse(spec: Obj, fuse: Obj) -> None:
    attributes = {"bucketName": str(fuse["bucket-name"])}
    if fuse.get("mount-options"):
        attributes["mountOptions"] = str(fuse["mount-options"])
    for key, attr in (
        ("disable-metrics", "disableMetrics"),
        ("gcsfuse-metadata-prefetch-on-mount", "gcsfuseMetadataPrefetchOnMount"),
        ("skip-csi-bucket-access-check", "skipCSIBucketAccessCheck"),
    ):
        if fuse.get(key) is not None:
            attributes[attr] = "true" if fuse[key] else "false"
    annotations: dict[str, str] = {}
    res = fuse.get("resources") or {}
    if res.get("cpu"):
        annotations["gke-gcsfuse/cpu-request"] = str(res["cpu"])
    if res.get("memory"):
        annotations["gke-gcsfuse/memory-limit"] = str(res["memory"])
        annotations["gke-gcsfuse/memory-request"] = str(res["memory"])
    if res.get("ephemeral-storage"):
        annotations["gke-gcsfuse/ephemeral-storage-limit"] = str(res["ephemeral-storage"])
        annotations["gke-gcsfuse/ephemeral-storage-request"] = str(res["ephemeral-storage"])
    templates = [spec["headGroupSpec"]["template"]] + [
        g["template"] for g in spec["workerGroupSpecs"]
    ]
    for template in templates:
        pod = template["spec"]
        pod.setdefault("volumes", []).append(
            {
                "name": GCSFUSE_VOLUME,
                "csi": {"driver": GCSFUSE_DRIVER, "volumeAttributes": attributes},
            }
        )
        pod["containers"][0].setdefault("volumeMounts", []).append(
            {"name": GCSFUSE_VOLUME, "mountPath": str(fuse["mount-path"])}
        )
        template.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)


def generate_raycluster(config: Obj) -> Obj:
    """The RayCluster object of a config (name and namespace must be set)."""
    meta: Obj = {"name": config["name"], "namespace": config["namespace"]}
    if config.get("labels"):
        meta["labels"] = dict(config["labels"])
    if config.get("annotations"):
        meta["annotations"] = dict(config["annotations"])
    return {
        "apiVersion": API_VERSION,
        "kind": "RayCluster",
        "metadata": meta,
        "spec": cluster_spec(config),
    }


def generate_rayjob(
    name: str,
    namespace: str,
    entrypoint: str,
    config: Obj,
    *,
    job_id: str,
    shutdown_after_job_finishes: bool,
    ttl_seconds_after_finished: int,
) -> Obj:
    """The InteractiveMode RayJob ``job submit`` creates when no ``-f`` is given."""
    return {
        "apiVersion": API_VERSION,
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "submissionMode": JobSubmissionMode.INTERACTIVE_MODE.value,
            "entrypoint": entrypoint,
            "jobId": job_id,
            "ttlSecondsAfterFinished": ttl_seconds_after_finished,
            "shutdownAfterJobFinishes": shutdown_after_job_finishes,
            "rayClusterSpec": cluster_spec(config),
        },
    }


__all__ = [
    "DEFAULT_GROUP",
    "cluster_spec",
    "default_config",
    "generate_raycluster",
    "generate_rayjob",
    "parse_config_file",
    "validate_config",
    "validate_tpu",
]
