"""The in-memory defaulting KubeRay's RayCluster controller applies before reconciling.

``setDefaults`` only turns a missing (or ``null``) ``rayStartParams`` of the head group and of
every worker group into an empty map. It matters for the spec hash (``{}`` and ``null``
serialise differently) and lets builders treat ``rayStartParams`` as always present.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["with_default_ray_start_params"]


def with_default_ray_start_params(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a RayClusterSpec dict with ``rayStartParams`` defaulted to ``{}``."""
    result: dict[str, Any] = copy.deepcopy(dict(spec))
    head = result.get("headGroupSpec")
    if isinstance(head, dict) and head.get("rayStartParams") is None:
        head["rayStartParams"] = {}
    for group in result.get("workerGroupSpecs") or []:
        if isinstance(group, dict) and group.get("rayStartParams") is None:
            group["rayStartParams"] = {}
    return result
