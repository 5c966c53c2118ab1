"""Pure builders for the objects more than one Ray kind creates (pods, Services, Ingress,
RBAC, auth, mTLS, probes, GCS FT, names, hashes, the RayJob submitter).

Everything here takes the RayCluster as the plain dict the API server returns (camelCase keys),
never mutates it, performs no I/O and returns plain dicts ready to be sent to the API server.
Operator switches arrive as :class:`~kuberay.controllers.common.BuildOptions`, feature gates
as ``Mapping[str, bool]``. Builders used by one kind only live in that kind's controller
package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.lazy import lazy_exports

if TYPE_CHECKING:
    from kuberay.controllers.builders.auth import (
        auth_token_secret_name,
        build_auth_secret,
        generate_auth_token,
        needs_auth_secret,
    )
    from kuberay.controllers.builders.gcs_ft import (
        build_gcs_storage_pvc,
        external_storage_namespace,
    )
    from kuberay.controllers.builders.hashing import (
        generate_hash_without_replicas_and_workers_to_delete,
        generate_json_hash,
        ray_cluster_recreate_hash,
    )
    from kuberay.controllers.builders.ingress import (
        build_head_ingress,
        build_head_route,
        ingress_enabled,
        ingress_needs_update,
    )
    from kuberay.controllers.builders.owner import (
        AlreadyOwnedError,
        controller_owner_reference,
        set_controller_reference,
    )
    from kuberay.controllers.builders.pod import (
        build_head_pod,
        build_head_pod_without_upgrade_annotations,
        build_worker_pod,
    )
    from kuberay.controllers.builders.rbac import (
        build_autoscaler_role,
        build_autoscaler_role_binding,
        build_autoscaler_service_account,
        user_provided_service_account,
    )
    from kuberay.controllers.builders.resources import (
        calculate_desired_resources,
        desired_resource_status,
    )
    from kuberay.controllers.builders.service import (
        ServiceBuildError,
        build_head_service,
        build_head_service_for_ray_service,
        build_headless_service,
        build_rayjob_head_service,
        build_serve_service,
        build_serve_service_for_ray_service,
        needs_headless_service,
    )
    from kuberay.controllers.builders.submit_command import (
        RayJobBuildError,
        build_job_submit_command,
    )
    from kuberay.controllers.builders.submitter import (
        build_submitter_job,
        build_submitter_sidecar_container,
    )

# Each name is imported from its module when first used (an idle operator loads few).
_EXPORTS = {
    "kuberay.controllers.builders.auth": (
        "auth_token_secret_name",
        "build_auth_secret",
        "generate_auth_token",
        "needs_auth_secret",
    ),
    "kuberay.controllers.builders.gcs_ft": ("build_gcs_storage_pvc", "external_storage_namespace"),
    "kuberay.controllers.builders.hashing": (
        "generate_hash_without_replicas_and_workers_to_delete",
        "generate_json_hash",
        "ray_cluster_recreate_hash",
    ),
    "kuberay.controllers.builders.ingress": (
        "build_head_ingress",
        "build_head_route",
        "ingress_enabled",
        "ingress_needs_update",
    ),
    "kuberay.controllers.builders.owner": (
        "AlreadyOwnedError",
        "controller_owner_reference",
        "set_controller_reference",
    ),
    "kuberay.controllers.builders.pod": (
        "build_head_pod",
        "build_head_pod_without_upgrade_annotations",
        "build_worker_pod",
    ),
    "kuberay.controllers.builders.rbac": (
        "build_autoscaler_role",
        "build_autoscaler_role_binding",
        "build_autoscaler_service_account",
        "user_provided_service_account",
    ),
    "kuberay.controllers.builders.resources": (
        "calculate_desired_resources",
        "desired_resource_status",
    ),
    "kuberay.controllers.builders.service": (
        "ServiceBuildError",
        "build_head_service",
        "build_head_service_for_ray_service",
        "build_headless_service",
        "build_rayjob_head_service",
        "build_serve_service",
        "build_serve_service_for_ray_service",
        "needs_headless_service",
    ),
    "kuberay.controllers.builders.submit_command": ("RayJobBuildError", "build_job_submit_command"),
    "kuberay.controllers.builders.submitter": (
        "build_submitter_job",
        "build_submitter_sidecar_container",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "AlreadyOwnedError",
    "RayJobBuildError",
    "ServiceBuildError",
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
    "build_job_submit_command",
    "build_rayjob_head_service",
    "build_serve_service",
    "build_serve_service_for_ray_service",
    "build_submitter_job",
    "build_submitter_sidecar_container",
    "build_worker_pod",
    "calculate_desired_resources",
    "controller_owner_reference",
    "desired_resource_status",
    "external_storage_namespace",
    "generate_auth_token",
    "generate_hash_without_replicas_and_workers_to_delete",
    "generate_json_hash",
    "ingress_enabled",
    "ingress_needs_update",
    "needs_auth_secret",
    "needs_headless_service",
    "ray_cluster_recreate_hash",
    "set_controller_reference",
    "user_provided_service_account",
]
