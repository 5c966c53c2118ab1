"""mTLS wiring of Ray pods (gate ``RayClusterMTLS`` with ``tlsOptions.enabled``).

The cert-manager Secret ``ray-{head,worker}-secret-<cluster>`` is mounted as volume ``ray-tls``
at ``/etc/ray/tls``; ``RAY_USE_TLS``/``RAY_TLS_*`` env vars point Ray at it (Ray container,
``wait-gcs-ready`` and the autoscaler), and an init container ``wait-for-tls-ip-san`` is
*prepended* that waits until cert-manager has put the pod IP into the certificate.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import as_list, as_map, metadata

from .names import tls_secret_name

__all__ = ["WAIT_FOR_TLS_IP_SAN_SCRIPT", "configure_tls", "set_container_tls_config"]

_CERT_PATH: Final = f"{c.RAY_TLS_CERT_MOUNT_PATH}/tls.crt"

#: Shell script of the ``wait-for-tls-ip-san`` init container (``sh -c``).
WAIT_FOR_TLS_IP_SAN_SCRIPT: Final = "\n".join(
    [
        f'CERT="{_CERT_PATH}"',
        'if [ -z "${POD_IP}" ]; then',
        "  POD_IP=$(hostname -i 2>/dev/null | awk '{print $1}')",
        "fi",
        "if ! command -v openssl >/dev/null 2>&1; then",
        '  echo "openssl not found; cannot verify IP SAN" >&2',
        "  exit 1",
        "fi",
        'echo "Waiting for TLS cert to include IP SAN for ${POD_IP}..."',
        "while true; do",
        '  if openssl x509 -in "${CERT}" -noout -text 2>/dev/null'
        ' | grep -qE "IP Address:${POD_IP}([^0-9.]|$)"; then',
        '    echo "TLS cert now includes IP SAN for ${POD_IP}"',
        "    exit 0",
        "  fi",
        '  echo "IP SAN for ${POD_IP} not yet in cert, retrying in 5s..."',
        "  sleep 5",
        "done",
    ]
)


def set_container_tls_config(container: MutableMapping[str, Any]) -> None:
    """Add the TLS env vars and the ``ray-tls`` mount to ``container`` if missing (in place)."""
    env: list[Any] = list(as_list(container.get("env")))
    existing = {as_map(e).get("name") for e in env}
    for name, value in (
        (c.RAY_USE_TLS, "1"),
        (c.RAY_TLS_SERVER_CERT, f"{c.RAY_TLS_CERT_MOUNT_PATH}/tls.crt"),
        (c.RAY_TLS_SERVER_KEY, f"{c.RAY_TLS_CERT_MOUNT_PATH}/tls.key"),
        (c.RAY_TLS_CA_CERT, f"{c.RAY_TLS_CERT_MOUNT_PATH}/ca.crt"),
    ):
        if name not in existing:
            env.append({"name": name, "value": value})
    container["env"] = env
    mounts: list[Any] = list(as_list(container.get("volumeMounts")))
    if not any(
        as_map(m).get("name") == c.RAY_TLS_VOLUME_NAME
        or as_map(m).get("mountPath") == c.RAY_TLS_CERT_MOUNT_PATH
        for m in mounts
    ):
        mounts.append(
            {
                "name": c.RAY_TLS_VOLUME_NAME,
                "readOnly": True,
                "mountPath": c.RAY_TLS_CERT_MOUNT_PATH,
            }
        )
    container["volumeMounts"] = mounts


def _resources(cpu: str, memory: str) -> dict[str, Any]:
    return {
        "limits": {"cpu": cpu, "memory": memory},
        "requests": {"cpu": cpu, "memory": memory},
    }


def configure_tls(
    pod_spec: MutableMapping[str, Any], cluster: Mapping[str, Any], node_type: str
) -> None:
    """KubeRay ``configureTLS`` on a pod spec (caller checks that TLS is enabled)."""
    cluster_name = str(metadata(cluster).get("name", ""))
    volumes: list[Any] = list(as_list(pod_spec.get("volumes")))
    if not any(as_map(v).get("name") == c.RAY_TLS_VOLUME_NAME for v in volumes):
        volumes.append(
            {
                "name": c.RAY_TLS_VOLUME_NAME,
                "secret": {"secretName": tls_secret_name(cluster_name, node_type)},
            }
        )
    pod_spec["volumes"] = volumes

    containers = pod_spec["containers"]
    ray_container = containers[RAY_CONTAINER_INDEX]
    set_container_tls_config(ray_container)
    init_containers: list[Any] = list(as_list(pod_spec.get("initContainers")))
    for init in init_containers:
        if (
            isinstance(init, MutableMapping)
            and init.get("name") == c.WAIT_GCS_READY_INIT_CONTAINER_NAME
        ):
            set_container_tls_config(init)

    if any(
        as_map(i).get("name") == c.WAIT_FOR_TLS_IP_SAN_INIT_CONTAINER_NAME for i in init_containers
    ):
        pod_spec["initContainers"] = init_containers
        return
    wait: dict[str, Any] = {
        "name": c.WAIT_FOR_TLS_IP_SAN_INIT_CONTAINER_NAME,
        "image": ray_container.get("image", ""),
        "command": ["sh", "-c"],
        "args": [WAIT_FOR_TLS_IP_SAN_SCRIPT],
        "env": [{"name": c.POD_IP, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        "resources": _resources("50m", "64Mi"),
        "volumeMounts": [
            {
                "name": c.RAY_TLS_VOLUME_NAME,
                "readOnly": True,
                "mountPath": c.RAY_TLS_CERT_MOUNT_PATH,
            }
        ],
    }
    if ray_container.get("imagePullPolicy"):
        wait["imagePullPolicy"] = ray_container["imagePullPolicy"]
    if ray_container.get("securityContext") is not None:
        wait["securityContext"] = copy.deepcopy(ray_container["securityContext"])
    pod_spec["initContainers"] = [wait, *init_containers]
