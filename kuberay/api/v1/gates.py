"""Feature-gate lookups for defaulting/validation rules that depend on KubeRay feature gates.

Callers pass their gate registry as either a mapping ``{name: enabled}`` or a callable
``name -> bool`` (e.g. a bound ``FeatureGate.enabled``); ``None`` means KubeRay's defaults
(:data:`~kuberay.api.v1.constants.DEFAULT_FEATURE_GATES`). Names missing from a mapping fall
back to the defaults too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeAlias

from kuberay.api.v1.constants import DEFAULT_FEATURE_GATES

FeatureGates: TypeAlias = Mapping[str, bool] | Callable[[str], bool] | None

__all__ = ["FeatureGates", "gate_enabled"]


def gate_enabled(gates: FeatureGates, name: str) -> bool:
    """Whether gate ``name`` is on under ``gates``."""
    if gates is None:
        return DEFAULT_FEATURE_GATES.get(name, False)
    if isinstance(gates, Mapping):
        value = gates.get(name)
        return DEFAULT_FEATURE_GATES.get(name, False) if value is None else bool(value)
    return bool(gates(name))
