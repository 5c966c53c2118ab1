"""RayService status rules: conditions (KubeRay TestCalculateConditions), endpoint counting,
timeouts, the consistency check, and the words for a head pod that is not ready."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from kuberay.controllers.rayservice import status as S
from kuberay.controllers.rayservice.upgrade import (
    abandon_message,
    abandoned_hash,
    upgrade_overdue,
)

NOW = "2026-01-01T00:00:00Z"


def rs_with(status: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "rs", "annotations": annotations or {}}, "status": status}


def reasons(rs: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in rs["status"]["conditions"]}


CONDITIONS = [
    (
        "fresh",
        {},
        {"Ready": ("False", "Initializing"), "UpgradeInProgress": ("False", "Initializing")},
    ),
    (
        "endpoints",
        {"numServeEndpoints": 2, "activeServiceStatus": {"rayClusterName": "a"}},
        {
            "Ready": ("True", "NonZeroServeEndpoints"),
            "UpgradeInProgress": ("False", "NoPendingCluster"),
        },
    ),
    (
        "both clusters",
        {
            "numServeEndpoints": 1,
            "activeServiceStatus": {"rayClusterName": "a"},
            "pendingServiceStatus": {"rayClusterName": "b"},
        },
        {
            "Ready": ("True", "NonZeroServeEndpoints"),
            "UpgradeInProgress": ("True", "BothActivePendingClustersExist"),
        },
    ),
]


@pytest.mark.parametrize(
    ("status", "expected"), [c[1:] for c in CONDITIONS], ids=[c[0] for c in CONDITIONS]
)
def test_conditions(status: dict[str, Any], expected: dict[str, tuple[str, str]]) -> None:
    rs = rs_with(dict(status))
    S.calculate_conditions(rs, NOW)
    assert reasons(rs) == expected
    assert all(c["observedGeneration"] == 0 for c in rs["status"]["conditions"])


def test_ready_drops_to_zero_endpoints_then_no_active_cluster() -> None:
    rs = rs_with({"numServeEndpoints": 1, "activeServiceStatus": {"rayClusterName": "a"}})
    S.calculate_conditions(rs, NOW)
    rs["status"]["numServeEndpoints"] = 0
    rs["status"]["activeServiceStatus"] = {}
    S.calculate_conditions(rs, NOW)
    assert reasons(rs) == {
        "Ready": ("False", "ZeroServeEndpoints"),
        "UpgradeInProgress": ("Unknown", "NoActiveCluster"),  # RS-25
    }


def test_endpoints_counted_once_per_ready_pod() -> None:
    slices = [
        {
            "endpoints": [
                {"conditions": {"ready": True}, "targetRef": {"uid": "a"}},
                {"conditions": {"ready": False}, "targetRef": {"uid": "b"}},
                {"conditions": {"ready": True}},
            ]
        },
        {"endpoints": [{"conditions": {"ready": True}, "targetRef": {"uid": "a"}}]},
    ]
    assert S.count_serve_endpoints(slices) == 1


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("5s", 5.0),
        ("1m30s", 90.0),
        ("1h", 3600.0),
        ("45", 45.0),
        ("0", None),
        ("-3", None),
        ("0s", None),
        ("-5m", None),
        ("abc", None),
        ("", None),
        (None, None),
        ("1.5s", 1.5),
    ],
)
def test_timeouts_parse_as_kuberay_does(raw: str | None, seconds: float | None) -> None:
    assert S.parse_timeout(raw) == seconds


@pytest.mark.parametrize(
    ("seconds", "text"), [(5, "5s"), (90, "1m30s"), (3600, "1h0m0s"), (2.5, "2.5s")]
)
def test_go_duration(seconds: float, text: str) -> None:
    assert S.go_duration(seconds) == text


def test_initializing_timeout_counts_from_the_ready_transition() -> None:
    rs = rs_with({}, {"ray.io/initializing-timeout": "10s"})
    S.calculate_conditions(rs, NOW)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert S.initializing_timed_out(rs, start + dt.timedelta(seconds=9)) is None
    assert S.initializing_timed_out(rs, start + dt.timedelta(seconds=10)) == 10.0
    assert S.initializing_timed_out(rs_with({}), start + dt.timedelta(days=1)) is None


def test_status_consistency_ignores_cluster_status_but_not_apps() -> None:
    old = {"activeServiceStatus": {"rayClusterName": "a", "rayClusterStatus": {"state": "ready"}}}
    new = {"activeServiceStatus": {"rayClusterName": "a", "rayClusterStatus": {"state": "x"}}}
    assert not S.status_changed(old, new, incremental=False)
    new["activeServiceStatus"]["applicationStatuses"] = {"app": {"status": "RUNNING"}}
    assert S.status_changed(old, new, incremental=False)
    assert S.status_changed({}, {"numServeEndpoints": 1}, incremental=False)


POD_PROBLEMS = [
    (None, "does not exist"),
    (
        {
            "metadata": {"name": "h"},
            "status": {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
                    }
                ],
            },
        },
        "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
    ),
    (
        {
            "metadata": {"name": "h"},
            "status": {
                "phase": "Pending",
                "containerStatuses": [
                    {
                        "name": "ray-head",
                        "state": {
                            "waiting": {
                                "reason": "ImagePullBackOff",
                                "message": "Back-off pulling image",
                            }
                        },
                    }
                ],
            },
        },
        "container ray-head is waiting: ImagePullBackOff: Back-off pulling image",
    ),
    (
        {
            "metadata": {"name": "h"},
            "status": {
                "phase": "Running",
                "containerStatuses": [
                    {
                        "name": "ray-head",
                        "ready": False,
                        "state": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
                    }
                ],
            },
        },
        "terminated: OOMKilled (exit code 137)",
    ),
    ({"metadata": {"name": "h"}, "status": {"phase": "Running"}}, "Running but not Ready"),
]


@pytest.mark.parametrize(("pod", "words"), POD_PROBLEMS)
def test_head_pod_problem_names_the_cause(pod: dict[str, Any] | None, words: str) -> None:
    assert words in S.head_pod_problem(pod)


def test_upgrade_deadline_and_abandoned_hash() -> None:
    rs = rs_with(
        {
            "activeServiceStatus": {"rayClusterName": "a"},
            "pendingServiceStatus": {"rayClusterName": "b"},
        },
        {"ray.io/upgrade-timeout": "1m"},
    )
    S.calculate_conditions(rs, NOW)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert upgrade_overdue(rs, start + dt.timedelta(seconds=59)) is None
    assert upgrade_overdue(rs, start + dt.timedelta(seconds=61)) == 61.0
    assert upgrade_overdue(rs_with(rs["status"]), start + dt.timedelta(days=1)) is None
    message = abandon_message("b", 61, "0123456789ABCDEFGHIJKLMNOPQRSTUV", "head Pod h is Pending")
    S.set_cond(rs, S.UPGRADE_ABANDONED, True, "UpgradeTimeout", message, NOW)
    assert abandoned_hash(rs) == "0123456789ABCDEFGHIJKLMNOPQRSTUV"
