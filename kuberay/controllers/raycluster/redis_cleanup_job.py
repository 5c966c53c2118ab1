"""The Redis cleanup Job KubeRay runs when a RayCluster with Redis-backed GCS FT is deleted.

Built from the head pod (:func:`~.pod.build_head_pod_without_upgrade_annotations`):
``ray.io/node-type=redis-cleanup``; only the Ray container is kept; the
``wait-for-tls-ip-san`` init container is dropped; the command becomes a Python one-liner that
calls ``cleanup_redis_storage`` for the storage namespace (passing ``username`` only when the
container has a ``REDIS_USERNAME`` env var); no probes; ``RAY_redis_db_connect_retries=120`` and
``RAY_redis_db_connect_wait_milliseconds=500``; 200m/256Mi; ``restartPolicy: Never``. The Job is
``CheckLabel(<cluster>-redis-cleanup)`` with the pod's labels and annotations,
``backoffLimit: 0``, ``activeDeadlineSeconds: 300`` and a controller owner reference.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.controllers.builders.names import redis_cleanup_job_name
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.controllers.builders.pod import build_head_pod_without_upgrade_annotations
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import as_list, as_map, as_str, env_var_exists, metadata
from kuberay.controllers.common.options import BuildOptions

__all__ = ["build_redis_cleanup_job", "redis_cleanup_command"]

_DOCS_HINT: Final = (
    'echo "To get more information about manually deleting the storage namespace in Redis and '
    "removing the RayCluster's finalizer, please check "
    "https://docs.ray.io/en/master/cluster/kubernetes/user-guides/kuberay-gcs-ft.html "
    'for more details."'
)


def redis_cleanup_command(with_username: bool) -> str:
    """The single bash argument of the cleanup container."""
    username = "username=os.getenv('REDIS_USERNAME', parsed.username), " if with_username else ""
    statements = (
        "from ray._private.gcs_utils import cleanup_redis_storage; "
        "from urllib.parse import urlparse; "
        "import os; "
        "import sys; "
        "redis_address = os.getenv('RAY_REDIS_ADDRESS', '').split(',')[0]; "
        "redis_address = redis_address if '://' in redis_address "
        "else 'redis://' + redis_address; "
        "parsed = urlparse(redis_address); "
        "sys.exit(1) if not cleanup_redis_storage("
        "host=parsed.hostname, port=parsed.port, "
        f"{username}"
        "password=os.getenv('REDIS_PASSWORD', parsed.password or ''), "
        "use_ssl=parsed.scheme=='rediss', "
        "storage_namespace=os.getenv('RAY_external_storage_namespace')) else None"
    )
    return f'{_DOCS_HINT} && python -c "{statements}"'


def build_redis_cleanup_job(
    cluster: Mapping[str, Any],
    options: BuildOptions | None = None,
    features: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """KubeRay ``buildRedisCleanupJob``."""
    opts = options if options is not None else BuildOptions()
    pod = build_head_pod_without_upgrade_annotations(cluster, opts, features)
    pod_meta: dict[str, Any] = pod["metadata"]
    pod_spec: dict[str, Any] = pod["spec"]
    pod_meta["labels"][c.RAY_NODE_TYPE_LABEL_KEY] = c.REDIS_CLEANUP_NODE

    ray = pod_spec["containers"][RAY_CONTAINER_INDEX]
    pod_spec["containers"] = [ray]
    init_containers = [
        i
        for i in as_list(pod_spec.get("initContainers"))
        if as_map(i).get("name") != c.WAIT_FOR_TLS_IP_SAN_INIT_CONTAINER_NAME
    ]
    if init_containers:
        pod_spec["initContainers"] = init_containers
    else:
        pod_spec.pop("initContainers", None)

    ray["command"] = opts.container_command()
    ray["args"] = [redis_cleanup_command(env_var_exists(c.REDIS_USERNAME, ray.get("env")))]
    ray.pop("livenessProbe", None)
    ray.pop("readinessProbe", None)
    ray["env"] = [
        *as_list(ray.get("env")),
        {"name": c.RAY_REDIS_DB_CONNECT_RETRIES, "value": "120"},
        {"name": c.RAY_REDIS_DB_CONNECT_WAIT_MILLISECONDS, "value": "500"},
    ]
    ray["resources"] = {
        "limits": {"cpu": "200m", "memory": "256Mi"},
        "requests": {"cpu": "200m", "memory": "256Mi"},
    }
    pod_spec["restartPolicy"] = "Never"

    meta = metadata(cluster)
    job_meta: dict[str, Any] = {
        "name": redis_cleanup_job_name(as_str(meta.get("name"))),
        "namespace": as_str(meta.get("namespace")),
        "labels": copy.deepcopy(pod_meta.get("labels", {})),
        "ownerReferences": [controller_owner_reference(cluster)],
    }
    if pod_meta.get("annotations"):
        job_meta["annotations"] = copy.deepcopy(pod_meta["annotations"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": job_meta,
        "spec": {
            "backoffLimit": 0,
            "template": {"metadata": pod_meta, "spec": pod_spec},
            "activeDeadlineSeconds": 300,
        },
    }
