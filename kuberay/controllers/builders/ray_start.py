"""``ray start`` command generation, exactly as KubeRay renders it.

The Ray autoscaler and users parse these strings (``KUBERAY_GEN_RAY_START_CMD``), so spacing is
part of the contract: flags are emitted in sorted key order, each as ``" --key=value "``
(hence the double spaces), and a value of ``true``/``false`` (any case) turns the key into a bare
switch (present for true, dropped for false) except for ``log-color``, ``include-dashboard`` and
``include-log-monitor``, which keep ``--key=value``.

The parameter map is completed in KubeRay's order (all functions mutate the ``params`` dict they
are given; callers pass a private copy):

1. :func:`update_ray_start_params_resources` — group ``resources`` override ``num-cpus``,
   ``memory``, ``num-gpus``; other names go into the single-quoted JSON ``resources``;
2. :func:`update_ray_start_params_labels` — group ``labels`` become ``labels=k=v,...``;
3. :func:`set_missing_ray_start_params` — worker ``address``, head ``dashboard-host``,
   ``metrics-export-port``, ``block`` (always forced), ``dashboard-agent-listen-port``;
4. (pod builder) head ``no-monitor`` with autoscaling, Redis ``$REDIS_USERNAME/$REDIS_PASSWORD``;
5. :func:`generate_ray_start_command` — ``num-cpus`` / ``memory`` / accelerators from the Ray
   container's resources, then rendering.

:func:`ray_container_command` decides whether the container command is replaced by
``/bin/bash -c -- "<user cmd> && ulimit -n ...; ray start ..."``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.objects import as_list, as_map
from kuberay.controllers.common.options import BuildOptions
from kuberay.gocompat.gojson import format_go_float, go_string
from kuberay.gocompat.quantity import Quantity, QuantityError

__all__ = [
    "ULIMIT_COMMAND",
    "add_well_known_accelerator_resources",
    "convert_param_map",
    "custom_accelerator_ray_resource_name",
    "generate_ray_start_command",
    "is_gpu_resource_key",
    "is_npu_resource_key",
    "ray_container_command",
    "set_missing_ray_start_params",
    "update_ray_start_params_labels",
    "update_ray_start_params_resources",
]

#: Raises the open-file limit of ``ray start`` (the env var lets users override 65536).
ULIMIT_COMMAND: Final = f"ulimit -n ${{{c.RAY_START_ULIMIT_OPEN_FILES}:-65536}}"

_SPECIAL_BOOLEAN_OPTIONS: Final = frozenset(
    {"log-color", "include-dashboard", "include-log-monitor"}
)
_MIG_GPU_PATTERN: Final = re.compile(r"nvidia\.com/mig-\d+g\.\d+gb$")
_CUSTOM_ACCELERATORS: Final[Mapping[str, str]] = {
    c.NEURON_CORE_CONTAINER_RESOURCE_NAME: c.NEURON_CORE_RAY_RESOURCE_NAME,
    c.TPU_CONTAINER_RESOURCE_NAME: c.TPU_RAY_RESOURCE_NAME,
}


def is_gpu_resource_key(key: str) -> bool:
    """KubeRay ``IsGPUResourceKey``: ends with ``gpu`` or is an NVIDIA MIG profile."""
    return key.endswith("gpu") or _MIG_GPU_PATTERN.search(key) is not None


def is_npu_resource_key(key: str) -> bool:
    """KubeRay v1.8: a Huawei Ascend NPU (``huawei.com/Ascend910B``, ``huawei.com/npu``; case
    ignored), not a ``-memory``/``-core`` slice of one. NPU keys are never GPU keys."""
    lowered = key.lower()
    if lowered == c.NPU_CONTAINER_RESOURCE_NAME:
        return True
    return lowered.startswith(c.ASCEND_CONTAINER_RESOURCE_PREFIX) and not lowered.endswith(
        c.ASCEND_NON_DEVICE_SUFFIXES
    )


def custom_accelerator_ray_resource_name(key: str) -> str | None:
    """The Ray resource a container resource key advertises (``neuron_cores``, ``TPU``,
    ``NPU``), or None: KubeRay's exact-key map first, then the NPU rule."""
    mapped = _CUSTOM_ACCELERATORS.get(key)
    if mapped is not None:
        return mapped
    return c.NPU_RAY_RESOURCE_NAME if is_npu_resource_key(key) else None


