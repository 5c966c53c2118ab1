"""RayCronJob validation rules (kuberay/api/v1/validation/raycronjob.py): each with a
failing example (path + message asserted) and a passing near-miss."""

from __future__ import annotations

import pytest

from kuberay.api.v1 import validate_raycronjob
from tests.unit.api.kuberay_api_testutil import raycronjob
from tests.unit.api.validation.validation_testlib import Case, all_of, check_case, put

RAYCRONJOB_CASES = [
    Case(
        "name-length",
        put("metadata", "name", "c" * 37),
        "metadata.name",
        "RayCronJob name should be no more than 36 characters",
        put("metadata", "name", "c" * 36),
    ),
    Case(
        "schedule-tz",
        put("spec", "schedule", "TZ=UTC 0 * * * *"),
        "spec.schedule",
        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        put("spec", "schedule", "0 * * * *"),
    ),
    Case(
        "schedule-invalid",
        put("spec", "schedule", "invalid"),
        "spec.schedule",
        "invalid cron schedule: expected exactly 5 fields, found 1: [invalid]",
        put("spec", "schedule", "@daily"),
    ),
    Case(
        "schedule-out-of-range",
        put("spec", "schedule", "0 0 * * 7"),
        "spec.schedule",
        "invalid cron schedule: end of range (7) above maximum (6): 7",
        put("spec", "schedule", "0 0 ? jan-mar sun,sat"),
    ),
    Case(
        "time-zone-empty",
        put("spec", "timeZone", ""),
        "spec.timeZone",
        "timeZone must not be empty string, omit the field to use the local time zone of the "
        "KubeRay operator",
        put("spec", "timeZone", "UTC"),
    ),
    Case(
        "time-zone-empty-crd",
        put("spec", "timeZone", ""),
        "spec.timeZone",
        "spec.timeZone in body should be at least 1 chars long",
        source="crd",
    ),
    Case(
        "time-zone-unknown",
        put("spec", "timeZone", "Mars/Olympus"),
        "spec.timeZone",
        "invalid time zone: unknown time zone Mars/Olympus",
        put("spec", "timeZone", "America/Los_Angeles"),
    ),
    Case(
        "job-template",
        put("spec", "jobTemplate", "suspend", True),
        "spec.jobTemplate.suspend",
        "invalid RayJob template: The RayJob spec is invalid: a RayJob with "
        "shutdownAfterJobFinishes set to false is not allowed to be suspended",
        all_of(
            put("spec", "jobTemplate", "suspend", True),
            put("spec", "jobTemplate", "shutdownAfterJobFinishes", True),
        ),
    ),
    Case(
        "job-template-cluster",
        put("spec", "jobTemplate", "rayClusterSpec", "workerGroupSpecs", 0, "maxReplicas", -1),
        "spec.jobTemplate.rayClusterSpec.workerGroupSpecs[0].maxReplicas",
        "invalid RayJob template: The RayJob spec is invalid: worker group workers has negative "
        "maxReplicas -1",
    ),
    Case(
        "crd-job-template-cel",
        put("spec", "jobTemplate", "deletionStrategy", {"onSuccess": {"policy": "DeleteSelf"}}),
        "spec.jobTemplate.deletionStrategy",
        "deletionStrategy requires either BOTH onSuccess and onFailure",
        source="crd",
    ),
]


@pytest.mark.parametrize("case", RAYCRONJOB_CASES, ids=lambda c: c.id)
def test_raycronjob_rule(case: Case) -> None:
    check_case(validate_raycronjob, raycronjob(), case)
