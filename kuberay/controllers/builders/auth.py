"""Ray token authentication: the generated Secret and the env/volume wiring of containers.

* Auth is active only when ``authOptions.mode == "token"``.
* Secret mode: ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN`` from Secret key ``auth_token``
  of ``authOptions.secretName`` or, by default, the operator-created Secret
  ``CheckName(<cluster>)`` (base64 of 32 random bytes in ``stringData``, never rotated).
* Kubernetes token mode (``enableK8sTokenAuth``): ``RAY_AUTH_MODE=token``,
  ``RAY_ENABLE_K8S_TOKEN_AUTH=true`` and a read-only mount of the projected service-account
  token volume ``ray-token``; no Secret.

Env vars are only added when the container does not define them already. The wiring applies
to the Ray container, the worker ``wait-gcs-ready`` init container, the autoscaler sidecar and
the history-server collector.

Note (from KubeRay): a Secret is still created when ``authOptions`` is set without a mode,
although nothing is injected in that case.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Mapping, MutableMapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.api.v1.rules import is_k8s_auth_enabled
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import (
    as_list,
    as_map,
    env_var_exists,
    metadata,
    spec,
    volume_exists,
)

from .names import auth_secret_name
from .owner import controller_owner_reference

__all__ = [
    "add_ray_token_volume",
    "auth_token_secret_name",
    "build_auth_secret",
    "configure_token_auth",
    "generate_auth_token",
    "needs_auth_secret",
    "set_container_token_auth_env_vars",
]


def auth_token_secret_name(cluster_name: str, auth_options: Mapping[str, Any] | None) -> str:
    """Secret referenced by ``RAY_AUTH_TOKEN``: ``secretName`` or ``CheckName(<cluster>)``."""
    custom = as_map(auth_options).get("secretName")
    if isinstance(custom, str) and custom:
        return custom
    return auth_secret_name(cluster_name)


def set_container_token_auth_env_vars(
    cluster_name: str,
    container: MutableMapping[str, Any],
    auth_options: Mapping[str, Any] | None,
) -> None:
    """KubeRay ``SetContainerTokenAuthEnvVars`` (in place)."""
    env: list[Any] = list(as_list(container.get("env")))
    if not env_var_exists(c.RAY_AUTH_MODE_ENV_VAR, env):
        env.append({"name": c.RAY_AUTH_MODE_ENV_VAR, "value": c.AUTH_MODE_TOKEN})
    if is_k8s_auth_enabled(auth_options):
        if not env_var_exists(c.RAY_ENABLE_K8S_TOKEN_AUTH_ENV_VAR, env):
            env.append({"name": c.RAY_ENABLE_K8S_TOKEN_AUTH_ENV_VAR, "value": "true"})
        mounts: list[Any] = list(as_list(container.get("volumeMounts")))
        if not any(as_map(m).get("name") == c.RAY_TOKEN_VOLUME_NAME for m in mounts):
            mounts.append(
                {
                    "name": c.RAY_TOKEN_VOLUME_NAME,
                    "readOnly": True,
                    "mountPath": c.RAY_TOKEN_MOUNT_PATH,
                }
            )
        container["volumeMounts"] = mounts
    elif not env_var_exists(c.RAY_AUTH_TOKEN_ENV_VAR, env):
        env.append(
            {
                "name": c.RAY_AUTH_TOKEN_ENV_VAR,
                "valueFrom": {
                    "secretKeyRef": {
                        "name": auth_token_secret_name(cluster_name, auth_options),
                        "key": c.RAY_AUTH_TOKEN_SECRET_KEY,
                    }
                },
            }
        )
    container["env"] = env


def add_ray_token_volume(pod_spec: MutableMapping[str, Any]) -> None:
    """Add the projected service-account token volume ``ray-token`` once."""
    volumes: list[Any] = list(as_list(pod_spec.get("volumes")))
    if volume_exists(c.RAY_TOKEN_VOLUME_NAME, volumes):
        return
    volumes.append(
        {
            "name": c.RAY_TOKEN_VOLUME_NAME,
            "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]},
        }
    )
    pod_spec["volumes"] = volumes


def configure_token_auth(
    cluster_name: str,
    pod_spec: MutableMapping[str, Any],
    auth_options: Mapping[str, Any] | None,
) -> None:
    """Wire auth into the Ray container (index 0) and any ``wait-gcs-ready`` init container."""
    containers = pod_spec["containers"]
    set_container_token_auth_env_vars(cluster_name, containers[RAY_CONTAINER_INDEX], auth_options)
    if is_k8s_auth_enabled(auth_options):
        add_ray_token_volume(pod_spec)
    for init in as_list(pod_spec.get("initContainers")):
        if (
            isinstance(init, MutableMapping)
            and init.get("name") == c.WAIT_GCS_READY_INIT_CONTAINER_NAME
        ):
            set_container_token_auth_env_vars(cluster_name, init, auth_options)


def needs_auth_secret(cluster: Mapping[str, Any]) -> bool:
    """Whether KubeRay would create the token Secret for this cluster."""
    options = spec(cluster).get("authOptions")
    if not isinstance(options, Mapping):
        return False
    if options.get("mode") == c.AUTH_MODE_DISABLED:
        return False
    if is_k8s_auth_enabled(options):
        return False
    custom = options.get("secretName")
    return not (isinstance(custom, str) and custom)


def generate_auth_token() -> str:
    """Standard base64 of 32 cryptographically random bytes."""
    return base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def build_auth_secret(cluster: Mapping[str, Any], token: str) -> dict[str, Any]:
    """The token Secret KubeRay creates (call only when :func:`needs_auth_secret`)."""
    meta = metadata(cluster)
    name = str(meta.get("name", ""))
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": auth_secret_name(name),
            "namespace": meta.get("namespace", ""),
            "labels": {c.RAY_CLUSTER_LABEL_KEY: name},
            "ownerReferences": [controller_owner_reference(cluster)],
        },
        "stringData": {c.RAY_AUTH_TOKEN_SECRET_KEY: token},
    }
