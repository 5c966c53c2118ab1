"""Env var entries of the pods KubeRay builds (shared by the pod template and ``BuildPod``)."""

from __future__ import annotations

from typing import Any

from kuberay.controllers.common.objects import env_var_exists

__all__ = ["append_if_absent", "field_env", "value_env"]


def field_env(name: str, path: str) -> dict[str, Any]:
    """An env var read from the pod's own field ``path`` (downward API ``fieldRef``)."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def value_env(name: str, value: str) -> dict[str, Any]:
    """An env var with a literal value; empty means no ``value`` key (Go's ``omitempty``)."""
    return {"name": name, "value": value} if value else {"name": name}


def append_if_absent(env: list[Any], name: str, value: str) -> None:
    """Append ``name=value`` to ``env`` unless a var of that name is already there."""
    if not env_var_exists(name, env):
        env.append(value_env(name, value))
