"""Decoding the dashboard's answers the way KubeRay's Go structs do."""

from __future__ import annotations

import pytest

from kuberay.controllers.dashboard import JobInfo, ServeDetails


def test_job_info_ignores_unknown_fields_and_fills_zero_values() -> None:
    info = JobInfo.from_json(
        {"submission_id": "s", "status": "RUNNING", "driver_info": {"id": "01"}, "new": 1}
    )
    assert (info.submission_id, info.status, info.message, info.entrypoint) == (
        "s",
        "RUNNING",
        "",
        "",
    )
    assert (info.job_id, info.start_time, info.end_time, info.metadata) == (None, None, None, None)


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"status": 3},
        {"start_time": "yesterday"},
        {"end_time": -1},
        {"end_time": 1.5},
        {"start_time": True},
        {"metadata": {"k": 1}},
        {"runtime_env": ["pip"]},
    ],
)
def test_job_info_rejects_wrong_types(body: object) -> None:
    with pytest.raises(ValueError):
        JobInfo.from_json(body)


def test_serve_details_readiness_rule() -> None:
    def details(*statuses: str) -> ServeDetails:
        return ServeDetails.from_json(
            {"applications": {f"a{i}": {"status": s} for i, s in enumerate(statuses)}}
        )

    assert not details().all_running  # no application is not ready
    assert not details("RUNNING", "DEPLOYING").all_running
    assert details("RUNNING", "RUNNING").all_running
    unnamed = ServeDetails.from_json({"applications": {"": {"name": "", "status": "RUNNING"}}})
    assert list(unnamed.applications) == [""]  # the caller maps "" to "default", as KubeRay
    assert ServeDetails.from_json({"applications": None}).applications == {}
    with pytest.raises(ValueError):
        ServeDetails.from_json({"applications": {"a": {"deployments": []}}})
