"""What a feature gate is: its maturity stage and default.

Kept separate from the registry so that packages declaring gates only need these
small immutable values.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["FeatureSpec", "Stage"]


class Stage(StrEnum):
    """Maturity of a feature, as in Kubernetes."""

    ALPHA = "Alpha"
    BETA = "Beta"
    GA = "GA"
    DEPRECATED = "Deprecated"


@dataclass(frozen=True)
class FeatureSpec:
    """A gate's default value and stage.

    ``lock_to_default`` forbids setting the gate to anything but ``default``
    (typically for GA features whose old code path has been removed).
    """

    default: bool
    stage: Stage
    lock_to_default: bool = False
