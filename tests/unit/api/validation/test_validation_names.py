"""Names written in a spec that the operator later puts in a request are checked with the
rule of the object they name (Trust boundaries part 1, item 2): the error names the field,
shows a Go-quoted, shortened value, and valid names pass."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.api.v1.validation import (
    FieldError,
    validate_raycluster,
    validate_raycronjob,
    validate_rayjob,
    validate_rayservice,
)
from tests.unit.api.kuberay_api_testutil import (
    cluster_spec,
    raycluster,
    raycronjob,
    rayjob,
    rayservice,
)

SMUGGLE = (
    "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api/v1/namespaces/other/configmaps/canary HTTP/1.1\r\n"
    "X-Pad: y"
)
BAD = [SMUGGLE, "..", "a/b", "a%2fb", "UPPER", "a b", "a\x00b", "n" * 65536]


def _errors_at(errors: list[FieldError], path: str) -> list[FieldError]:
    return [e for e in errors if e.path == path]


def _token(secret: str) -> dict[str, Any]:
    return {"authOptions": {"mode": "token", "secretName": secret}}


def _head_service(name: str) -> dict[str, Any]:
    spec = cluster_spec()
    spec["headGroupSpec"]["headService"] = {"metadata": {"name": name}}
    return spec


@pytest.mark.parametrize("bad", BAD, ids=lambda v: repr(v[:20]))
def test_a_raycluster_secret_name_or_head_service_name_that_is_no_name_is_a_spec_error(
    bad: str,
) -> None:
    errors = validate_raycluster(raycluster(**_token(bad)))
    (error,) = _errors_at(errors, "spec.authOptions.secretName")
    assert error.source == "spec"
    assert "RFC 1123 subdomain" in error.message or "no more than 253" in error.message
    assert "\r" not in error.message and "\x00" not in error.message
    assert len(error.message) < 1000

    cluster = raycluster()
    cluster["spec"] = _head_service(bad)
    errors = validate_raycluster(cluster)
    (error,) = _errors_at(errors, "spec.headGroupSpec.headService.metadata.name")
    assert error.source == "spec"
    assert "DNS-1035 label" in error.message or "no more than 63" in error.message


def test_the_hostile_rayjob_is_refused_naming_authoptions_secretname() -> None:
    errors = validate_rayjob(rayjob(rayClusterSpec=cluster_spec(**_token(SMUGGLE))))
    (error,) = _errors_at(errors, "spec.rayClusterSpec.authOptions.secretName")
    assert error.source == "spec"
    assert error.message.startswith("The RayJob spec is invalid: Invalid value: ")
    assert '"x HTTP/1.1\\r\\nHost: a' in error.message  # Go-quoted, not raw
    assert str(error).startswith("spec.rayClusterSpec.authOptions.secretName: ")


def test_rayjob_cluster_selector_and_job_id_must_be_usable_in_requests() -> None:
    job = rayjob(clusterSelector={"ray.io/cluster": "../other"}, jobId="..")
    del job["spec"]["rayClusterSpec"]
    paths = {e.path for e in validate_rayjob(job)}
    assert {"spec.clusterSelector[ray.io/cluster]", "spec.jobId"} <= paths
    job["spec"].update(clusterSelector={"ray.io/cluster": "my-cluster"}, jobId="my-job_1")
    assert validate_rayjob(job) == []


def test_rayservice_and_raycronjob_names_are_checked_too() -> None:
    service = rayservice(rayClusterConfig=cluster_spec(**_token("a/b")))
    service["spec"]["serveService"] = {"metadata": {"name": "Serve Svc"}}
    paths = {e.path for e in validate_rayservice(service)}
    assert {
        "spec.rayClusterConfig.authOptions.secretName",
        "spec.serveService.metadata.name",
    } <= paths
    cron = raycronjob()
    cron["spec"]["jobTemplate"]["rayClusterSpec"] = cluster_spec(**_token(".."))
    paths = {e.path for e in validate_raycronjob(cron)}
    assert "spec.jobTemplate.rayClusterSpec.authOptions.secretName" in paths


def test_valid_names_pass() -> None:
    assert validate_raycluster(raycluster(**_token("my-token.v1"))) == []
    cluster = raycluster()
    cluster["spec"] = _head_service("my-head-svc")
    assert validate_raycluster(cluster) == []
