"""The in-tree autoscaler sidecar KubeRay adds to the head pod (``enableInTreeAutoscaling``).

Container ``autoscaler``: the Ray container's image (``autoscalerOptions.image`` wins),
``IfNotPresent``, ``/bin/bash -c -- "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME)
--cluster-namespace $(RAY_CLUSTER_NAMESPACE)"`` (the same string is exposed as
``KUBERAY_GEN_AUTOSCALER_START_CMD``), 500m/512Mi requests = limits. ``autoscalerOptions``
then replaces resources/image/pullPolicy/securityContext/command/args and appends
env/envFrom/volumeMounts. The head pod also gets ``rayStartParams.no-monitor=true``, the
autoscaler ServiceAccount, ``RAY_enable_autoscaler_v2`` (when a version is set) and, for v2,
``restartPolicy: Never`` on head and worker pods.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.objects import as_list
from kuberay.controllers.common.options import BuildOptions

__all__ = ["AUTOSCALER_START_COMMAND", "build_autoscaler_container", "merge_autoscaler_overrides"]

AUTOSCALER_START_COMMAND: Final = (
    "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) "
    "--cluster-namespace $(RAY_CLUSTER_NAMESPACE)"
)


def _field_env(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def build_autoscaler_container(image: str, options: BuildOptions) -> dict[str, Any]:
    """KubeRay ``BuildAutoscalerContainer`` (before ``autoscalerOptions`` overrides)."""
    return {
        "name": c.AUTOSCALER_CONTAINER_NAME,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "env": [
            _field_env(c.RAY_CLUSTER_NAME, f"metadata.labels['{c.RAY_CLUSTER_LABEL_KEY}']"),
            _field_env(c.RAY_CLUSTER_NAMESPACE, "metadata.namespace"),
            _field_env(c.RAY_HEAD_POD_NAME, "metadata.name"),
            {"name": c.KUBERAY_CRD_VER, "value": "v1"},
            {"name": c.KUBERAY_GEN_AUTOSCALER_START_CMD, "value": AUTOSCALER_START_COMMAND},
        ],
        "command": options.container_command(),
        "args": [AUTOSCALER_START_COMMAND],
        "resources": {
            "limits": {"cpu": "500m", "memory": "512Mi"},
            "requests": {"cpu": "500m", "memory": "512Mi"},
        },
    }


def merge_autoscaler_overrides(
    container: MutableMapping[str, Any], autoscaler_options: Mapping[str, Any] | None
) -> None:
    """Apply ``spec.autoscalerOptions`` to the autoscaler container (in place)."""
    if not isinstance(autoscaler_options, Mapping):
        return
    opts = copy.deepcopy(dict(autoscaler_options))
    if opts.get("resources") is not None:
        container["resources"] = opts["resources"]
    if opts.get("image") is not None:
        container["image"] = opts["image"]
    if opts.get("imagePullPolicy") is not None:
        container["imagePullPolicy"] = opts["imagePullPolicy"]
    for key in ("env", "envFrom", "volumeMounts"):
        extra = as_list(opts.get(key))
        if extra:
            container[key] = [*as_list(container.get(key)), *extra]
    if opts.get("securityContext") is not None:
        container["securityContext"] = opts["securityContext"]
    if as_list(opts.get("command")):
        container["command"] = list(opts["command"])
    if as_list(opts.get("args")):
        container["args"] = list(opts["args"])
