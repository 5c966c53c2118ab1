"""Pure builders for the objects KubeRay creates for a RayCluster and a RayJob.

Everything here takes the RayCluster as the plain dict the API server returns (camelCase keys),
never mutates it, performs no I/O and returns plain dicts ready to be sent to the API server.
Operator switches arrive as :class:`BuildOptions`, feature gates as ``Mapping[str, bool]``.
"""

from .auth import (
    auth_token_secret_name,
    build_auth_secret,
    generate_auth_token,
    needs_auth_secret,
)
from .defaults import with_default_ray_start_params
from .gates import KUBERAY_FEATURE_DEFAULTS, feature_enabled
from .gcs_ft import build_gcs_storage_pvc, external_storage_namespace
from .hashing import (
    generate_hash_without_replicas_and_workers_to_delete,
    generate_json_hash,
    ray_cluster_recreate_hash,
)
from .ingress import build_head_ingress, build_head_route, ingress_enabled, ingress_needs_update
from .job import build_redis_cleanup_job
from .options import BuildOptions
from .owner import AlreadyOwnedError, controller_owner_reference, set_controller_reference
from .pod import build_head_pod, build_head_pod_without_upgrade_annotations, build_worker_pod
from .pod_health import all_pods_running, is_running_and_ready, should_delete_pod
from .rayjob_cluster import build_rayjob_cluster
from .rbac import (
    build_autoscaler_role,
    build_autoscaler_role_binding,
    build_autoscaler_service_account,
    user_provided_service_account,
)
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
from .resources import calculate_desired_resources, desired_resource_status
from .service import (
    ServiceBuildError,
    build_head_service,
    build_head_service_for_ray_service,
    build_headless_service,
    build_rayjob_head_service,
    build_serve_service,
    build_serve_service_for_ray_service,
    needs_headless_service,
)
from .submit_body import build_job_submit_body
from .submit_command import RayJobBuildError, build_job_submit_command
from .submitter import build_submitter_job, build_submitter_sidecar_container

__all__ = [
    "KUBERAY_FEATURE_DEFAULTS",
    "AlreadyOwnedError",
    "BuildOptions",
    "RayJobBuildError",
    "ServiceBuildError",
    "all_pods_running",
    "auth_token_secret_name",
    "build_auth_secret",
    "build_autoscaler_role",
    "build_autoscaler_role_binding",
    "build_autoscaler_service_account",
    "build_gcs_storage_pvc",
    "build_head_ingress",
    "build_head_pod",
    "build_head_pod_without_upgrade_annotations",
    "build_head_route",
    "build_head_service",
    "build_head_service_for_ray_service",
    "build_headless_service",
    "build_job_submit_body",
    "build_job_submit_command",
    "build_rayjob_cluster",
    "build_rayjob_head_service",
    "build_redis_cleanup_job",
    "build_serve_service",
    "build_serve_service_for_ray_service",
    "build_submitter_job",
    "build_submitter_sidecar_container",
    "build_worker_pod",
    "calculate_desired_replicas",
    "calculate_desired_resources",
    "calculate_max_replicas",
    "calculate_min_replicas",
    "controller_owner_reference",
    "desired_resource_status",
    "external_storage_namespace",
    "feature_enabled",
    "generate_auth_token",
    "generate_hash_without_replicas_and_workers_to_delete",
    "generate_json_hash",
    "ingress_enabled",
    "ingress_needs_update",
    "is_multi_host_indexing",
    "is_running_and_ready",
    "lowest_free_indices",
    "needs_auth_secret",
    "needs_headless_service",
    "random_scale_down_allowed",
    "ray_cluster_recreate_hash",
    "set_controller_reference",
    "should_delete_pod",
    "user_provided_service_account",
    "with_default_ray_start_params",
    "worker_group_desired_replicas",
    "workers_to_delete",
]