#: every Ray resource name a custom accelerator can become
_CUSTOM_ACCELERATOR_RAY_NAMES: Final = frozenset(
    (*_CUSTOM_ACCELERATORS.values(), c.NPU_RAY_RESOURCE_NAME)
)


def _marshal_float_map(values: Mapping[str, float]) -> str:
    """Go ``json.Marshal(map[string]float64)``: sorted keys, compact."""
    items = ",".join(f"{go_string(k)}:{format_go_float(values[k])}" for k in sorted(values))
    return "{" + items + "}"


def update_ray_start_params_resources(
    params: MutableMapping[str, str], group_resources: Mapping[str, Any] | None
) -> None:
    """Apply a group's top-level ``resources`` map to ``params`` (KubeRay order and rules):
    ``cpu``/``memory``/GPU keys override their flags, an NPU key becomes ``NPU`` and any other
    name goes into the ``resources`` JSON as written."""
    if not group_resources:
        return
    custom: dict[str, float] = {}
    for name, raw in group_resources.items():
        try:
            quantity = Quantity.from_json(raw)
        except QuantityError:
            continue  # KubeRay logs and skips unparsable quantities
        normalized = name.lower()
        if normalized == "cpu":
            params["num-cpus"] = str(quantity.value())
        elif normalized == "memory":
            params["memory"] = str(quantity.value())
        elif is_gpu_resource_key(normalized):
            params["num-gpus"] = str(quantity.value())
        elif is_npu_resource_key(name):
            custom[c.NPU_RAY_RESOURCE_NAME] = quantity.approximate_float()
        else:
            custom[name] = quantity.approximate_float()
    if custom:
        params["resources"] = f"'{_marshal_float_map(custom)}'"


def update_ray_start_params_labels(
    params: MutableMapping[str, str], group_labels: Mapping[str, Any] | None
) -> None:
    """Render a group's top-level ``labels`` as ``labels=k1=v1,k2=v2`` (sorted keys)."""
    if not group_labels:
        return
    params["labels"] = ",".join(f"{k}={group_labels[k]}" for k in sorted(group_labels))


def set_missing_ray_start_params(
    params: MutableMapping[str, str], node_type: str, head_port: str, fqdn_ray_ip: str
) -> None:
    """KubeRay ``setMissingRayStartParams``."""
    if node_type == c.WORKER_NODE and "address" not in params:
        params["address"] = f"{fqdn_ray_ip}:{head_port}"
    if node_type == c.HEAD_NODE and "dashboard-host" not in params:
        params["dashboard-host"] = "0.0.0.0"
    if "metrics-export-port" not in params:
        params["metrics-export-port"] = str(c.DEFAULT_METRICS_PORT)
    params["block"] = "true"
    if "dashboard-agent-listen-port" not in params:
        params["dashboard-agent-listen-port"] = str(c.DEFAULT_DASHBOARD_AGENT_LISTEN_PORT)


class _ResourcesParamError(ValueError):
    pass


def _reject_constant(name: str) -> float:
    raise _ResourcesParamError(f"invalid JSON constant {name}")


def _resources_map(params: Mapping[str, str]) -> dict[str, float]:
    """Parse an existing ``resources`` param (Go ``json.Unmarshal`` into map[string]float64)."""
    if "resources" not in params:
        return {}
    text = params["resources"].strip("'\"` ")
    try:
        parsed = json.loads(text, parse_constant=_reject_constant)
    except ValueError as err:
        raise _ResourcesParamError(str(err)) from err
    if parsed is None:
        return {}
    if not isinstance(parsed, dict):
        raise _ResourcesParamError("resources is not a JSON object")
    result: dict[str, float] = {}
    for key, value in parsed.items():
        if value is None:
            result[key] = 0.0  # Go leaves the zero value for a JSON null
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _ResourcesParamError(f"resource {key!r} is not a number")
        try:
            result[key] = float(value)
        except OverflowError as err:
            raise _ResourcesParamError(f"resource {key!r} is out of range") from err
    return result


