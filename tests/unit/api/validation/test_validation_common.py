"""What every kind's validation shares: valid base objects, the error list (order,
CRD vs controller errors, Go zero values, gates, warnings), update (CEL transition) rules
and the error text."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kuberay.api.v1 import (
    FieldError,
    RayCluster,
    first_error,
    raycluster_spec_warnings,
    structure,
    validate_raycluster,
    validate_raycluster_update,
    validate_raycronjob,
    validate_raycronjob_update,
    validate_rayjob,
    validate_rayjob_update,
    validate_rayservice,
    validate_rayservice_update,
)
from tests.unit.api.kuberay_api_testutil import raycluster, raycronjob, rayjob, rayservice


@pytest.mark.parametrize(
    ("validate", "builder"),
    [
        (validate_raycluster, raycluster),
        (validate_rayjob, rayjob),
        (validate_rayservice, rayservice),
        (validate_raycronjob, raycronjob),
    ],
)
def test_base_objects_are_valid(validate: Callable[..., list[FieldError]], builder: Any) -> None:
    assert validate(builder()) == []
    assert validate(structure(type_for(builder()), builder())) == []


def type_for(obj: dict[str, Any]) -> Any:
    from kuberay.api.v1 import MODELS

    return MODELS[obj["kind"]]


# --- behaviour of the error list ------------------------------------------------------------
def test_all_errors_are_returned_in_kuberay_order() -> None:
    obj = raycluster(name="Bad_Name")
    obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"] = []
    obj["spec"]["workerGroupSpecs"][0].update({"minReplicas": 4, "maxReplicas": 2})
    obj["spec"]["autoscalerOptions"] = {"idleTimeoutSeconds": -5}
    errors = validate_raycluster(obj)
    assert [e.source for e in errors] == ["metadata", "spec", "spec", "spec"]
    assert [e.path for e in errors] == [
        "metadata.name",
        "spec.headGroupSpec.template.spec.containers",
        "spec.workerGroupSpecs[0].minReplicas",
        "spec.autoscalerOptions.idleTimeoutSeconds",
    ]
    first = first_error(errors, "spec")
    assert first is not None
    assert first.message == "headGroupSpec should have at least one container"
    assert first_error(errors) == errors[0]
    assert first_error(errors, "status") is None
    assert str(errors[0]).startswith("metadata.name: RayCluster name should be a valid DNS1035")


def test_unstructurable_dict_yields_crd_errors_only() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = "two"
    errors = validate_raycluster(obj)
    assert errors == [
        FieldError("spec.workerGroupSpecs[0].replicas", "expected an integer, got string", "crd")
    ]


def test_model_with_out_of_enum_value_reports_crd_and_controller_errors() -> None:
    model = structure(RayCluster, raycluster(upgradeStrategy={"type": "Recreate"}))
    assert model.spec is not None and model.spec.upgrade_strategy is not None
    model.spec.upgrade_strategy.type = "Rolling"  # type: ignore[assignment]
    errors = validate_raycluster(model)
    assert [(e.source, e.path) for e in errors] == [
        ("crd", "spec.upgradeStrategy.type"),
        ("upgrade", "spec.upgradeStrategy.type"),
    ]
    assert errors[0].message == (
        'Unsupported value: "Rolling": supported values: "Recreate", "None"'
    )
    assert errors[1].message == (
        "The RayCluster spec is invalid: Spec.UpgradeStrategy.Type value Rolling is invalid, "
        "valid options are Recreate or None"
    )


def test_missing_spec_is_validated_like_go_zero_values() -> None:
    errors = validate_raycluster({"metadata": {"name": "c"}})
    assert [e.message for e in errors] == ["headGroupSpec should have at least one container"]
    job_errors = validate_rayjob({"metadata": {"name": "j"}})
    assert [e.message for e in job_errors] == [
        "The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set"
    ]
    cron_errors = validate_raycronjob({"metadata": {"name": "c"}})
    assert cron_errors[0].message == "invalid cron schedule: empty spec string"


def test_callable_gates() -> None:
    obj = raycluster(networkPolicy={})
    assert validate_raycluster(obj, gates=lambda name: name == "RayClusterNetworkPolicy") == []
    assert validate_raycluster(obj, gates=lambda name: False) != []


def test_autoscaler_v1_restart_policy_warning() -> None:
    obj = raycluster(enableInTreeAutoscaling=True, autoscalerOptions={"version": "v1"})
    obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Always"
    assert raycluster_spec_warnings(obj) == [
        "restartPolicy for worker groups [workers] should be Never or unset when using "
        "autoscaler V1"
    ]
    assert validate_raycluster(obj) == []  # a warning, not an error
    obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Never"
    assert raycluster_spec_warnings(obj) == []


# --- updates (CEL transition rules) ---------------------------------------------------------
def test_raycluster_update_managed_by_and_backend_are_immutable() -> None:
    old = raycluster(
        managedBy="ray.io/kuberay-operator", gcsFaultToleranceOptions={"backend": "redis"}
    )
    new = copy.deepcopy(old)
    new["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    new["spec"]["gcsFaultToleranceOptions"]["backend"] = "rocksdb"
    errors = validate_raycluster_update(old, new, gates={"GCSFaultToleranceEmbeddedStorage": True})
    assert [(e.path, e.message, e.source) for e in errors] == [
        ("spec.managedBy", "the managedBy field is immutable", "crd"),
        (
            "spec.gcsFaultToleranceOptions.backend",
            "gcsFaultToleranceOptions.backend is immutable",
            "crd",
        ),
    ]
    # Adding or removing the field is not a transition (CEL oldSelf semantics).
    added = copy.deepcopy(raycluster())
    added["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert validate_raycluster_update(raycluster(), added) == []
    assert validate_raycluster_update(old, raycluster()) == []


def test_rayjob_update_rules() -> None:
    old = rayjob(managedBy="ray.io/kuberay-operator")
    new = copy.deepcopy(old)
    new["spec"]["entrypoint"] = "python other.py"
    new["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] = 3
    assert validate_rayjob_update(old, new) == []  # KubeRay accepts (and ignores) such edits
    new["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    errors = validate_rayjob_update(old, new)
    assert [(e.path, e.message) for e in errors] == [
        ("spec.managedBy", "the managedBy field is immutable")
    ]
    cluster_old = rayjob()
    cluster_old["spec"]["rayClusterSpec"]["managedBy"] = "ray.io/kuberay-operator"
    cluster_new = copy.deepcopy(cluster_old)
    cluster_new["spec"]["rayClusterSpec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert [e.path for e in validate_rayjob_update(cluster_old, cluster_new)] == [
        "spec.rayClusterSpec.managedBy"
    ]


def test_rayservice_and_raycronjob_update_rules() -> None:
    old = rayservice(managedBy="ray.io/kuberay-operator")
    new = copy.deepcopy(old)
    new["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert [e.path for e in validate_rayservice_update(old, new)] == ["spec.managedBy"]
    cron_old = raycronjob()
    cron_old["spec"]["jobTemplate"]["managedBy"] = "ray.io/kuberay-operator"
    cron_new = copy.deepcopy(cron_old)
    cron_new["spec"]["jobTemplate"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    cron_new["spec"]["schedule"] = "bad"
    errors = validate_raycronjob_update(cron_old, cron_new)
    assert [e.path for e in errors] == ["spec.jobTemplate.managedBy", "spec.schedule"]


def test_error_text_names_the_field_once() -> None:
    from kuberay.api.v1.validation.errors import FieldError

    # KubeRay's message already names the field: keep it as it is.
    gate = FieldError(
        "spec.tlsOptions",
        "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled",
    )
    assert str(gate) == "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled"
    # Otherwise the path leads, once.
    assert str(FieldError("spec.workerGroupSpecs[0].replicas", "must be >= 0")) == (
        "spec.workerGroupSpecs[0].replicas: must be >= 0"
    )
