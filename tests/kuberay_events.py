# ruff: noqa: E501
"""KubeRay's Event formats, as its Go source writes them (ray-operator/controllers/ray/
*_controller.go at feeaf72, the ``r.Recorder.Eventf`` calls): (source file, reason, type,
Go format). ``*`` as reason: the validation error type (InvalidRayJobSpec, ...)."""

from __future__ import annotations

import re

HOLE = "\x00"


def go_template(fmt: str) -> str:
    """A Go format with each verb as one placeholder (``%q`` quoted), ``%%`` as ``%``, and
    ``%s/%s`` (namespace/name) as one placeholder."""
    fmt = fmt.replace("%%", "\x01").replace("%q", f'"{HOLE}"')
    fmt = re.sub(r"%[-+# 0-9.]*[svdfgtTx]", HOLE, fmt)
    return fmt.replace("\x01", "%").replace(f"{HOLE}/{HOLE}", HOLE)


def fills(pattern: str, text: str) -> bool:
    """Whether ``text`` is ``pattern`` with each placeholder filled by literal text (or by
    a placeholder of ``text``)."""
    parts = [re.escape(p) for p in pattern.split(HOLE)]
    return re.fullmatch(f"(?:{HOLE}|[^{HOLE}]+)".join(parts), text, re.S) is not None


def kuberay_formats(reason: str) -> set[tuple[str, str]]:
    """(type, template) of every KubeRay Event with ``reason``."""
    return {(t, go_template(fmt)) for _, r, t, fmt in KUBERAY_EVENTS if r == reason}


