"""Pieces every Ray controller shares that are not builders: controller constants, the
operator switches (:class:`BuildOptions`), feature gates, dict accessors, pod health and the
replica bookkeeping of multi-host groups. The effective values of the ray.io spec are decided
in :mod:`kuberay.api.v1.rules`.

The pure builders of child objects live in :mod:`kuberay.controllers.builders`.
"""

from .defaults import with_default_ray_start_params
from .gates import KUBERAY_FEATURE_DEFAULTS, feature_enabled
from .options import BuildOptions
from .pod_health import all_pods_running, is_running_and_ready, should_delete_pod
from .replicas import is_multi_host_indexing, lowest_free_indices, random_scale_down_allowed

__all__ = [
    "KUBERAY_FEATURE_DEFAULTS",
    "BuildOptions",
    "all_pods_running",
    "feature_enabled",
    "is_multi_host_indexing",
    "is_running_and_ready",
    "lowest_free_indices",
    "random_scale_down_allowed",
    "should_delete_pod",
    "with_default_ray_start_params",
]
