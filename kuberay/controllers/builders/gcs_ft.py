"""GCS fault tolerance: pod wiring (Redis or embedded RocksDB) and the embedded-storage PVC.

Enabled by the legacy annotation ``ray.io/ft-enabled: "true"`` or by ``gcsFaultToleranceOptions``.

* Head pods always carry ``ray.io/ft-enabled: "true"|"false"``.
* Workers get ``RAY_gcs_rpc_server_reconnect_timeout_s=600`` unless set.
* Redis backend (head): storage namespace = cluster UID, overridden by the annotation
  ``ray.io/external-storage-namespace``, overridden by ``externalStorageNamespace``; written to
  the pod annotation and ``RAY_external_storage_namespace`` (if absent). With options,
  ``RAY_REDIS_ADDRESS`` is always appended and ``redisUsername``/``redisPassword`` become
  ``REDIS_USERNAME``/``REDIS_PASSWORD`` env vars referenced from ``rayStartParams``
  (``$REDIS_USERNAME``/``$REDIS_PASSWORD``). With the annotation only, a ``redis-password``
  start parameter is copied into ``REDIS_PASSWORD`` (for the cleanup Job).
* Embedded backend (head): ``RAY_gcs_storage=rocksdb``, ``RAY_gcs_storage_path=/data/gcs``,
  mount ``gcs-storage`` at ``/data/gcs`` (``subPath``) backed by the PVC from
  :func:`build_gcs_storage_pvc` or ``storage.claimName``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.api.v1.rules import (
    gcs_storage_access_modes,
    gcs_storage_deletion_policy,
    gcs_storage_pvc_name,
    is_gcs_fault_tolerance_embedded,
    is_gcs_fault_tolerance_enabled,
)
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import as_list, as_map, env_var_exists, metadata, spec
from kuberay.gocompat.quantity import Quantity

from .owner import controller_owner_reference

__all__ = [
    "build_gcs_storage_pvc",
    "configure_gcs_fault_tolerance",
    "external_storage_namespace",
    "gcs_storage_retained_on_deletion",
]


def external_storage_namespace(cluster: Mapping[str, Any]) -> str:
    """Redis storage namespace: UID < annotation < ``externalStorageNamespace``."""
    meta = metadata(cluster)
    namespace = str(meta.get("uid") or "")
    annotations = as_map(meta.get("annotations"))
    if c.RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY in annotations:
        namespace = str(annotations[c.RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY])
    options = as_map(spec(cluster).get("gcsFaultToleranceOptions"))
    if options.get("externalStorageNamespace"):
        namespace = str(options["externalStorageNamespace"])
    return namespace


def _credential_env(name: str, credential: Mapping[str, Any]) -> dict[str, Any]:
    env: dict[str, Any] = {"name": name}
    if credential.get("value"):
        env["value"] = credential["value"]
    if credential.get("valueFrom") is not None:
        env["valueFrom"] = copy.deepcopy(credential["valueFrom"])
    return env


def _configure_redis(
    annotations: MutableMapping[str, str],
    container: MutableMapping[str, Any],
    cluster: Mapping[str, Any],
    params: MutableMapping[str, str],
) -> None:
    env: list[Any] = list(as_list(container.get("env")))
    storage_ns = external_storage_namespace(cluster)
    annotations[c.RAY_EXTERNAL_STORAGE_NS_ANNOTATION_KEY] = storage_ns
    if not env_var_exists(c.RAY_EXTERNAL_STORAGE_NS, env):
        env.append({"name": c.RAY_EXTERNAL_STORAGE_NS, "value": storage_ns})
    options = spec(cluster).get("gcsFaultToleranceOptions")
    if isinstance(options, Mapping):
        address = options.get("redisAddress")
        env.append(
            {"name": c.RAY_REDIS_ADDRESS, "value": address}
            if address
            else {"name": c.RAY_REDIS_ADDRESS}
        )
        username = options.get("redisUsername")
        if isinstance(username, Mapping):
            params["redis-username"] = "$REDIS_USERNAME"
            env.append(_credential_env(c.REDIS_USERNAME, username))
        password = options.get("redisPassword")
        if isinstance(password, Mapping):
            params["redis-password"] = "$REDIS_PASSWORD"
            env.append(_credential_env(c.REDIS_PASSWORD, password))
    elif not env_var_exists(c.REDIS_PASSWORD, env) and "redis-password" in params:
        value = params["redis-password"]
        env.append(
            {"name": c.REDIS_PASSWORD, "value": value} if value else {"name": c.REDIS_PASSWORD}
        )
    container["env"] = env


def _configure_embedded(
    pod_spec: MutableMapping[str, Any],
    container: MutableMapping[str, Any],
    cluster: Mapping[str, Any],
) -> None:
    env: list[Any] = list(as_list(container.get("env")))
    if not env_var_exists(c.RAY_GCS_STORAGE, env):
        env.append({"name": c.RAY_GCS_STORAGE, "value": c.GCS_STORAGE_ROCKSDB_VALUE})
    if not env_var_exists(c.RAY_GCS_STORAGE_PATH, env):
        env.append({"name": c.RAY_GCS_STORAGE_PATH, "value": c.GCS_STORAGE_MOUNT_PATH})
    container["env"] = env
    storage = as_map(as_map(spec(cluster).get("gcsFaultToleranceOptions")).get("storage"))
    mount: dict[str, Any] = {
        "name": c.GCS_STORAGE_VOLUME_NAME,
        "mountPath": c.GCS_STORAGE_MOUNT_PATH,
    }
    if storage.get("subPath"):
        mount["subPath"] = storage["subPath"]
    container["volumeMounts"] = [*as_list(container.get("volumeMounts")), mount]
    pod_spec["volumes"] = [
        *as_list(pod_spec.get("volumes")),
        {
            "name": c.GCS_STORAGE_VOLUME_NAME,
            "persistentVolumeClaim": {"claimName": gcs_storage_pvc_name(cluster)},
        },
    ]


def configure_gcs_fault_tolerance(
    annotations: MutableMapping[str, str],
    pod_spec: MutableMapping[str, Any],
    cluster: Mapping[str, Any],
    params: MutableMapping[str, str],
    node_type: str,
) -> None:
    """KubeRay ``configureGCSFaultTolerance`` on a pod template (in place)."""
    enabled = is_gcs_fault_tolerance_enabled(cluster)
    if node_type == c.HEAD_NODE:
        annotations[c.RAY_FT_ENABLED_ANNOTATION_KEY] = "true" if enabled else "false"
    if not enabled:
        return
    container = pod_spec["containers"][RAY_CONTAINER_INDEX]
    if node_type == c.WORKER_NODE and not env_var_exists(
        c.RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S, container.get("env")
    ):
        container["env"] = [
            *as_list(container.get("env")),
            {
                "name": c.RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S,
                "value": c.DEFAULT_WORKER_RAY_GCS_RECONNECT_TIMEOUT_S,
            },
        ]
    if node_type == c.HEAD_NODE:
        if is_gcs_fault_tolerance_embedded(cluster):
            _configure_embedded(pod_spec, container, cluster)
        else:
            _configure_redis(annotations, container, cluster, params)


def gcs_storage_retained_on_deletion(cluster: Mapping[str, Any]) -> bool:
    """``storage.deletionPolicy == Retain``: the PVC gets no controller owner reference."""
    return gcs_storage_deletion_policy(cluster) == c.GCS_STORAGE_DELETION_POLICY_RETAIN


def build_gcs_storage_pvc(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The operator-managed PVC for the embedded GCS store (with the owner ref KubeRay sets)."""
    meta = metadata(cluster)
    storage = as_map(as_map(spec(cluster).get("gcsFaultToleranceOptions")).get("storage"))
    access_modes = gcs_storage_access_modes(cluster)
    size = storage.get("size")
    pvc_spec: dict[str, Any] = {
        "accessModes": access_modes,
        "resources": {
            "requests": {
                "storage": c.GCS_STORAGE_DEFAULT_SIZE
                if size is None
                else str(Quantity.from_json(size))
            }
        },
    }
    if storage.get("storageClassName") is not None:
        pvc_spec["storageClassName"] = storage["storageClassName"]
    pvc_meta: dict[str, Any] = {
        "name": gcs_storage_pvc_name(cluster),
        "namespace": meta.get("namespace", ""),
        "labels": {c.RAY_CLUSTER_LABEL_KEY: meta.get("name", "")},
    }
    if not gcs_storage_retained_on_deletion(cluster):
        pvc_meta["ownerReferences"] = [controller_owner_reference(cluster)]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": pvc_meta,
        "spec": pvc_spec,
    }
