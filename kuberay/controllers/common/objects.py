"""Small, typed accessors for Kubernetes objects held as plain dicts.

The builders read user-written RayCluster dicts, where any key may be missing or ``null``;
these helpers return empty mappings/lists instead, mirroring Go's zero values.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

__all__ = [
    "as_list",
    "as_map",
    "as_str",
    "child_dict",
    "env_var_exists",
    "find_container_port",
    "metadata",
    "pod_spec_of_template",
    "spec",
    "str_map",
    "volume_exists",
    "volume_mount_exists",
]


def as_map(value: object) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty mapping (Go nil map/struct)."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> Sequence[Any]:
    """``value`` if it is a list, else an empty list (Go nil slice)."""
    return value if isinstance(value, list | tuple) else ()


def as_str(value: object) -> str:
    """``value`` if it is a string, else ``""``."""
    return value if isinstance(value, str) else ""


def _go_string(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""  # a JSON null decodes to Go's zero value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def child_dict(parent: MutableMapping[str, Any], key: str) -> dict[str, Any]:
    """``parent[key]`` as a (copied) dict stored back in ``parent``; ``{}`` when not a mapping."""
    child = dict(as_map(parent.get(key)))
    parent[key] = child
    return child


def str_map(value: object) -> dict[str, str]:
    """A ``map[string]string`` copy of ``value`` (``null`` -> ``""``, others stringified)."""
    return {str(k): _go_string(v) for k, v in as_map(value).items()}


def metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(obj.get("metadata"))


def spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(obj.get("spec"))


def pod_spec_of_template(template: object) -> Mapping[str, Any]:
    return as_map(as_map(template).get("spec"))


def env_var_exists(name: str, env: object) -> bool:
    """KubeRay ``EnvVarExists``."""
    return any(as_map(e).get("name") == name for e in as_list(env))


def volume_mount_exists(name: str, mounts: object) -> bool:
    """KubeRay ``VolumeMountExists`` (by mount name)."""
    return any(as_map(m).get("name") == name for m in as_list(mounts))


def volume_exists(name: str, volumes: object) -> bool:
    """KubeRay ``VolumeExists`` (by volume name)."""
    return any(as_map(v).get("name") == name for v in as_list(volumes))


def find_container_port(container: Mapping[str, Any], port_name: str, default: int) -> int:
    """KubeRay ``FindContainerPort``: the ``containerPort`` named ``port_name`` or ``default``."""
    for port in as_list(container.get("ports")):
        port_map = as_map(port)
        if port_map.get("name") == port_name:
            value = port_map.get("containerPort", 0)
            return int(value) if isinstance(value, int | float) else 0
    return default
