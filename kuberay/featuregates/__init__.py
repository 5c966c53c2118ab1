"""Kubernetes-style feature gates (``--feature-gates=Name=true,...``).

The generic machinery, and KubeRay's own gate table in :mod:`.kuberay_gates` (names,
defaults and stages only, so ``api`` and ``controllers`` both read it from below).
"""

from .errors import FeatureGateError
from .gate import FeatureGate
from .parse import parse_bool, parse_feature_gates
from .spec import FeatureSpec, Stage

__all__ = [
    "FeatureGate",
    "FeatureGateError",
    "FeatureSpec",
    "Stage",
    "parse_bool",
    "parse_feature_gates",
]
