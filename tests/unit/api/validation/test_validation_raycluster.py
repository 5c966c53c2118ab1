"""RayCluster validation rules (kuberay/api/v1/validation/raycluster.py): names, groups,
resources, labels, autoscaler, suspend, webhook and CRD schema rules; each with a failing
example (path + message asserted) and a passing near-miss."""

from __future__ import annotations

import copy

import pytest

from kuberay.api.v1 import validate_raycluster
from tests.unit.api.kuberay_api_testutil import raycluster
from tests.unit.api.validation.validation_testlib import (
    AUTOSCALING,
    GATES_ALL,
    HEAD,
    HEAD_C,
    ROCKSDB,
    V2,
    W0,
    Case,
    all_of,
    check_case,
    drop,
    env,
    put,
)

RAYCLUSTER_CASES = [
    Case(
        "name-length",
        put("metadata", "name", "a" * 54),
        "metadata.name",
        "RayCluster name should be no more than 53 characters",
        put("metadata", "name", "a" * 53),
        source="metadata",
    ),
    Case(
        "name-dns1035",
        put("metadata", "name", "1cluster"),
        "metadata.name",
        "RayCluster name should be a valid DNS1035 label: [a DNS-1035 label must consist",
        put("metadata", "name", "cluster1"),
        source="metadata",
    ),
    Case(
        "head-no-container",
        put(*HEAD, "template", "spec", "containers", []),
        "spec.headGroupSpec.template.spec.containers",
        "headGroupSpec should have at least one container",
    ),
    Case(
        "head-resources-conflict",
        all_of(
            put(*HEAD, "rayStartParams", {"num-cpus": "1"}), put(*HEAD, "resources", {"CPU": "1"})
        ),
        "spec.headGroupSpec.resources",
        "resource fields should not be set in both rayStartParams and Resources for Head group",
        put(*HEAD, "resources", {"CPU": "1"}),
    ),
    Case(
        "head-labels-in-params",
        put(*HEAD, "rayStartParams", {"labels": "a=b"}),
        "spec.headGroupSpec.rayStartParams[labels]",
        "rayStartParams['labels'] is not supported for Head group; please use the top-level",
        put(*HEAD, "labels", {"a": "b"}),
    ),
    Case(
        "head-label-key",
        put(*HEAD, "labels", {"-bad": "x"}),
        "spec.headGroupSpec.labels[-bad]",
        "invalid label key for Head group: '-bad', error: name part must consist of",
        put(*HEAD, "labels", {"example.com/good": "x"}),
    ),
    Case(
        "worker-label-value",
        put(*W0, "labels", {"a": "bad value!"}),
        "spec.workerGroupSpecs[0].labels[a]",
        "invalid label value for key 'a' in workers group: 'bad value!', error: a valid label",
        put(*W0, "labels", {"a": "good_value"}),
    ),
    Case(
        "worker-no-container",
        put(*W0, "template", "spec", "containers", []),
        "spec.workerGroupSpecs[0].template.spec.containers",
        "workerGroupSpec should have at least one container",
    ),
    Case(
        "worker-min-max-unset",
        drop(*W0, "maxReplicas"),
        "spec.workerGroupSpecs[0].maxReplicas",
        "worker group workers must set both minReplicas and maxReplicas when autoscaling is "
        "disabled",
        all_of(drop(*W0, "maxReplicas"), AUTOSCALING),
    ),
    Case(
        "worker-negative-min",
        put(*W0, "minReplicas", -1),
        "spec.workerGroupSpecs[0].minReplicas",
        "worker group workers has negative minReplicas -1",
        put(*W0, "minReplicas", 0),
    ),
    Case(
        "worker-negative-max",
        all_of(put(*W0, "minReplicas", 0), put(*W0, "maxReplicas", -1)),
        "spec.workerGroupSpecs[0].maxReplicas",
        "worker group workers has negative maxReplicas -1",
        put(*W0, "maxReplicas", 0),
    ),
    Case(
        "worker-min-gt-max",
        all_of(put(*W0, "minReplicas", 5), put(*W0, "maxReplicas", 3)),
        "spec.workerGroupSpecs[0].minReplicas",
        "worker group workers has minReplicas 5 greater than maxReplicas 3",
        all_of(put(*W0, "minReplicas", 3), put(*W0, "maxReplicas", 3)),
    ),
    Case(
        "worker-resources-conflict",
        all_of(put(*W0, "rayStartParams", {"num-gpus": "1"}), put(*W0, "resources", {"GPU": "1"})),
        "spec.workerGroupSpecs[0].resources",
        "resource fields should not be set in both rayStartParams and Resources for workers group",
        put(*W0, "rayStartParams", {"num-gpus": "1"}),
    ),
    Case(
        "worker-idle-timeout-negative",
        all_of(V2, put(*W0, "idleTimeoutSeconds", -10)),
        "spec.workerGroupSpecs[0].idleTimeoutSeconds",
        "worker group workers: idleTimeoutSeconds must be non-negative, got -10",
        all_of(V2, put(*W0, "idleTimeoutSeconds", 0)),
    ),
    Case(
        "worker-idle-timeout-needs-v2",
        put(*W0, "idleTimeoutSeconds", 60),
        "spec.workerGroupSpecs[0].idleTimeoutSeconds",
        "worker group workers: idleTimeoutSeconds is set, but autoscaler v2 is not enabled",
        all_of(
            AUTOSCALING,
            put(*W0, "idleTimeoutSeconds", 60),
            put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "true"))),
        ),
    ),
    Case(
        "worker-priority-no-version",
        all_of(V2, put(*W0, "priority", 1), drop("spec", "rayVersion")),
        "spec.workerGroupSpecs[0].priority",
        "worker group workers: priority is set, but RayVersion was not specified. Ray version "
        "2.56.0 or later is required",
        all_of(put(*W0, "priority", 0), drop("spec", "rayVersion")),
    ),
    Case(
        "worker-priority-bad-version",
        all_of(V2, put(*W0, "priority", 1), put("spec", "rayVersion", "abc")),
        "spec.workerGroupSpecs[0].priority",
        'priority is set, but RayVersion format is invalid: abc, could not parse "abc" as version',
        all_of(V2, put(*W0, "priority", 1), put("spec", "rayVersion", "2.56.0")),
    ),
    Case(
        "worker-priority-old-version",
        all_of(V2, put(*W0, "priority", 1), put("spec", "rayVersion", "2.55.0")),
        "spec.workerGroupSpecs[0].priority",
        "worker group workers: priority is set, but minimum Ray version is 2.56.0, got 2.55.0",
        all_of(V2, put(*W0, "priority", 1), put("spec", "rayVersion", "2.56.1")),
    ),
    Case(
        "worker-priority-needs-v2",
        all_of(AUTOSCALING, put(*W0, "priority", 1), put("spec", "rayVersion", "2.56.0")),
        "spec.workerGroupSpecs[0].priority",
        "worker group workers: priority is set to 1, but autoscaler v2 is not enabled",
        all_of(V2, put(*W0, "priority", -3), put("spec", "rayVersion", "2.56.0")),
    ),
    Case(
        "worker-suspend-needs-gate",
        put(*W0, "suspend", True),
        "spec.workerGroupSpecs[0].suspend",
        "worker group workers can be suspended only when the RayJobDeletionPolicy feature gate",
        put(*W0, "suspend", True),
        gates={"RayJobDeletionPolicy": False},
        good_gates={"RayJobDeletionPolicy": True},
    ),
    Case(
        "v2-env-without-autoscaling",
        put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "1"))),
        "spec.headGroupSpec.template.spec.containers[0].env[0]",
        "environment variable RAY_enable_autoscaler_v2 cannot be set to '1' when "
        "enableInTreeAutoscaling is false",
        put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "0"))),
    ),
    Case(
        "suspend-with-autoscaling",
        all_of(AUTOSCALING, put(*W0, "suspend", True)),
        "spec.workerGroupSpecs[0].suspend",
        "worker group workers cannot be suspended with Autoscaler enabled",
        all_of(AUTOSCALING, put(*W0, "suspend", False)),
    ),
    Case(
        "version-and-v2-env",
        all_of(V2, put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "true")))),
        "spec.autoscalerOptions.version",
        "both .spec.autoscalerOptions.version and head Pod env var RAY_enable_autoscaler_v2 are "
        "set, please only use the former",
        all_of(AUTOSCALING, put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "true")))),
    ),
    Case(
        "v2-head-restart-policy",
        all_of(V2, put(*HEAD, "template", "spec", "restartPolicy", "Always")),
        "spec.headGroupSpec.template.spec.restartPolicy",
        "restartPolicy for head Pod should be Never or unset when using autoscaler V2",
        all_of(V2, put(*HEAD, "template", "spec", "restartPolicy", "Never")),
    ),
    Case(
        "v2-worker-restart-policy",
        all_of(V2, put(*W0, "template", "spec", "restartPolicy", "OnFailure")),
        "spec.workerGroupSpecs[0].template.spec.restartPolicy",
        "restartPolicy for worker group workers should be Never or unset when using autoscaler V2",
        all_of(AUTOSCALING, put(*W0, "template", "spec", "restartPolicy", "OnFailure")),
    ),
    Case(
        "autoscaler-idle-timeout",
        put("spec", "autoscalerOptions", {"idleTimeoutSeconds": -1}),
        "spec.autoscalerOptions.idleTimeoutSeconds",
        "autoscalerOptions.idleTimeoutSeconds must be non-negative, got -1",
        put("spec", "autoscalerOptions", {"idleTimeoutSeconds": 0}),
    ),
    Case(
        "autoscaler-env-gen-cmd",
        put("spec", "autoscalerOptions", {"env": env(("KUBERAY_GEN_AUTOSCALER_START_CMD", "x"))}),
        "spec.autoscalerOptions.env[0]",
        "autoscalerOptions.env must not contain KUBERAY_GEN_AUTOSCALER_START_CMD: it is managed",
        put("spec", "autoscalerOptions", {"env": env(("OTHER", "x"))}),
    ),
    Case(
        "upgrade-strategy-on-owned-cluster",
        all_of(
            put("spec", "upgradeStrategy", {"type": "Recreate"}),
            put("metadata", "labels", {"ray.io/originated-from-crd": "RayJob"}),
        ),
        "spec.upgradeStrategy.type",
        "upgradeStrategy cannot be set when RayCluster is created by RayJob",
        all_of(
            put("spec", "upgradeStrategy", {"type": "Recreate"}),
            put("metadata", "labels", {"ray.io/originated-from-crd": "Other"}),
        ),
        source="upgrade",
    ),
    Case(
        "status-suspending-and-suspended",
        put(
            "status",
            {
                "conditions": [
                    {"type": "RayClusterSuspending", "status": "True"},
                    {"type": "RayClusterSuspended", "status": "True"},
                ]
            },
        ),
        "status.conditions",
        "invalid RayCluster State: rayv1.RayClusterSuspending and rayv1.RayClusterSuspended "
        "conditions should not be both true",
        put(
            "status",
            {
                "conditions": [
                    {"type": "RayClusterSuspending", "status": "False"},
                    {"type": "RayClusterSuspended", "status": "True"},
                ]
            },
        ),
        source="status",
    ),
    Case(
        "webhook-unique-group-names",
        lambda obj: obj["spec"]["workerGroupSpecs"].append(
            copy.deepcopy(obj["spec"]["workerGroupSpecs"][0])
        ),
        "spec.workerGroupSpecs[1].groupName",
        "worker group names must be unique",
        source="webhook",
    ),
    Case(
        "crd-managed-by-value",
        put("spec", "managedBy", "someone-else"),
        "spec.managedBy",
        "the managedBy field value must be either 'ray.io/kuberay-operator' or "
        "'kueue.x-k8s.io/multikueue'",
        put("spec", "managedBy", "kueue.x-k8s.io/multikueue"),
        source="crd",
    ),
    Case(
        "crd-enum",
        put("spec", "autoscalerOptions", {"version": "v3"}),
        "spec.autoscalerOptions.version",
        "unsupported value 'v3': supported values: 'v1', 'v2'",
        put("spec", "autoscalerOptions", {"version": "v1"}),
        source="crd",
    ),
    Case(
        "crd-quantity-pattern",
        put("spec", "gcsFaultToleranceOptions", {**ROCKSDB, "storage": {"size": "lots"}}),
        "spec.gcsFaultToleranceOptions.storage.size",
        "spec.gcsFaultToleranceOptions.storage.size in body should match",
        put("spec", "gcsFaultToleranceOptions", {**ROCKSDB, "storage": {"size": "1.5Gi"}}),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
        source="crd",
    ),
    Case(
        "crd-list-map-duplicate",
        put(
            "spec",
            "networkPolicy",
            {"workerGroups": [{"groupName": "workers"}, {"groupName": "workers"}]},
        ),
        "spec.networkPolicy.workerGroups[1]",
        'Duplicate value: {"groupName":"workers"}',
        gates=GATES_ALL,
        source="crd",
    ),
]


@pytest.mark.parametrize("case", RAYCLUSTER_CASES, ids=lambda c: c.id)
def test_raycluster_rule(case: Case) -> None:
    check_case(validate_raycluster, raycluster(), case)
