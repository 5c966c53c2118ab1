"""RayJob validation rules (kuberay/api/v1/validation/rayjob.py): each with a failing
example (path + message asserted) and a passing near-miss."""

from __future__ import annotations

import pytest

from kuberay.api.v1 import validate_rayjob
from tests.unit.api.kuberay_api_testutil import rayjob
from tests.unit.api.validation.validation_testlib import Case, all_of, check_case, drop, put

JW = ("spec", "rayClusterSpec", "workerGroupSpecs", 0)
RULE_SUCCEEDED = {"policy": "DeleteCluster", "condition": {"jobStatus": "SUCCEEDED"}}


RAYJOB_CASES = [
    Case(
        "name-length",
        put("metadata", "name", "j" * 48),
        "metadata.name",
        "The RayJob metadata is invalid: RayJob name should be no more than 47 characters",
        put("metadata", "name", "j" * 47),
        source="metadata",
    ),
    Case(
        "name-dns1035",
        put("metadata", "name", "1job"),
        "metadata.name",
        "The RayJob metadata is invalid: RayJob name should be a valid DNS1035 label",
        source="metadata",
    ),
    Case(
        "suspend-needs-shutdown",
        put("spec", "suspend", True),
        "spec.suspend",
        "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not "
        "allowed to be suspended",
        all_of(put("spec", "suspend", True), put("spec", "shutdownAfterJobFinishes", True)),
    ),
    Case(
        "ttl-negative",
        all_of(
            put("spec", "ttlSecondsAfterFinished", -1),
            put("spec", "shutdownAfterJobFinishes", True),
        ),
        "spec.ttlSecondsAfterFinished",
        "The RayJob spec is invalid: TTLSecondsAfterFinished must be a non-negative integer",
    ),
    Case(
        "ttl-needs-shutdown",
        put("spec", "ttlSecondsAfterFinished", 10),
        "spec.ttlSecondsAfterFinished",
        "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false cannot "
        "have TTLSecondsAfterFinished",
        all_of(
            put("spec", "ttlSecondsAfterFinished", 10),
            put("spec", "shutdownAfterJobFinishes", True),
        ),
    ),
    Case(
        "deletion-needs-gate",
        put("spec", "deletionStrategy", {"deletionRules": [RULE_SUCCEEDED]}),
        "spec.deletionStrategy",
        "RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy",
        put("spec", "deletionStrategy", {"deletionRules": [RULE_SUCCEEDED]}),
        gates={"RayJobDeletionPolicy": False},
        good_gates={"RayJobDeletionPolicy": True},
    ),
    Case(
        "deletion-rules-vs-shutdown",
        all_of(
            put("spec", "deletionStrategy", {"deletionRules": [RULE_SUCCEEDED]}),
            put("spec", "shutdownAfterJobFinishes", True),
        ),
        "spec.shutdownAfterJobFinishes",
        "The RayJob spec is invalid: spec.shutdownAfterJobFinishes and "
        "spec.deletionStrategy.deletionRules are mutually exclusive",
    ),
    Case(
        "deletion-rules-vs-legacy",
        put(
            "spec",
            "deletionStrategy",
            {"deletionRules": [RULE_SUCCEEDED], "onSuccess": {"policy": "DeleteSelf"}},
        ),
        "spec.deletionStrategy",
        "The RayJob spec is invalid: Cannot use both legacy onSuccess/onFailure fields and "
        "deletionRules simultaneously",
    ),
    Case(
        "deletion-rules-vs-legacy-cel",
        put(
            "spec",
            "deletionStrategy",
            {"deletionRules": [RULE_SUCCEEDED], "onSuccess": {"policy": "DeleteSelf"}},
        ),
        "spec.deletionStrategy",
        "legacy policies (onSuccess/onFailure) and deletionRules cannot be used together",
        source="crd",
    ),
    Case(
        "deletion-legacy-incomplete",
        put("spec", "deletionStrategy", {"onSuccess": {"policy": "DeleteSelf"}}),
        "spec.deletionStrategy",
        "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when using "
        "the legacy deletion policy fields of DeletionStrategy",
        put(
            "spec",
            "deletionStrategy",
            {"onSuccess": {"policy": "DeleteSelf"}, "onFailure": {"policy": "DeleteSelf"}},
        ),
    ),
    Case(
        "deletion-legacy-incomplete-cel",
        put("spec", "deletionStrategy", {"onFailure": {"policy": "DeleteSelf"}}),
        "spec.deletionStrategy",
        "deletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field",
        source="crd",
    ),
    Case(
        "deletion-legacy-policy-unset",
        put("spec", "deletionStrategy", {"onSuccess": {}, "onFailure": {"policy": "DeleteSelf"}}),
        "spec.deletionStrategy.onSuccess.policy",
        "the DeletionPolicyType field of DeletionStrategy.OnSuccess cannot be unset when "
        "DeletionStrategy is enabled",
    ),
    Case(
        "deletion-legacy-selector",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put(
                "spec",
                "deletionStrategy",
                {"onSuccess": {"policy": "DeleteCluster"}, "onFailure": {"policy": "DeleteSelf"}},
            ),
        ),
        "spec.deletionStrategy.onSuccess.policy",
        "the ClusterSelector mode doesn't support DeletionStrategy=DeleteCluster on success",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put(
                "spec",
                "deletionStrategy",
                {"onSuccess": {"policy": "DeleteNone"}, "onFailure": {"policy": "DeleteSelf"}},
            ),
        ),
    ),
    Case(
        "deletion-legacy-workers-autoscaling",
        all_of(
            put("spec", "rayClusterSpec", "enableInTreeAutoscaling", True),
            put(
                "spec",
                "deletionStrategy",
                {
                    "onSuccess": {"policy": "DeleteWorkers"},
                    "onFailure": {"policy": "DeleteCluster"},
                },
            ),
        ),
        "spec.deletionStrategy",
        "DeletionStrategy=DeleteWorkers currently does not support RayCluster with autoscaling",
        put(
            "spec",
            "deletionStrategy",
            {"onSuccess": {"policy": "DeleteWorkers"}, "onFailure": {"policy": "DeleteCluster"}},
        ),
    ),
    Case(
        "deletion-legacy-shutdown-delete-none",
        all_of(
            put("spec", "shutdownAfterJobFinishes", True),
            put(
                "spec",
                "deletionStrategy",
                {"onSuccess": {"policy": "DeleteNone"}, "onFailure": {"policy": "DeleteCluster"}},
            ),
        ),
        "spec.deletionStrategy",
        "shutdownAfterJobFinshes is set to 'true' while deletion policy is 'DeleteNone'",
        all_of(
            put("spec", "shutdownAfterJobFinishes", True),
            put(
                "spec",
                "deletionStrategy",
                {"onSuccess": {"policy": "DeleteSelf"}, "onFailure": {"policy": "DeleteCluster"}},
            ),
        ),
    ),
    Case(
        "deletion-empty",
        put("spec", "deletionStrategy", {}),
        "spec.deletionStrategy",
        "The RayJob spec is invalid: DeletionStrategy requires either BOTH onSuccess and "
        "onFailure, OR the deletionRules field (cannot be empty)",
    ),
    Case(
        "deletion-rule-both-statuses",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "FAILED", "jobDeploymentStatus": "Failed"},
                    }
                ]
            },
        ),
        "spec.deletionStrategy.deletionRules[0].condition",
        "deletionRules[0]: cannot set both JobStatus and JobDeploymentStatus at the same time",
    ),
    Case(
        "deletion-rule-no-status",
        put(
            "spec",
            "deletionStrategy",
            {"deletionRules": [{"policy": "DeleteCluster", "condition": {}}]},
        ),
        "spec.deletionStrategy.deletionRules[0].condition",
        "deletionRules[0]: exactly one of JobStatus and JobDeploymentStatus must be set",
    ),
    Case(
        "deletion-rule-no-status-cel",
        put(
            "spec",
            "deletionStrategy",
            {"deletionRules": [{"policy": "DeleteCluster", "condition": {}}]},
        ),
        "spec.deletionStrategy.deletionRules[0].condition",
        "the deletion condition requires either the JobStatus or the JobDeploymentStatus field.",
        source="crd",
    ),
    Case(
        "deletion-rule-negative-ttl",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "FAILED", "ttlSeconds": -1},
                    }
                ]
            },
        ),
        "spec.deletionStrategy.deletionRules[0].condition.ttlSeconds",
        "deletionRules[0]: TTLSeconds must be non-negative",
    ),
    Case(
        "deletion-rule-negative-ttl-crd",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "FAILED", "ttlSeconds": -1},
                    }
                ]
            },
        ),
        "spec.deletionStrategy.deletionRules[0].condition.ttlSeconds",
        "should be greater than or equal to 0",
        source="crd",
    ),
    Case(
        "deletion-rule-selector",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put(
                "spec",
                "deletionStrategy",
                {
                    "deletionRules": [
                        {"policy": "DeleteWorkers", "condition": {"jobStatus": "FAILED"}}
                    ]
                },
            ),
        ),
        "spec.deletionStrategy.deletionRules[0].policy",
        "deletionRules[0]: DeletionPolicyType 'DeleteWorkers' not supported when ClusterSelector "
        "is set",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put(
                "spec",
                "deletionStrategy",
                {"deletionRules": [{"policy": "DeleteSelf", "condition": {"jobStatus": "FAILED"}}]},
            ),
        ),
    ),
    Case(
        "deletion-rule-workers-autoscaling",
        all_of(
            put("spec", "rayClusterSpec", "enableInTreeAutoscaling", True),
            put(
                "spec",
                "deletionStrategy",
                {
                    "deletionRules": [
                        {"policy": "DeleteWorkers", "condition": {"jobStatus": "FAILED"}}
                    ]
                },
            ),
        ),
        "spec.deletionStrategy.deletionRules[0].policy",
        "deletionRules[0]: DeletionPolicyType 'DeleteWorkers' not supported with autoscaling "
        "enabled",
    ),
    Case(
        "deletion-rule-duplicate",
        put("spec", "deletionStrategy", {"deletionRules": [RULE_SUCCEEDED, RULE_SUCCEEDED]}),
        "spec.deletionStrategy.deletionRules[1]",
        "deletionRules[1]: duplicate rule for DeletionPolicyType 'DeleteCluster' and JobStatus "
        "'SUCCEEDED'",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    RULE_SUCCEEDED,
                    {"policy": "DeleteCluster", "condition": {"jobDeploymentStatus": "Failed"}},
                ]
            },
        ),
    ),
    Case(
        "deletion-rule-ttl-order",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 10},
                    },
                    {
                        "policy": "DeleteWorkers",
                        "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 20},
                    },
                ]
            },
        ),
        "spec.deletionStrategy.deletionRules",
        "for JobStatus 'SUCCEEDED': DeleteCluster TTL (10) must be >= DeleteWorkers TTL (20)",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 20},
                    },
                    {
                        "policy": "DeleteWorkers",
                        "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 20},
                    },
                    {"policy": "DeleteSelf", "condition": {"jobStatus": "FAILED", "ttlSeconds": 0}},
                ]
            },
        ),
    ),
    Case(
        "suspend-with-selector",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "suspend", True),
            put("spec", "shutdownAfterJobFinishes", True),
        ),
        "spec.suspend",
        "The RayJob spec is invalid: the ClusterSelector mode doesn't support the suspend "
        "operation",
    ),
    Case(
        "needs-cluster-spec-or-selector",
        drop("spec", "rayClusterSpec"),
        "spec.rayClusterSpec",
        "The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set",
        all_of(
            drop("spec", "rayClusterSpec"), put("spec", "clusterSelector", {"ray.io/cluster": "c"})
        ),
    ),
    Case(
        "selector-empty-cluster-name",
        all_of(drop("spec", "rayClusterSpec"), put("spec", "clusterSelector", {"other": "c"})),
        "spec.clusterSelector[ray.io/cluster]",
        "cluster name in ClusterSelector should not be empty",
    ),
    Case(
        "selector-in-sidecar-mode",
        all_of(
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "submissionMode", "SidecarMode"),
        ),
        "spec.clusterSelector",
        "ClusterSelector is not supported in SidecarMode",
        all_of(
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "submissionMode", "HTTPMode"),
        ),
    ),
    Case(
        "selector-with-backoff",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "backoffLimit", 1),
        ),
        "spec.backoffLimit",
        "The RayJob spec is invalid: BackoffLimit is incompatible with ClusterSelector mode",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "backoffLimit", 0),
        ),
    ),
    Case(
        "interactive-with-backoff",
        all_of(put("spec", "submissionMode", "InteractiveMode"), put("spec", "backoffLimit", 2)),
        "spec.backoffLimit",
        "The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode",
        all_of(put("spec", "submissionMode", "K8sJobMode"), put("spec", "backoffLimit", 2)),
    ),
    Case(
        "sidecar-submitter-template",
        all_of(
            put("spec", "submissionMode", "SidecarMode"), put("spec", "submitterPodTemplate", {})
        ),
        "spec.submitterPodTemplate",
        "Currently, SidecarMode doesn't support SubmitterPodTemplate",
        all_of(
            put("spec", "submissionMode", "K8sJobMode"), put("spec", "submitterPodTemplate", {})
        ),
    ),
    Case(
        "sidecar-submitter-config",
        all_of(put("spec", "submissionMode", "SidecarMode"), put("spec", "submitterConfig", {})),
        "spec.submitterConfig",
        "Currently, SidecarMode doesn't support SubmitterConfig",
    ),
    Case(
        "sidecar-head-restart-policy",
        all_of(
            put("spec", "submissionMode", "SidecarMode"),
            put(
                "spec",
                "rayClusterSpec",
                "headGroupSpec",
                "template",
                "spec",
                "restartPolicy",
                "Always",
            ),
        ),
        "spec.rayClusterSpec.headGroupSpec.template.spec.restartPolicy",
        "restartPolicy for head Pod should be Never or unset when using SidecarMode",
        all_of(
            put("spec", "submissionMode", "SidecarMode"),
            put(
                "spec",
                "rayClusterSpec",
                "headGroupSpec",
                "template",
                "spec",
                "restartPolicy",
                "Never",
            ),
        ),
    ),
    Case(
        "k8s-token-auth",
        all_of(
            put(
                "spec",
                "rayClusterSpec",
                "authOptions",
                {"mode": "token", "enableK8sTokenAuth": True},
            ),
            put("spec", "rayClusterSpec", "rayVersion", "2.55.0"),
        ),
        "spec.rayClusterSpec.authOptions.enableK8sTokenAuth",
        "The RayJob spec is invalid: K8s token auth mode is currently not supported for RayJob",
        put("spec", "rayClusterSpec", "authOptions", {"mode": "token"}),
    ),
    Case(
        "embedded-cluster-spec",
        put(*JW, "minReplicas", -2),
        "spec.rayClusterSpec.workerGroupSpecs[0].minReplicas",
        "The RayJob spec is invalid: worker group workers has negative minReplicas -2",
    ),
    Case(
        "embedded-cluster-ft-annotation",
        all_of(
            put("metadata", "annotations", {"ray.io/ft-enabled": "true"}),
            put("spec", "rayClusterSpec", "gcsFaultToleranceOptions", {"redisAddress": "r:1"}),
        ),
        "metadata.annotations[ray.io/ft-enabled]",
        "The RayJob spec is invalid: ray.io/ft-enabled annotation and GcsFaultToleranceOptions",
    ),
    Case(
        "runtime-env-yaml-syntax",
        put("spec", "runtimeEnvYAML", "a: [b"),
        "spec.runtimeEnvYAML",
        "failed to unmarshal RuntimeEnvYAML: a: [b: ",
        put("spec", "runtimeEnvYAML", "pip: [requests]\nenv_vars: {A: b}\n"),
    ),
    Case(
        "runtime-env-yaml-not-a-map",
        put("spec", "runtimeEnvYAML", "- a\n- b\n"),
        "spec.runtimeEnvYAML",
        "cannot unmarshal array into Go value of type map[string]interface {}",
        put("spec", "runtimeEnvYAML", ""),
    ),
    Case(
        "active-deadline",
        put("spec", "activeDeadlineSeconds", 0),
        "spec.activeDeadlineSeconds",
        "The RayJob spec is invalid: activeDeadlineSeconds must be a positive integer",
        put("spec", "activeDeadlineSeconds", 1),
    ),
    Case(
        "pre-running-deadline",
        put("spec", "preRunningDeadlineSeconds", 0),
        "spec.preRunningDeadlineSeconds",
        "The RayJob spec is invalid: preRunningDeadlineSeconds must be a positive integer",
        put("spec", "preRunningDeadlineSeconds", 1),
    ),
    Case(
        "pre-running-deadline-crd",
        put("spec", "preRunningDeadlineSeconds", 0),
        "spec.preRunningDeadlineSeconds",
        "Invalid value: 0: spec.preRunningDeadlineSeconds in body should be greater than or "
        "equal to 1",
        source="crd",
    ),
    Case(
        "backoff-negative",
        put("spec", "backoffLimit", -1),
        "spec.backoffLimit",
        "The RayJob spec is invalid: backoffLimit must be a positive integer",
        put("spec", "backoffLimit", 0),
    ),
    Case(
        "status-waiting",
        put("status", {"jobDeploymentStatus": "Waiting"}),
        "status.jobDeploymentStatus",
        "The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when SubmissionMode "
        "is not InteractiveMode",
        all_of(
            put("status", {"jobDeploymentStatus": "Waiting"}),
            put("spec", "submissionMode", "InteractiveMode"),
        ),
        source="status",
    ),
    Case(
        "crd-managed-by",
        put("spec", "rayClusterSpec", "managedBy", "x"),
        "spec.rayClusterSpec.managedBy",
        "the managedBy field value must be either",
        put("spec", "managedBy", "ray.io/kuberay-operator"),
        source="crd",
    ),
]


@pytest.mark.parametrize("case", RAYJOB_CASES, ids=lambda c: c.id)
def test_rayjob_rule(case: Case) -> None:
    check_case(validate_rayjob, rayjob(), case)
