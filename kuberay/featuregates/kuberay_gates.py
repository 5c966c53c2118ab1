"""KubeRay's feature gates: the same names, defaults and stages as KubeRay v1.7, plus v1.8's
``NodeLabelDelivery``.

``new_feature_gate()`` returns a fresh registry (one per operator process or
test); ``--feature-gates=A=true,B=false`` is applied to it by the command line.
"""

from __future__ import annotations

from .gate import FeatureGate
from .spec import FeatureSpec, Stage

RAY_CLUSTER_STATUS_CONDITIONS = "RayClusterStatusConditions"
RAY_JOB_DELETION_POLICY = "RayJobDeletionPolicy"
RAY_MULTI_HOST_INDEXING = "RayMultiHostIndexing"
RAY_SERVICE_INCREMENTAL_UPGRADE = "RayServiceIncrementalUpgrade"
RAY_CRON_JOB = "RayCronJob"
SIDECAR_SUBMITTER_RESTART = "SidecarSubmitterRestart"
RAY_CLUSTER_NETWORK_POLICY = "RayClusterNetworkPolicy"
GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE = "GCSFaultToleranceEmbeddedStorage"
RAY_CLUSTER_MTLS = "RayClusterMTLS"
RAY_CLUSTER_HISTORY_SERVER = "RayClusterHistoryServer"
KUBERNETES_WAS = "KubernetesWAS"
NODE_LABEL_DELIVERY = "NodeLabelDelivery"

KUBERAY_FEATURES: dict[str, FeatureSpec] = {
    RAY_CLUSTER_STATUS_CONDITIONS: FeatureSpec(True, Stage.BETA),
    RAY_JOB_DELETION_POLICY: FeatureSpec(True, Stage.BETA),
    RAY_MULTI_HOST_INDEXING: FeatureSpec(True, Stage.BETA),
    RAY_SERVICE_INCREMENTAL_UPGRADE: FeatureSpec(True, Stage.BETA),
    RAY_CRON_JOB: FeatureSpec(False, Stage.ALPHA),
    SIDECAR_SUBMITTER_RESTART: FeatureSpec(False, Stage.ALPHA),
    RAY_CLUSTER_NETWORK_POLICY: FeatureSpec(False, Stage.ALPHA),
    GCS_FAULT_TOLERANCE_EMBEDDED_STORAGE: FeatureSpec(False, Stage.ALPHA),
    RAY_CLUSTER_MTLS: FeatureSpec(False, Stage.ALPHA),
    RAY_CLUSTER_HISTORY_SERVER: FeatureSpec(False, Stage.ALPHA),
    KUBERNETES_WAS: FeatureSpec(False, Stage.ALPHA),
    NODE_LABEL_DELIVERY: FeatureSpec(False, Stage.ALPHA),
}


#: Gates whose controllers this build does not have yet, and what turning one on would
#: silently fail to do. The operator refuses to start with any of them on rather than
#: half-apply it (for example mTLS volumes on pods waiting for certificates nobody issues).
#: Empty: every KubeRay v1.7 gate is implemented.
UNIMPLEMENTED_GATES: dict[str, str] = {}


def new_feature_gate() -> FeatureGate:
    """A registry holding every KubeRay gate at its default."""
    return FeatureGate(KUBERAY_FEATURES)
