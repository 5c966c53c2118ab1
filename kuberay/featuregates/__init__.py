"""Kubernetes-style feature gates (``--feature-gates=Name=true,...``).

Generic machinery only; the operator declares its own gates.
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
