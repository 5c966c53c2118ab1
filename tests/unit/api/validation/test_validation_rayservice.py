"""RayService validation rules (kuberay/api/v1/validation/rayservice.py): each with a
failing example (path + message asserted) and a passing near-miss."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuberay.api.v1 import validate_rayservice
from tests.unit.api.kuberay_api_testutil import rayservice
from tests.unit.api.validation.validation_testlib import Case, Mutation, all_of, check_case, put

INC = {
    "type": "NewClusterWithIncrementalUpgrade",
    "clusterUpgradeOptions": {
        "maxSurgePercent": 50,
        "stepSizePercent": 20,
        "intervalSeconds": 30,
        "gatewayClassName": "istio",
    },
}
RS_AUTOSCALING = put("spec", "rayClusterConfig", "enableInTreeAutoscaling", True)


def _inc(**options: Any) -> Mutation:
    value = copy.deepcopy(INC)
    value["clusterUpgradeOptions"].update(options)
    return all_of(RS_AUTOSCALING, put("spec", "upgradeStrategy", value))


RAYSERVICE_CASES = [
    Case(
        "name-length",
        put("metadata", "name", "s" * 48),
        "metadata.name",
        "The RayService metadata is invalid: RayService name should be no more than 47 characters",
        put("metadata", "name", "s" * 47),
        source="metadata",
    ),
    Case(
        "name-dns1035",
        put("metadata", "name", "Svc"),
        "metadata.name",
        "The RayService metadata is invalid: RayService name should be a valid DNS1035 label",
        source="metadata",
    ),
    Case(
        "initializing-timeout-duration",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "-5m"}),
        "metadata.annotations[ray.io/initializing-timeout]",
        "The RayService metadata is invalid: RayService annotations is invalid: annotation "
        "ray.io/initializing-timeout must be a positive duration, got: -5m",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "1h30m"}),
        source="metadata",
    ),
    Case(
        "initializing-timeout-zero",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "0"}),
        "metadata.annotations[ray.io/initializing-timeout]",
        "must be a positive duration, got: 0",
        source="metadata",
    ),
    Case(
        "initializing-timeout-integer",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "-3"}),
        "metadata.annotations[ray.io/initializing-timeout]",
        "annotation ray.io/initializing-timeout must be a positive integer (seconds), got: -3",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "300"}),
        source="metadata",
    ),
    Case(
        "initializing-timeout-format",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "abc"}),
        "metadata.annotations[ray.io/initializing-timeout]",
        "annotation ray.io/initializing-timeout has invalid format: abc. Expected Go duration "
        "format (e.g., '5m', '1h') or positive integer seconds",
        put("metadata", "annotations", {"ray.io/initializing-timeout": ""}),
        source="metadata",
    ),
    Case(
        "k8s-token-auth",
        put("spec", "rayClusterConfig", "authOptions", {"enableK8sTokenAuth": True}),
        "spec.rayClusterConfig.authOptions.enableK8sTokenAuth",
        "The RayService spec is invalid: K8s token auth mode is currently not supported for "
        "RayService",
    ),
    Case(
        "embedded-cluster-spec",
        put("spec", "rayClusterConfig", "headGroupSpec", "template", "spec", "containers", []),
        "spec.rayClusterConfig.headGroupSpec.template.spec.containers",
        "The RayService spec is invalid: headGroupSpec should have at least one container",
    ),
    Case(
        "head-service-name",
        put(
            "spec", "rayClusterConfig", "headGroupSpec", "headService", {"metadata": {"name": "x"}}
        ),
        "spec.rayClusterConfig.headGroupSpec.headService.metadata.name",
        "The RayService spec is invalid: spec.rayClusterConfig.headGroupSpec.headService.metadata."
        "name should not be set",
        put(
            "spec",
            "rayClusterConfig",
            "headGroupSpec",
            "headService",
            {"metadata": {"labels": {"a": "b"}}},
        ),
    ),
    Case(
        "upgrade-type",
        put("spec", "upgradeStrategy", {"type": "Blue"}),
        "spec.upgradeStrategy.type",
        "The RayService spec is invalid: Spec.UpgradeStrategy.Type value Blue is invalid, valid "
        "options are NewClusterWithIncrementalUpgrade, NewCluster, or None",
        put("spec", "upgradeStrategy", {"type": "None"}),
    ),
    Case(
        "deletion-delay",
        put("spec", "rayClusterDeletionDelaySeconds", -1),
        "spec.rayClusterDeletionDelaySeconds",
        "The RayService spec is invalid: Spec.RayClusterDeletionDelaySeconds should be a "
        "non-negative integer, got -1",
        put("spec", "rayClusterDeletionDelaySeconds", 0),
    ),
    Case(
        "deletion-delay-crd",
        put("spec", "rayClusterDeletionDelaySeconds", -1),
        "spec.rayClusterDeletionDelaySeconds",
        "should be greater than or equal to 0",
        source="crd",
    ),
    Case(
        "incremental-needs-autoscaler",
        put("spec", "upgradeStrategy", INC),
        "spec.rayClusterConfig.enableInTreeAutoscaling",
        "The RayService spec is invalid: Ray Autoscaler is required for "
        "NewClusterWithIncrementalUpgrade",
        _inc(),
    ),
    Case(
        "incremental-gate-off-skips-checks",
        put("spec", "upgradeStrategy", INC),
        "spec.rayClusterConfig.enableInTreeAutoscaling",
        "Ray Autoscaler is required",
        put("spec", "upgradeStrategy", INC),
        good_gates={"RayServiceIncrementalUpgrade": False},
    ),
    Case(
        "incremental-needs-options",
        all_of(
            RS_AUTOSCALING,
            put("spec", "upgradeStrategy", {"type": "NewClusterWithIncrementalUpgrade"}),
        ),
        "spec.upgradeStrategy.clusterUpgradeOptions",
        "The RayService spec is invalid: ClusterUpgradeOptions are required for "
        "NewClusterWithIncrementalUpgrade",
    ),
    Case(
        "incremental-max-surge",
        _inc(maxSurgePercent=150),
        "spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent",
        "The RayService spec is invalid: maxSurgePercent must be between 0 and 100",
        _inc(maxSurgePercent=100),
    ),
    Case(
        "incremental-step-size",
        _inc(stepSizePercent=-1),
        "spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent",
        "The RayService spec is invalid: stepSizePercent must be between 0 and 100",
        _inc(stepSizePercent=0),
    ),
    Case(
        "incremental-step-gt-surge",
        _inc(stepSizePercent=50, maxSurgePercent=20),
        "spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent",
        "The RayService spec is invalid: stepSizePercent must be less than or equal to "
        "maxSurgePercent",
        _inc(stepSizePercent=20, maxSurgePercent=20),
    ),
    Case(
        "incremental-interval",
        _inc(intervalSeconds=0),
        "spec.upgradeStrategy.clusterUpgradeOptions.intervalSeconds",
        "The RayService spec is invalid: intervalSeconds must be greater than 0",
        _inc(intervalSeconds=1),
    ),
    Case(
        "incremental-gateway-class",
        _inc(gatewayClassName=""),
        "spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName",
        "The RayService spec is invalid: gatewayClassName is required for "
        "NewClusterWithIncrementalUpgrade",
    ),
    Case(
        "crd-missing-required-option",
        all_of(
            RS_AUTOSCALING,
            put(
                "spec",
                "upgradeStrategy",
                {
                    "type": "NewClusterWithIncrementalUpgrade",
                    "clusterUpgradeOptions": {"gatewayClassName": "g"},
                },
            ),
        ),
        "spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent",
        "Required value",
        source="crd",
    ),
]


@pytest.mark.parametrize("case", RAYSERVICE_CASES, ids=lambda c: c.id)
def test_rayservice_rule(case: Case) -> None:
    check_case(validate_rayservice, rayservice(), case)