def add_well_known_accelerator_resources(
    params: MutableMapping[str, str], limits: Mapping[str, Any] | None
) -> None:
    """GPUs -> ``num-gpus``; the first non-zero custom accelerator limit in sorted key order
    (Neuron cores, TPU, Ascend NPU) -> ``resources`` JSON, unless that JSON already names one of
    their Ray resources."""
    if not limits:
        return
    try:
        resources = _resources_map(params)
    except _ResourcesParamError:
        return  # KubeRay logs the error and skips the whole accelerator step
    custom_present = any(name in resources for name in _CUSTOM_ACCELERATOR_RAY_NAMES)
    for key in sorted(limits):
        quantity = Quantity.from_json(limits[key])
        if "num-gpus" not in params and is_gpu_resource_key(key) and not quantity.is_zero():
            params["num-gpus"] = str(quantity.value())
        ray_name = None if custom_present else custom_accelerator_ray_resource_name(key)
        if ray_name is not None and not quantity.is_zero():
            if ray_name not in resources:
                amount = quantity.approximate_float()
                if not math.isfinite(amount):
                    return  # Go's json.Marshal fails on +Inf: KubeRay logs it, skips the step
                resources[ray_name] = amount
                params["resources"] = f"'{_marshal_float_map(resources)}'"
            custom_present = True


def convert_param_map(params: Mapping[str, str]) -> str:
    """Render ``params`` as ``ray start`` flags (sorted, ``" --k=v "`` each)."""
    parts: list[str] = []
    for key in sorted(params):
        value = params[key]
        if value.lower() in ("true", "false") and key not in _SPECIAL_BOOLEAN_OPTIONS:
            if value.lower() == "true":
                parts.append(f" --{key} ")
        else:
            parts.append(f" --{key}={value} ")
    return "".join(parts)


def generate_ray_start_command(
    node_type: str, params: MutableMapping[str, str], container_resources: Mapping[str, Any] | None
) -> str:
    """KubeRay ``generateRayStartCommand`` (fills ``num-cpus``/``memory``/accelerators first)."""
    resources = as_map(container_resources)
    limits = as_map(resources.get("limits"))
    requests = as_map(resources.get("requests"))
    if "num-cpus" not in params:
        cpu = Quantity.from_json(limits["cpu"]) if "cpu" in limits else Quantity()
        if not cpu.is_zero():
            params["num-cpus"] = str(cpu.value())
        else:
            cpu = Quantity.from_json(requests["cpu"]) if "cpu" in requests else Quantity()
            if not cpu.is_zero():
                params["num-cpus"] = str(cpu.value())
    if "memory" not in params:
        memory = Quantity.from_json(limits["memory"]) if "memory" in limits else Quantity()
        if not memory.is_zero():
            params["memory"] = str(memory.value())
    add_well_known_accelerator_resources(params, limits)
    flags = convert_param_map(params)
    if node_type == c.HEAD_NODE:
        return f"ray start --head {flags}"
    if node_type == c.WORKER_NODE:
        return f"ray start {flags}"
    return ""


def _join_cmd(parts: Sequence[Any]) -> str:
    """KubeRay ``convertCmdToString``: every element rendered as ``" %s "``."""
    return "".join(f" {p} " for p in parts)


def ray_container_command(
    container: Mapping[str, Any],
    ray_start_cmd: str,
    *,
    overwrite: bool,
    options: BuildOptions,
) -> tuple[list[str], list[str]] | None:
    """New ``(command, args)`` for the Ray container, or ``None`` to keep the user's.

    The user's command is kept when the overwrite annotation is set or when it already contains
    ``ray start``; otherwise it runs first and ``ulimit ...; <ray start>`` is chained after it.
    """
    command = as_list(container.get("command"))
    args = as_list(container.get("args"))
    user_cmd = ""
    if command:
        user_cmd = _join_cmd(command)
    if args:
        user_cmd += _join_cmd(args)
    if overwrite or "ray start" in user_cmd:
        return None
    generated = f"{ULIMIT_COMMAND}; {ray_start_cmd}"
    arg = f"{user_cmd} && {generated}" if user_cmd else generated
    return options.container_command(), [arg]
