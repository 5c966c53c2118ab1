"""Pieces every Ray controller shares that are not builders: controller constants, the
operator switches (:class:`BuildOptions`), feature gates, dict accessors, pod health and the
rules that decide what gets built.

The pure builders of child objects live in :mod:`kuberay.controllers.builders`.
"""

from .defaults import with_default_ray_start_params
from .gates import KUBERAY_FEATURE_DEFAULTS, feature_enabled
from .options import BuildOptions
from .pod_health import all_pods_running, is_running_and_ready, should_delete_pod
from .replicas import (
    calculate_desired_replicas,
    calculate_max_replicas,
    calculate_min_replicas,
    is_multi_host_indexing,
    lowest_free_indices,
    random_scale_down_allowed,
    worker_group_desired_replicas,
    workers_to_delete,
)

__all__ = [
    "KUBERAY_FEATURE_DEFAULTS",
    "BuildOptions",
    "all_pods_running",
    "calculate_desired_replicas",
    "calculate_max_replicas",
    "calculate_min_replicas",
    "feature_enabled",
    "is_multi_host_indexing",
    "is_running_and_ready",
    "lowest_free_indices",
    "random_scale_down_allowed",
    "should_delete_pod",
    "with_default_ray_start_params",
    "worker_group_desired_replicas",
    "workers_to_delete",
]