KUBERAY_EVENTS: list[tuple[str, str, str, str]] = [
    (
        "networkpolicy_controller",
        "NetworkPolicyNameCollision",
        "Warning",
        "NetworkPolicy %s/%s already exists and is not owned by this RayCluster, network isolation will not be applied. Rename the existing NetworkPolicy or use a different RayCluster name to avoid the collision",
    ),
    (
        "networkpolicy_controller",
        "FailedToUpdateNetworkPolicy",
        "Warning",
        "Failed to update NetworkPolicy %s/%s: %v",
    ),
    ("networkpolicy_controller", "UpdatedNetworkPolicy", "Normal", "Updated NetworkPolicy %s/%s"),
    (
        "networkpolicy_controller",
        "FailedToCreateNetworkPolicy",
        "Warning",
        "Failed to create NetworkPolicy %s/%s: %v",
    ),
    ("networkpolicy_controller", "CreatedNetworkPolicy", "Normal", "Created NetworkPolicy %s/%s"),
    (
        "networkpolicy_controller",
        "FailedToDeleteNetworkPolicy",
        "Warning",
        "Failed to delete NetworkPolicy %s/%s: %v",
    ),
    ("networkpolicy_controller", "DeletedNetworkPolicy", "Normal", "Deleted NetworkPolicy %s/%s"),
    (
        "raycluster_controller",
        "InvalidRayClusterMetadata",
        "Warning",
        "The RayCluster metadata is invalid %s/%s: %v",
    ),
    (
        "raycluster_controller",
        "InvalidRayClusterSpec",
        "Warning",
        "The RayCluster spec is invalid %s/%s: %v",
    ),
    (
        "raycluster_controller",
        "InvalidRayClusterSpec",
        "Warning",
        "RayCluster spec warning %s/%s: %s",
    ),
    (
        "raycluster_controller",
        "InvalidRayClusterSpec",
        "Warning",
        "The RayCluster UpgradeStrategy is invalid %s/%s: %v",
    ),
    (
        "raycluster_controller",
        "InvalidRayClusterStatus",
        "Warning",
        "The RayCluster status is invalid %s/%s, %v",
    ),
    (
        "raycluster_controller",
        "FailedToCreateRedisCleanupJob",
        "Warning",
        "Failed to create Redis cleanup Job %s/%s, %v",
    ),
    (
        "raycluster_controller",
        "CreatedRedisCleanupJob",
        "Normal",
        "Created Redis cleanup Job %s/%s",
    ),
    (
        "raycluster_controller",
        "FailedToCreateIngress",
        "Warning",
        "Ingress %s/%s already exists and is not owned by this RayCluster; not modifying it",
    ),
    (
        "raycluster_controller",
        "FailedToUpdateIngress",
        "Warning",
        "Failed updating ingress %s/%s, %v",
    ),
    ("raycluster_controller", "UpdatedIngress", "Normal", "Updated ingress %s/%s"),
    (
        "raycluster_controller",
        "FailedToCreatePVC",
        "Warning",
        "GcsFaultToleranceOptions.Storage.ClaimName %q not found in namespace %s; the head Pod will not start until it exists",
    ),
    (
        "raycluster_controller",
        "FailedToCreatePVC",
        "Warning",
        "GCS storage PVC %s/%s already exists and cannot be reconfigured in place (%s); delete the PVC to recreate it with the new settings",
    ),
    (
        "raycluster_controller",
        "FailedToCreatePVC",
        "Warning",
        "Failed to create GCS storage PVC %s/%s, %v",
    ),
    ("raycluster_controller", "CreatedPVC", "Normal", "Created GCS storage PVC %s/%s"),
    (
        "raycluster_controller",
        "FailedToDeletePodCollection",
        "Warning",
        "Failed deleting Pods due to suspension for RayCluster %s/%s, %v",
    ),
    (
        "raycluster_controller",
        "DeletedPod",
        "Normal",
        "Deleted Pods for RayCluster %s/%s due to suspension",
    ),
    (
        "raycluster_controller",
        "FailedToDeletePodCollection",
        "Warning",
        "Failed deleting Pods due to spec change with Recreate upgradeStrategy for RayCluster %s/%s, %v",
    ),
    (
        "raycluster_controller",
        "DeletedPod",
        "Normal",
        "Deleted all Pods for RayCluster %s/%s due to spec change with Recreate upgradeStrategy",
    ),
    (
        "raycluster_controller",
        "FailedToDeleteHeadPod",
        "Warning",
        "Failed deleting head Pod %s/%s; Pod status: %s; Pod restart policy: %s; Ray container terminated status: %v, %v",
    ),
    (
        "raycluster_controller",
        "DeletedHeadPod",
        "Normal",
        "Deleted head Pod %s/%s; Pod status: %s; Pod restart policy: %s; Ray container terminated status: %v",
    ),
    (
        "raycluster_controller",
        "FailedToDeleteWorkerPodCollection",
        "Warning",
        "Failed deleting worker Pods for suspended group %s in RayCluster %s/%s, %v",
    ),
    (
        "raycluster_controller",
        "DeletedWorkerPod",
        "Normal",
        "Deleted all pods for suspended worker group %s in RayCluster %s/%s",
    ),
    (
        "raycluster_controller",
        "FailedToDeleteWorkerPod",
        "Warning",
        "Failed deleting worker Pod %s/%s; Pod status: %s; Pod restart policy: %s; Ray container terminated status: %v, %v",
    ),
    (
        "raycluster_controller",
        "DeletedWorkerPod",
        "Normal",
        "Deleted worker Pod %s/%s; Pod status: %s; Pod restart policy: %s; Ray container terminated status: %v",
    ),
    (
        "raycluster_controller",
        "FailedToDeleteWorkerPod",
        "Warning",
        "Failed deleting pod %s/%s, %v",
    ),
    ("raycluster_controller", "DeletedWorkerPod", "Normal", "Deleted pod %s/%s"),
    (
        "raycluster_controller",
        "FailedToDeleteWorkerPod",
        "Warning",
        "Failed deleting Pod %s/%s, %v",
    ),
    ("raycluster_controller", "DeletedWorkerPod", "Normal", "Deleted Pod %s/%s"),
    (
        "raycluster_controller",
        "FailedToDeleteWorkerPod",
        "Warning",
        "Failed deleting worker Pod %s/%s for group %s; Pod status: %s; Pod restart policy: %s; Ray container terminated status: %v, %v",
    ),
    (
        "raycluster_controller",
        "DeletedWorkerPod",
        "Normal",
        "Deleted worker Pod %s/%s for group %s: %s",
    ),
    (
        "raycluster_controller",
        "FailedToCreateIngress",
        "Warning",
        "Failed creating ingress %s/%s, %v",
    ),
    ("raycluster_controller", "CreatedIngress", "Normal", "Created ingress %s/%s"),
    ("raycluster_controller", "FailedToCreateRoute", "Warning", "Failed creating route %s/%s, %v"),
    ("raycluster_controller", "CreatedRoute", "Normal", "Created route %s/%s"),
    (
        "raycluster_controller",
        "FailedToCreateService",
        "Warning",
        "Failed creating service %s/%s, %v",
    ),
    ("raycluster_controller", "CreatedService", "Normal", "Created service %s/%s"),
    (
        "raycluster_controller",
        "FailedToCreateHeadPod",
        "Warning",
        "Failed to create head Pod %s/%s, %v",
    ),
    ("raycluster_controller", "CreatedHeadPod", "Normal", "Created head Pod %s/%s"),
    (
        "raycluster_controller",
        "FailedToCreateWorkerPod",
        "Warning",
        "Failed to create worker Pod for the cluster %s/%s, %v",
    ),
    ("raycluster_controller", "CreatedWorkerPod", "Normal", "Created worker Pod %s/%s"),
    (
        "raycluster_controller",
        "AutoscalerServiceAccountNotFound",
        "Warning",
        "Failed to reconcile RayCluster %s/%s. %s",
    ),
    (
        "raycluster_controller",
        "FailedToCreateServiceAccount",
        "Warning",
        "Failed creating service account %s/%s, %v",
    ),
    ("raycluster_controller", "CreatedServiceAccount", "Normal", "Created service account %s/%s"),
    ("raycluster_controller", "FailedToCreateRole", "Warning", "Failed creating role %s/%s, %v"),
    ("raycluster_controller", "CreatedRole", "Normal", "Created role %s/%s"),
    (
        "raycluster_controller",
        "FailedToCreateRoleBinding",
        "Warning",
        "Failed creating role binding %s/%s, %v",
    ),
    ("raycluster_controller", "CreatedRoleBinding", "Normal", "Created role binding %s/%s"),
    (
        "raycluster_controller",
        "ForceDeletedStuckCluster",
        "Warning",
        "Force-removed GCS FT finalizer after %v due to Redis cleanup timeout; Redis storage namespace %q may need manual cleanup",
    ),
    (
        "raycluster_mtls_controller",
        "MTLSFailedToReconcile",
        "Warning",
        "Failed to reconcile mTLS %s: %v",
    ),
    (
        "raycluster_mtls_controller",
        "MTLSCertsNotReady",
        "Normal",
        "Waiting for cert-manager to issue mTLS certificates",
    ),
    (
        "raycluster_mtls_controller",
        "MTLSPKIReady",
        "Normal",
        "mTLS PKI is ready: CA, head, and worker certificates issued",
    ),
    (
        "raycluster_mtls_controller",
        "MTLSCertificatesUpdated",
        "Normal",
        "Updated head certificate SANs (IPs: %v)",
    ),
    (
        "raycluster_mtls_controller",
        "MTLSCertificatesUpdated",
        "Normal",
        "Updated worker certificate SANs (IPs: %v)",
    ),
    (
        "raycluster_mtls_controller",
        "MTLSCertificateExpiringSoon",
        "Warning",
        "TLS certificate %s expires in %.1f hours; Ray does not hot-reload certs so a pod restart will be needed after renewal",
    ),
    ("raycronjob_controller", "InvalidRayCronJobSpec", "Warning", "%s/%s: %v"),
    (
        "raycronjob_controller",
        "SuspendedRayCronJob",
        "Normal",
        "RayCronJob suspended, no new RayJobs will be created",
    ),
    ("rayjob_controller", "*", "Warning", "%s/%s: %v"),
    (
        "rayjob_controller",
        "FailedToUpdateService",
        "Warning",
        "Failed to update the service %s/%s, %v",
    ),
    ("rayjob_controller", "UpdatedService", "Normal", "Updated the service %s/%s"),
    (
        "rayjob_controller",
        "FailedToCreateService",
        "Warning",
        "Failed to create the service %s/%s, %v",
    ),
    ("rayjob_controller", "CreatedService", "Normal", "Created the service %s/%s"),
    (
        "rayjob_controller",
        "FailedToCreateRayJobSubmitter",
        "Warning",
        "Failed to create new Kubernetes Job %s/%s: %v",
    ),
    ("rayjob_controller", "CreatedRayJobSubmitter", "Normal", "Created Kubernetes Job %s/%s"),
    (
        "rayjob_controller",
        "FailedToDeleteRayJobSubmitter",
        "Warning",
        "Failed to delete submitter K8s Job %s/%s: %v",
    ),
    ("rayjob_controller", "DeletedRayJobSubmitter", "Normal", "Deleted submitter K8s Job %s/%s"),
    (
        "rayjob_controller",
        "FailedToDeleteRayCluster",
        "Warning",
        "Failed to delete cluster %s/%s: %v",
    ),
    ("rayjob_controller", "DeletedRayCluster", "Normal", "Deleted cluster %s/%s"),
    (
        "rayjob_controller",
        "FailedToUpdateRayCluster",
        "Warning",
        "Failed to suspend worker groups in cluster %s/%s: %v",
    ),
    (
        "rayjob_controller",
        "UpdatedRayCluster",
        "Normal",
        "Set the `suspend` field to true for all worker groups in cluster %s/%s",
    ),
    (
        "rayjob_controller",
        "RayClusterNotFound",
        "Warning",
        "RayCluster %s/%s set in the clusterSelector is not found. It must be created manually",
    ),
    (
        "rayjob_controller",
        "FailedToCreateRayCluster",
        "Warning",
        "Failed to create RayCluster %s/%s: %v",
    ),
    ("rayjob_controller", "CreatedRayCluster", "Normal", "Created RayCluster %s/%s"),
    (
        "rayjob_controller",
        "FailedToCleanupBatchScheduler",
        "Warning",
        "Failed to cleanup batch scheduler resources for RayJob %s/%s: %v",
    ),
    (
        "rayjob_controller",
        "BatchSchedulerCleanedUp",
        "Normal",
        "Cleaned up batch scheduler resources for RayJob %s/%s",
    ),
    ("rayservice_controller", "*", "Warning", "%s/%s: %v"),
    (
        "rayservice_controller",
        "RollbackImpossible",
        "Warning",
        "Active cluster not found, rollback cannot be initiated",
    ),
    (
        "rayservice_controller",
        "FailedToDeleteRayCluster",
        "Warning",
        "Failed to delete the RayCluster %s/%s during suspend: %v",
    ),
    (
        "rayservice_controller",
        "DeletedRayCluster",
        "Normal",
        "Deleted the RayCluster %s/%s during suspend",
    ),
    (
        "rayservice_controller",
        "FailedToDeleteService",
        "Warning",
        "Failed to delete the Service %s/%s during suspend: %v",
    ),
    (
        "rayservice_controller",
        "DeletedService",
        "Normal",
        "Deleted the Service %s/%s during suspend",
    ),
    (
        "rayservice_controller",
        "FailedToDeleteGateway",
        "Warning",
        "Failed to delete the Gateway %s/%s during suspend: %v",
    ),
    (
        "rayservice_controller",
        "DeletedGateway",
        "Normal",
        "Deleted the Gateway %s/%s during suspend",
    ),
    (
        "rayservice_controller",
        "FailedToDeleteHTTPRoute",
        "Warning",
        "Failed to delete the HTTPRoute %s/%s during suspend: %v",
    ),
    (
        "rayservice_controller",
        "DeletedHTTPRoute",
        "Normal",
        "Deleted the HTTPRoute %s/%s during suspend",
    ),
    (
        "rayservice_controller",
        "FailedToCreateGateway",
        "Warning",
        "Failed to create Gateway for RayService %s/%s: %v",
    ),
    ("rayservice_controller", "CreatedGateway", "Normal", "Created Gateway for RayService %s/%s"),
    (
        "rayservice_controller",
        "FailedToUpdateGateway",
        "Warning",
        "Failed to update the Gateway %s/%s: %v",
    ),
    ("rayservice_controller", "UpdatedGateway", "Normal", "Updated the Gateway %s/%s"),
    (
        "rayservice_controller",
        "FailedToCreateHTTPRoute",
        "Warning",
        "Failed to create the HTTPRoute for RayService %s/%s: %v",
    ),
    (
        "rayservice_controller",
        "CreatedHTTPRoute",
        "Normal",
        "Created HTTPRoute for RayService %s/%s",
    ),
    (
        "rayservice_controller",
        "FailedToUpdateHTTPRoute",
        "Warning",
        "Failed to update the HTTPRoute %s/%s: %v",
    ),
    ("rayservice_controller", "UpdatedHTTPRoute", "Normal", "Updated the HTTPRoute %s/%s"),
    (
        "rayservice_controller",
        "FailedToUpdateRayCluster",
        "Warning",
        "Failed to update the active RayCluster %s/%s: %v",
    ),
    ("rayservice_controller", "UpdatedRayCluster", "Normal", "Updated the active RayCluster %s/%s"),
    (
        "rayservice_controller",
        "FailedToUpdateRayCluster",
        "Warning",
        "Failed to update the pending RayCluster %s/%s: %v",
    ),
    (
        "rayservice_controller",
        "UpdatedRayCluster",
        "Normal",
        "Updated the pending RayCluster %s/%s",
    ),
    (
        "rayservice_controller",
        "FailedToDeleteRayCluster",
        "Warning",
        "Failed to delete the RayCluster %s/%s: %v",
    ),
    ("rayservice_controller", "DeletedRayCluster", "Normal", "Deleted the RayCluster %s/%s"),
    (
        "rayservice_controller",
        "FailedToCreateRayCluster",
        "Warning",
        "Failed to create the RayCluster %s/%s: %v",
    ),
    ("rayservice_controller", "CreatedRayCluster", "Normal", "Created the RayCluster %s/%s"),
    (
        "rayservice_controller",
        "FailedToUpdateService",
        "Warning",
        "Failed to update the service %s/%s, %v",
    ),
    ("rayservice_controller", "UpdatedService", "Normal", "Updated the service %s/%s"),
    (
        "rayservice_controller",
        "FailedToCreateService",
        "Warning",
        "Failed to create the service %s/%s, %v",
    ),
    ("rayservice_controller", "CreatedService", "Normal", "Created the service %s/%s"),
    (
        "rayservice_controller",
        "FailedToUpdateServeApplications",
        "Warning",
        "Failed to update serve applications to the RayCluster %s/%s: %v",
    ),
    (
        "rayservice_controller",
        "UpdatedServeApplications",
        "Normal",
        "Updated serve applications to the RayCluster %s/%s",
    ),
    (
        "rayservice_controller",
        "FailedToUpdateTargetCapacity",
        "Warning",
        "Failed to update target_capacity of serve applications to the RayCluster %s/%s: %v",
    ),
    (
        "rayservice_controller",
        "UpdatedServeTargetCapacity",
        "Normal",
        "Updated target_capacity of serve applications to to the RayCluster %s/%s",
    ),
    (
        "rayservice_controller",
        "FailedToUpdateHeadPodServeLabel",
        "Warning",
        "Failed to update the serve label to %q for the Head Pod %s/%s: %v",
    ),
    (
        "rayservice_controller",
        "UpdatedHeadPodServeLabel",
        "Normal",
        "Updated the serve label to %q for the Head Pod %s/%s",
    ),
    (
        "rayservice_controller",
        "RayServiceInitializingTimeout",
        "Warning",
        "RayService initializing timeout exceeded after %s (configured timeout: %s)",
    ),
]
