"""AdmissionReview handling of the ray.io validating webhooks (no server, no cluster)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuberay.api.v1 import validate_raycluster, validate_rayjob, validate_rayservice
from kuberay.webhooks import (
    RAYCLUSTER_WEBHOOK,
    RAYJOB_WEBHOOK,
    RAYSERVICE_WEBHOOK,
    WEBHOOKS,
    BadRequest,
    KindWebhook,
    review,
)
from kuberay.webhooks.admission import format_value, lookup_path


# --- builders -----------------------------------------------------------------------------
def _container(name: str) -> dict[str, Any]:
    return {"name": name, "image": "rayproject/ray:2.52.0"}


def _cluster_spec() -> dict[str, Any]:
    return {
        "rayVersion": "2.52.0",
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {"spec": {"containers": [_container("ray-head")]}},
        },
        "workerGroupSpecs": [
            {
                "groupName": "workers",
                "replicas": 1,
                "minReplicas": 0,
                "maxReplicas": 3,
                "rayStartParams": {},
                "template": {"spec": {"containers": [_container("ray-worker")]}},
            }
        ],
    }


def raycluster(name: str = "rc") -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": _cluster_spec(),
    }


def rayjob(name: str = "job") -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"entrypoint": "python job.py", "rayClusterSpec": _cluster_spec()},
    }


def rayservice(name: str = "svc") -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"rayClusterConfig": _cluster_spec()},
    }


VALID = {"RayCluster": raycluster, "RayJob": rayjob, "RayService": rayservice}


def admission_review(
    webhook: KindWebhook,
    obj: dict[str, Any] | None,
    *,
    operation: str = "CREATE",
    old: dict[str, Any] | None = None,
    uid: str = "705ab4f5-6393-11e8-b7cc-42010a800002",
    api_version: str = "admission.k8s.io/v1",
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "uid": uid,
        "kind": {"group": "ray.io", "version": "v1", "kind": webhook.kind},
        "resource": {"group": "ray.io", "version": "v1", "resource": webhook.plural},
        "requestKind": {"group": "ray.io", "version": "v1", "kind": webhook.kind},
        "namespace": "ns",
        "operation": operation,
        "userInfo": {"username": "admin"},
        "dryRun": False,
    }
    if obj is not None:
        request["object"] = obj
        request["name"] = obj["metadata"].get("name", "")
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": api_version, "kind": "AdmissionReview", "request": request}


def _response(answer: dict[str, Any]) -> dict[str, Any]:
    assert answer["apiVersion"] == "admission.k8s.io/v1"
    assert answer["kind"] == "AdmissionReview"
    response: dict[str, Any] = answer["response"]
    return response


# --- allowed ------------------------------------------------------------------------------
@pytest.mark.parametrize("webhook", WEBHOOKS, ids=lambda w: w.kind)
def test_valid_object_is_allowed(webhook: KindWebhook) -> None:
    obj = VALID[webhook.kind]()
    response = _response(review(webhook, admission_review(webhook, obj)))
    assert response == {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "allowed": True,
        "status": {"metadata": {}, "code": 200},
    }


@pytest.mark.parametrize("operation", ["DELETE", "CONNECT"])
def test_other_operations_are_allowed_unseen(operation: str) -> None:
    bad = raycluster("Not_Valid")
    response = _response(
        review(RAYCLUSTER_WEBHOOK, admission_review(RAYCLUSTER_WEBHOOK, bad, operation=operation))
    )
    assert response["allowed"] is True


def test_v1beta1_review_is_answered_in_kind() -> None:
    body = admission_review(RAYJOB_WEBHOOK, rayjob(), api_version="admission.k8s.io/v1beta1")
    answer = review(RAYJOB_WEBHOOK, body)
    assert answer["apiVersion"] == "admission.k8s.io/v1beta1"
    assert answer["response"]["allowed"] is True


# --- denied -------------------------------------------------------------------------------
def _bad_cluster() -> dict[str, Any]:
    obj = raycluster("Bad_Name")
    groups = obj["spec"]["workerGroupSpecs"]
    groups.append(copy.deepcopy(groups[0]))  # duplicate name (webhook-only rule)
    groups[0]["minReplicas"] = 5  # > maxReplicas 3
    groups[1]["maxReplicas"] = -1  # negative
    return obj


def test_denial_lists_every_error_with_its_path() -> None:
    obj = _bad_cluster()
    expected = [e for e in validate_raycluster(obj) if e.source != "status"]
    assert len(expected) >= 4
    response = _response(review(RAYCLUSTER_WEBHOOK, admission_review(RAYCLUSTER_WEBHOOK, obj)))
    assert response["allowed"] is False
    status = response["status"]
    assert status["code"] == 422
    assert status["status"] == "Failure"
    assert status["reason"] == "Invalid"
    details = status["details"]
    assert (details["group"], details["kind"], details["name"]) == (
        "ray.io",
        "RayCluster",
        "Bad_Name",
    )
    causes = details["causes"]
    assert [c["field"] for c in causes] == [e.path for e in expected]
    assert all(c["reason"] == "FieldValueInvalid" for c in causes)
    for cause, error in zip(causes, expected, strict=True):
        assert cause["message"].startswith("Invalid value: ")
        assert cause["message"].endswith(": " + error.message)
        assert f"{error.path}: {cause['message']}" in status["message"]
    assert status["message"].startswith('RayCluster.ray.io "Bad_Name" is invalid: [')
    assert status["message"].endswith("]")
    by_field = {c["field"]: c["message"] for c in causes}
    assert by_field["metadata.name"].startswith('Invalid value: "Bad_Name": RayCluster name')
    assert by_field["spec.workerGroupSpecs[0].minReplicas"].startswith("Invalid value: 5: ")
    assert by_field["spec.workerGroupSpecs[1].groupName"] == (
        'Invalid value: "workers": worker group names must be unique'
    )


def test_single_error_message_has_no_brackets() -> None:
    obj = rayjob("x" * 48)
    response = _response(review(RAYJOB_WEBHOOK, admission_review(RAYJOB_WEBHOOK, obj)))
    status = response["status"]
    assert len(status["details"]["causes"]) == 1
    assert status["message"] == (
        f'RayJob.ray.io "{"x" * 48}" is invalid: metadata.name: Invalid value: "{"x" * 48}": '
        "The RayJob metadata is invalid: RayJob name should be no more than 47 characters"
    )


def test_rayjob_denial_covers_spec_errors() -> None:
    obj = rayjob("9job")
    obj["spec"].update(suspend=True, ttlSecondsAfterFinished=-5, activeDeadlineSeconds=0)
    expected = validate_rayjob(obj)
    response = _response(review(RAYJOB_WEBHOOK, admission_review(RAYJOB_WEBHOOK, obj)))
    fields = [c["field"] for c in response["status"]["details"]["causes"]]
    assert fields == [e.path for e in expected]
    assert "metadata.name" in fields
    assert "spec.activeDeadlineSeconds" in fields
    assert len(fields) >= 4


def test_rayservice_denial_covers_annotation_and_spec_errors() -> None:
    obj = rayservice()
    obj["metadata"]["annotations"] = {"ray.io/initializing-timeout": "soon"}
    obj["spec"]["upgradeStrategy"] = {"type": "Sideways"}
    obj["spec"]["rayClusterDeletionDelaySeconds"] = -1
    expected = validate_rayservice(obj)
    response = _response(review(RAYSERVICE_WEBHOOK, admission_review(RAYSERVICE_WEBHOOK, obj)))
    causes = response["status"]["details"]["causes"]
    assert [c["field"] for c in causes] == [e.path for e in expected]
    by_field = {c["field"]: c["message"] for c in causes}
    assert by_field["metadata.annotations[ray.io/initializing-timeout]"].startswith(
        'Invalid value: "soon": '
    )
    assert by_field["spec.rayClusterDeletionDelaySeconds"].startswith("Invalid value: -1: ")


def test_update_runs_transition_rules_too() -> None:
    old = raycluster()
    old["spec"]["managedBy"] = "ray.io/kuberay-operator"
    new = copy.deepcopy(old)
    new["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    body = admission_review(RAYCLUSTER_WEBHOOK, new, operation="UPDATE", old=old)
    response = _response(review(RAYCLUSTER_WEBHOOK, body))
    assert response["allowed"] is False
    causes = response["status"]["details"]["causes"]
    assert causes[0]["field"] == "spec.managedBy"
    assert "immutable" in causes[0]["message"]
    # the same object as a CREATE is fine
    create = _response(review(RAYCLUSTER_WEBHOOK, admission_review(RAYCLUSTER_WEBHOOK, new)))
    assert create["allowed"] is True


def test_update_of_object_being_deleted_is_allowed() -> None:
    old = _bad_cluster()
    new = copy.deepcopy(old)
    new["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    new["metadata"]["finalizers"] = []
    body = admission_review(RAYCLUSTER_WEBHOOK, new, operation="UPDATE", old=old)
    assert _response(review(RAYCLUSTER_WEBHOOK, body))["allowed"] is True


def test_status_errors_do_not_block() -> None:
    obj = raycluster()
    obj["status"] = {
        "conditions": [
            {"type": "RayClusterSuspending", "status": "True"},
            {"type": "RayClusterSuspended", "status": "True"},
        ]
    }
    assert any(e.source == "status" for e in validate_raycluster(obj))
    body = admission_review(RAYCLUSTER_WEBHOOK, obj, operation="UPDATE", old=obj)
    assert _response(review(RAYCLUSTER_WEBHOOK, body))["allowed"] is True


def test_structural_errors_are_reported() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = "three"
    response = _response(review(RAYCLUSTER_WEBHOOK, admission_review(RAYCLUSTER_WEBHOOK, obj)))
    assert response["allowed"] is False
    fields = [c["field"] for c in response["status"]["details"]["causes"]]
    assert "spec.workerGroupSpecs[0].replicas" in fields


def test_gates_are_honoured() -> None:
    obj = raycluster()
    obj["spec"]["networkPolicy"] = {"mode": "DenyAllIngress"}
    body = admission_review(RAYCLUSTER_WEBHOOK, obj)
    assert _response(review(RAYCLUSTER_WEBHOOK, body))["allowed"] is False
    on = review(RAYCLUSTER_WEBHOOK, body, gates={"RayClusterNetworkPolicy": True})
    assert _response(on)["allowed"] is True
    by_callable = review(RAYCLUSTER_WEBHOOK, body, gates=lambda n: n == "RayClusterNetworkPolicy")
    assert _response(by_callable)["allowed"] is True


def test_raycluster_warnings_are_returned_when_allowed() -> None:
    obj = raycluster()
    obj["spec"]["enableInTreeAutoscaling"] = True
    obj["spec"]["autoscalerOptions"] = {"version": "v1"}
    obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Always"
    response = _response(review(RAYCLUSTER_WEBHOOK, admission_review(RAYCLUSTER_WEBHOOK, obj)))
    assert response["allowed"] is True
    assert response["warnings"] and "workers" in response["warnings"][0]


# --- KubeRay's own rule set -----------------------------------------------------------------
def test_kuberay_rules_report_what_kuberay_reports() -> None:
    obj = _bad_cluster()
    response = _response(
        review(RAYCLUSTER_WEBHOOK, admission_review(RAYCLUSTER_WEBHOOK, obj), rules="kuberay")
    )
    causes = response["status"]["details"]["causes"]
    assert [c["field"] for c in causes] == ["metadata.name", "spec.workerGroupSpecs[1]"]
    assert causes[1]["message"].startswith('Invalid value: {"groupName":"workers"')
    assert causes[1]["message"].endswith(": worker group names must be unique")


def test_kuberay_rules_ignore_spec_errors() -> None:
    obj = rayjob()
    obj["spec"]["activeDeadlineSeconds"] = 0
    body = admission_review(RAYJOB_WEBHOOK, obj)
    assert _response(review(RAYJOB_WEBHOOK, body))["allowed"] is False
    assert _response(review(RAYJOB_WEBHOOK, body, rules="kuberay"))["allowed"] is True
    svc = rayservice()
    svc["metadata"]["annotations"] = {"ray.io/initializing-timeout": "-3"}
    body = admission_review(RAYSERVICE_WEBHOOK, svc)
    response = _response(review(RAYSERVICE_WEBHOOK, body, rules="kuberay"))
    assert [c["field"] for c in response["status"]["details"]["causes"]] == ["metadata.name"]


# --- malformed ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        "review",
        {"apiVersion": "v1", "kind": "Pod"},
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"},
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}},
    ],
    ids=["null", "list", "string", "not-a-review", "no-request", "no-uid"],
)
def test_malformed_reviews_are_bad_requests(body: Any) -> None:
    with pytest.raises(BadRequest):
        review(RAYCLUSTER_WEBHOOK, body)


def test_missing_object_or_old_object_is_a_bad_request() -> None:
    with pytest.raises(BadRequest) as info:
        review(RAYJOB_WEBHOOK, admission_review(RAYJOB_WEBHOOK, None))
    assert info.value.uid == "705ab4f5-6393-11e8-b7cc-42010a800002"
    with pytest.raises(BadRequest, match="oldObject"):
        review(RAYJOB_WEBHOOK, admission_review(RAYJOB_WEBHOOK, rayjob(), operation="UPDATE"))


def test_wrong_kind_for_path_is_a_bad_request() -> None:
    body = admission_review(RAYJOB_WEBHOOK, rayjob())
    with pytest.raises(BadRequest, match=r"validates ray\.io/v1 RayService"):
        review(RAYSERVICE_WEBHOOK, body)


# --- helpers ------------------------------------------------------------------------------
def test_lookup_path() -> None:
    obj = {
        "metadata": {"annotations": {"ray.io/ft-enabled": "true"}},
        "spec": {"groups": [{"env": [{"name": "A"}]}]},
    }
    assert lookup_path(obj, "metadata.annotations[ray.io/ft-enabled]") == "true"
    assert lookup_path(obj, "spec.groups[0].env[0].name") == "A"
    assert lookup_path(obj, "spec.groups[3].env") is None
    assert lookup_path(obj, "spec.missing.deeper") is None
    assert lookup_path(obj, "spec.groups.name") is None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (-1, "-1"),
        (0.5, "0.5"),
        ('a"b\n', '"a\\"b\\n"'),
        ({"a": [1, "x"]}, '{"a":[1,"x"]}'),
    ],
)
def test_format_value(value: Any, text: str) -> None:
    assert format_value(value) == text
